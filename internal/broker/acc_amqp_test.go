package broker_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/faults/faultproxy"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// accOtherAMQPURL is the AMQP URL of a broker of another cluster than the
// test broker's ($RABBITMQ_OTHER_AMQP_URL; make testacc names the other
// local version's), for the tests of an AMQP endpoint that reaches the
// wrong broker. Those tests skip when it does not answer.
var accOtherAMQPURL = os.Getenv("RABBITMQ_OTHER_AMQP_URL")

// amqpProxy starts a proxy to the AMQP listener of amqpURL until the test
// ends.
func amqpProxy(t *testing.T, amqpURL string) *faultproxy.Proxy {
	t.Helper()
	proxy, err := faultproxy.Start(mustHost(t, amqpURL), faultproxy.Options{AMQP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	return proxy
}

// proxiedClient is a client of the test broker's management API whose
// AMQP endpoint is proxy.
func proxiedClient(t *testing.T, proxy *faultproxy.Proxy, timeout time.Duration, log *logged) *broker.Client {
	t.Helper()
	accClient(t)
	client, err := broker.New(broker.Config{Endpoint: accEndpoint, Username: "guest", Password: "guest",
		AMQPEndpoint: "amqp://" + proxy.Addr() + "/", Timeout: timeout, Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// otherBrokerChannel is a channel to the other broker, or skips the test.
func otherBrokerChannel(t *testing.T) *amqp.Channel {
	t.Helper()
	if accOtherAMQPURL == "" {
		t.Skip("RABBITMQ_OTHER_AMQP_URL names no broker of another cluster")
	}
	conn, err := amqp.Dial(accOtherAMQPURL)
	if err != nil {
		t.Skipf("the other broker at RABBITMQ_OTHER_AMQP_URL does not answer: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestAccAMQPEndpointOfAnotherCluster: amqp_endpoint is a proxy that, as
// a load balancer in front of two clusters, first reaches the test broker
// (a connection through it is proven), then a broker of another cluster
// that holds an empty quorum queue of the same name, while the test
// broker's queue holds a message its statistics do not count yet. The
// other broker's 0 is not believed: the deletion is refused and the
// message stays. (The local 4.3 and 4.0 brokers' clusters have the same
// name: only the nonce tells them apart.) CI runs it with the management
// API on 4.3 and the AMQP side on 4.0, and the other way round.
func TestAccAMQPEndpointOfAnotherCluster(t *testing.T) {
	accClient(t)
	other := otherBrokerChannel(t)
	t.Parallel()
	proxy := amqpProxy(t, accAMQPURL)
	queue := quorumQueue(uniqueName(t))
	if _, err := other.QueueDeclare(queue.Name, true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatalf("declaring %s on the other broker: %v", queue.Name, err)
	}
	t.Cleanup(func() { _, _ = other.QueueDelete(queue.Name, false, false, false) })
	sameCluster := proxiedClient(t, proxy, 30*time.Second, &logged{})
	createObjects(t, sameCluster, nil, []topology.Queue{queue}, nil)
	if _, err := broker.DeclarePassive(t.Context(), sameCluster, accVHost, queue.Name); err != nil {
		t.Fatalf("DeclarePassive() through the proxy to the test broker: %v; want its count, the connection proven", err)
	}

	proxy.Switch(mustHost(t, accOtherAMQPURL))
	client := proxiedClient(t, proxy, 30*time.Second, &logged{})
	ch := amqpChannel(t)
	publish(t, ch, "", queue.Name)
	if counted, err := client.QueueMessages(t.Context(), accVHost, []string{queue.Name}); err == nil && counted[queue.Name] > 0 {
		t.Log("the statistics count the message already: the deletion's refusal proves less")
	}
	err := client.Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{})
	var notEmpty *broker.QueueNotEmptyError
	if !errors.As(err, &notEmpty) && !broker.IsUncounted(err) {
		t.Errorf("deleting %s, which holds a message, with amqp_endpoint at another cluster: %v; want it refused", queue.Name, err)
	}
	takeMessage(t, ch, queue.Name)
	if _, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, queue.Name); err != nil || trusted {
		t.Errorf("LeaderCount() through another cluster: trusted %v, %v; want untrusted", trusted, err)
	}
	if reason := broker.AMQPUnproven(client, accVHost); reason == nil {
		t.Error("AMQPUnproven() = nil, want why the connection is not believed")
	} else {
		t.Logf("why: %v", reason)
	}
}

// TestAccAMQPProofByTheUsersConnections: a connection straight to the test
// broker is proven by the listing of the user's own connections, which
// has it from the moment it opens, without waiting for the listing of
// every connection (on 4.3, that one shows it only once its statistics
// are collected); its count is then believed.
func TestAccAMQPProofByTheUsersConnections(t *testing.T) {
	accClient(t)
	t.Parallel()
	management, err := faultproxy.Start(mustHost(t, accEndpoint), faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = management.Close() })
	var own, every atomic.Int32
	management.Inspect(requestsSeen("GET /api/connections/username/", &own, requestsSeen("GET /api/connections?", &every, nil)))
	log := &logged{}
	client, err := broker.New(broker.Config{Endpoint: "http://" + management.Addr(), Username: "guest", Password: "guest",
		AMQPEndpoint: "amqp://" + mustHost(t, accAMQPURL) + "/", Timeout: 30 * time.Second, Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	queue := quorumQueue(uniqueName(t))
	createObjects(t, client, nil, []topology.Queue{queue}, nil)
	ch := amqpChannel(t)
	publish(t, ch, "", queue.Name)
	if count, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, queue.Name); err != nil || !trusted || count != 1 {
		t.Fatalf("LeaderCount() = %d, trusted %v, %v; want 1, trusted\n%s", count, trusted, err, log.text())
	}
	if own.Load() == 0 || every.Load() != 0 {
		t.Errorf("the proof listed the user's connections %d times and every connection %d times; want the first alone",
			own.Load(), every.Load())
	}
	takeMessage(t, ch, queue.Name)
}

// TestAccAMQPHungPeer: the proxy, between the client and the test broker,
// hangs the AMQP connection after it was proven, heartbeats going: a check
// costs its timeout, then counts by the statistics; a cancelled check
// returns; a deletion is refused, never hangs.
func TestAccAMQPHungPeer(t *testing.T) {
	accClient(t)
	t.Parallel()
	proxy := amqpProxy(t, accAMQPURL)
	log := &logged{}
	client := proxiedClient(t, proxy, 3*time.Second, log)
	queue := quorumQueue(uniqueName(t))
	createObjects(t, client, nil, []topology.Queue{queue}, nil)
	ch := amqpChannel(t)
	publish(t, ch, "", queue.Name)

	if count, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, queue.Name); err != nil || !trusted || count != 1 {
		t.Fatalf("LeaderCount() before the hang = %d, trusted %v, %v; want 1, trusted\n%s", count, trusted, err, log.text())
	}
	proxy.Hang(true)
	bounded(t, "LeaderCount of a hung peer", time.Minute, func() error {
		if _, trusted, err := broker.LeaderCount(t.Context(), client, accVHost, queue.Name); err != nil || trusted {
			return fmt.Errorf("trusted %v, %w; want untrusted, no error", trusted, err)
		}
		return nil
	})
	bounded(t, "HeldMessages beside a hung peer", 2*time.Minute, func() error {
		// Statistics alone count it: the queue may hold it (an uncounted error).
		if held, err := client.HeldMessages(t.Context(), accVHost, []string{queue.Name}); err != nil && !broker.IsUncounted(err) || held[queue.Name] != 1 {
			return fmt.Errorf("= %v, %w; want 1, by the statistics", held, err)
		}
		return nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	bounded(t, "a cancelled LeaderCount beside a hung peer", time.Minute, func() error {
		if _, _, err := broker.LeaderCount(ctx, client, accVHost, queue.Name); !errors.Is(err, context.Canceled) {
			return fmt.Errorf("%w, want context.Canceled", err)
		}
		return nil
	})
	bounded(t, "a deletion beside a hung peer", 2*time.Minute, func() error {
		err := client.Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{})
		if notEmpty := new(broker.QueueNotEmptyError); !errors.As(err, &notEmpty) && !broker.IsUncounted(err) {
			return fmt.Errorf("%w; want it refused: the queue holds a message", err)
		}
		return nil
	})
	takeMessage(t, ch, queue.Name)
}

// takeMessage takes the message that queue must still hold: a peek's
// return may take a moment to make it ready again.
func takeMessage(t *testing.T, ch *amqp.Channel, queue string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, ok, err := ch.Get(queue, true)
		switch {
		case err != nil:
			t.Fatalf("taking the message of %s: %v", queue, err)
		case ok:
			return
		case time.Now().After(deadline):
			t.Fatalf("%s holds no message: the one published was lost", queue)
		}
	}
}

// TestAccDeclarationsCancelledAmongMany: 64 passive declarations at once
// through one connection, slowed by the proxy; 8 are cancelled in flight,
// and the other 56 answer.
func TestAccDeclarationsCancelledAmongMany(t *testing.T) {
	accClient(t)
	t.Parallel()
	proxy, err := faultproxy.Start(mustHost(t, accAMQPURL), faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	client := proxiedClient(t, proxy, 30*time.Second, &logged{})
	queue := quorumQueue(uniqueName(t))
	createObjects(t, client, nil, []topology.Queue{queue}, nil)
	publish(t, amqpChannel(t), "", queue.Name)
	if ready, err := broker.DeclarePassive(t.Context(), client, accVHost, queue.Name); err != nil || ready != 1 {
		t.Fatalf("DeclarePassive() = %d, %v; want 1", ready, err)
	}
	proxy.Delay(100 * time.Millisecond) // each declaration crosses it four times
	const declarations, cancelled = 64, 8
	errs := make([]error, declarations)
	var wg sync.WaitGroup
	for i := range declarations {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if i < cancelled {
			time.AfterFunc(50*time.Millisecond, cancel)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ready int64
			if ready, errs[i] = broker.DeclarePassive(ctx, client, accVHost, queue.Name); errs[i] == nil && ready != 1 {
				errs[i] = fmt.Errorf("counted %d, want 1", ready)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case i < cancelled && !errors.Is(err, context.Canceled):
			t.Errorf("declaration %d, cancelled in flight: %v, want context.Canceled", i, err)
		case i >= cancelled && err != nil:
			t.Errorf("declaration %d, not cancelled: %v", i, err)
		}
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
