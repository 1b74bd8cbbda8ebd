package broker_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

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

// TestAccLeaderCountByDeclaredLog: where a leader's 0 of an at-least-once
// queue needs messages_dlx (4.0–4.2), a queue's log as the declaration
// that created it left it stands for that, in this run and in a later one
// told the mark, so a new queue is counted without its first statistics;
// a message that came and waits for its dead-letter confirm moves the log,
// and its 0 is not trusted. Where no mark is needed none is taken.
func TestAccLeaderCountByDeclaredLog(t *testing.T) {
	log := &logged{}
	client := accLoggingClient(t, log)
	t.Parallel()
	queue := quorumQueue(uniqueName(t) + ".at-least-once")
	queue.Arguments.DeadLetterStrategy = topology.AtLeastOnce
	queue.Arguments.Overflow = "reject-publish"
	queue.Arguments.DeadLetterExchange = "amq.topic" // which routes the message nowhere: it waits for a confirm
	createObjects(t, client, nil, []topology.Queue{queue}, nil)
	marks := client.DeclaredMarks(accVHost, []string{queue.Name})
	peeks, err := broker.PeeksAtQuorumQueues(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}
	if version := brokerVersion(t, client); peeks || strings.HasPrefix(version, "3.") {
		if len(marks) > 0 {
			t.Errorf("%s: DeclaredMarks() = %v, want none where a count needs no messages_dlx", version, marks)
		}
		return
	}
	if len(marks) != 1 {
		t.Fatalf("DeclaredMarks() = %v, want the new queue's", marks)
	}
	untouched := `"untouched":true`
	if got, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, queue.Name); err != nil || got != 0 || !trusted ||
		!strings.Contains(log.text(), untouched) {
		t.Errorf("LeaderCount(a new queue) = %d, trusted %v, %v; want 0, trusted by its log\n%s", got, trusted, err, log.text())
	}

	ch := amqpChannel(t)
	confirmation, err := ch.PublishWithDeferredConfirmWithContext(t.Context(), "", queue.Name, true, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Expiration: "10", Body: []byte("dead-lettered")})
	if err != nil {
		t.Fatal(err)
	}
	if acked, err := confirmation.WaitContext(t.Context()); err != nil || !acked {
		t.Fatalf("publishing: acked %v, %v", acked, err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		counts, err := client.QueueMessages(t.Context(), accVHost, []string{queue.Name})
		if err != nil {
			t.Fatal(err)
		}
		declared, err := ch.QueueDeclarePassive(queue.Name, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if counts[queue.Name] == 1 && declared.Messages == 0 {
			break // expired, and waiting in messages_dlx
		}
		if time.Now().After(deadline) {
			t.Fatalf("the message never waited for its dead-letter confirm: statistics %v, ready %d", counts, declared.Messages)
		}
	}
	laterLog := &logged{}
	later := accLoggingClient(t, laterLog)
	later.RememberDeclared(accVHost, marks)
	if got, trusted, err := broker.LeaderCount(t.Context(), later, accVHost, queue.Name); err != nil || trusted ||
		strings.Contains(laterLog.text(), untouched) {
		t.Errorf("LeaderCount(a queue whose message waits for a confirm) = %d, trusted %v, %v; want untrusted\n%s",
			got, trusted, err, laterLog.text())
	}
}
