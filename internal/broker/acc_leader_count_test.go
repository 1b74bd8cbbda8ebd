package broker_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccLeaderCount checks the count a quorum queue's leader gives a
// passive declaration, on the test broker: a message is counted the moment
// it is confirmed, an empty queue's 0 is trusted on 4.x, and a 0 is not
// trusted where it may be RabbitMQ's answer in the leader's place (the
// queue's Ra server stopped), nor, with at-least-once dead-lettering,
// before statistics count no message waiting for a confirm.
func TestAccLeaderCount(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	ch := amqpChannel(t)
	base := uniqueName(t)
	held, empty, stopped := quorumQueue(base+".held"), quorumQueue(base+".empty"), quorumQueue(base+".stopped")
	atLeastOnce := quorumQueue(base + ".at-least-once")
	atLeastOnce.Arguments.DeadLetterStrategy = topology.AtLeastOnce
	atLeastOnce.Arguments.Overflow = "reject-publish"
	createObjects(t, client, nil, []topology.Queue{held, empty, stopped, atLeastOnce}, nil)
	version := brokerVersion(t, client)
	zeroTrusted := !strings.HasPrefix(version, "3.")

	publish(t, ch, "", held.Name)
	publish(t, ch, "", held.Name)
	if got, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, held.Name); err != nil || got != 2 || !trusted {
		t.Errorf("LeaderCount(a queue just given 2 messages) = %d, trusted %v, %v; want 2, trusted", got, trusted, err)
	}
	if got, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, empty.Name); err != nil || got != 0 || trusted != zeroTrusted {
		t.Errorf("LeaderCount(an empty queue) = %d, trusted %v, %v; want 0, trusted %v on %s", got, trusted, err, zeroTrusted, version)
	}
	// At-least-once: the leader's 0 leaves out messages waiting for their
	// target's confirm; it is trusted once statistics count none of those
	// (a new queue's first messages_dlx is waited for).
	if got, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, atLeastOnce.Name); err != nil || got != 0 || trusted != zeroTrusted {
		t.Errorf("LeaderCount(an empty at-least-once queue) = %d, trusted %v, %v; want 0, trusted %v", got, trusted, err, zeroTrusted)
	}

	// The Ra server stopped: the broker answers 0 for it at once.
	publish(t, ch, "", stopped.Name)
	rabbitmqctl, err := exec.LookPath("rabbitmqctl")
	if err != nil {
		t.Skip("rabbitmqctl is not on PATH (make testacc puts RABBITMQ_VERSION's first)")
	}
	server := `{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(<<"/">>,queue,<<"` + stopped.Name + `">>)), {N,Nd}=amqqueue:get_pid(Q), `
	if out, err := exec.Command(rabbitmqctl, "eval", server+`ra:stop_server(quorum_queues, {N,Nd}).`).CombinedOutput(); err != nil {
		t.Fatalf("stopping the queue's Ra server: %v: %s", err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command(rabbitmqctl, "eval", server+`ra:restart_server(quorum_queues, {N,Nd}).`).Run()
	})
	if got, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, stopped.Name); err != nil || trusted {
		t.Errorf("LeaderCount(a queue whose Ra server is stopped) = %d, trusted %v, %v; want untrusted (it holds 1)", got, trusted, err)
	}
}
