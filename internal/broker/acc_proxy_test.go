package broker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/faults/faultproxy"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The deletion's fault tests through faultproxy (issue 48, findings 2 and
// 4): the client under test reaches the test broker only through two
// proxies, one for the management API and one for AMQP, so that a test can
// hold back or leave unanswered the request that matters. What the tests
// check they read from the broker directly.

// proxied is a client of the test broker through fault proxies.
type proxied struct {
	client *broker.Client
	http   *faultproxy.Proxy // the management API's
	amqp   *faultproxy.Proxy
	log    *logged
}

// throughProxies starts the two proxies, until the test ends, and a client
// through them.
func throughProxies(t *testing.T) proxied {
	t.Helper()
	accClient(t)
	httpProxy, err := faultproxy.Start(mustHost(t, accEndpoint), faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = httpProxy.Close() })
	return proxied{http: httpProxy, amqp: amqpProxy(t, accAMQPURL)}.another(t)
}

// another is a client of its own, with its own log, through p's proxies.
// Its requests time out after a minute: a request the proxy leaves
// unanswered lasts until the test cancels it.
func (p proxied) another(t *testing.T) proxied {
	t.Helper()
	return p.timingOutAfter(t, time.Minute)
}

// timingOutAfter is another whose requests time out after timeout.
func (p proxied) timingOutAfter(t *testing.T, timeout time.Duration) proxied {
	t.Helper()
	p.log = &logged{}
	client, err := broker.New(broker.Config{Endpoint: "http://" + p.http.Addr(), Username: "guest", Password: "guest",
		AMQPEndpoint: "amqp://" + p.amqp.Addr() + "/", Timeout: timeout, Logf: p.log.logf})
	if err != nil {
		t.Fatal(err)
	}
	p.client = client
	return p
}

// requestsSeen is an Inspect function that counts in seen the requests
// whose first line starts with prefix, and leaves every verdict to next
// (nil: Forward).
func requestsSeen(prefix string, seen *atomic.Int32, next func(sent []byte) faultproxy.Verdict) func(sent []byte) faultproxy.Verdict {
	return func(sent []byte) faultproxy.Verdict {
		if bytes.HasPrefix(sent, []byte(prefix)) {
			seen.Add(1)
		}
		if next == nil {
			return faultproxy.Forward
		}
		return next(sent)
	}
}

// boundQueue declares queue, bound from two exchanges of its own by three
// bindings, until the test ends: the bindings that a deletion's check
// removes and must give back.
func boundQueue(t *testing.T, direct *broker.Client, queue topology.Queue) []topology.Binding {
	t.Helper()
	exchanges := []topology.Exchange{
		{Name: queue.Name + ".a", Type: topology.ExchangeTopic},
		{Name: queue.Name + ".b", Type: topology.ExchangeFanout},
	}
	bindings := []topology.Binding{
		{Source: exchanges[0].Name, Destination: queue.Name, DestinationType: topology.DestinationQueue, RoutingKey: "one.#"},
		{Source: exchanges[0].Name, Destination: queue.Name, DestinationType: topology.DestinationQueue, RoutingKey: "two.*"},
		{Source: exchanges[1].Name, Destination: queue.Name, DestinationType: topology.DestinationQueue},
	}
	createObjects(t, direct, exchanges, []topology.Queue{queue}, bindings)
	return bindings
}

// assertAllBound fails the test unless the broker has exactly bindings
// into their queue, besides the default exchange's.
func assertAllBound(t *testing.T, direct *broker.Client, bindings []topology.Binding) {
	t.Helper()
	var want, got []string
	for _, b := range bindings {
		want = append(want, b.Source+" "+b.RoutingKey)
	}
	listed, err := direct.QueueBindings(t.Context(), accVHost, bindings[0].Destination)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range listed {
		if b.Source != "" {
			got = append(got, b.Source+" "+b.RoutingKey)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("the bindings into %s (-want +on the broker):\n%s", bindings[0].Destination, diff)
	}
}

// consumer is a consumer of queue on the test broker, one message at a
// time, acknowledging by hand.
type consumer struct {
	ch         *amqp.Channel
	tag        string
	deliveries <-chan amqp.Delivery
}

func consume(t *testing.T, queue string) consumer {
	t.Helper()
	ch := amqpChannel(t)
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	c := consumer{ch: ch, tag: "proxy-test-" + queue}
	var err error
	if c.deliveries, err = ch.Consume(queue, c.tag, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c consumer) next(t *testing.T) amqp.Delivery {
	t.Helper()
	select {
	case d := <-c.deliveries:
		return d
	case <-time.After(time.Minute):
		t.Fatal("hung: no message was delivered to the consumer")
		return amqp.Delivery{}
	}
}

func deletion(queue *topology.Queue) []topology.Change {
	return []topology.Change{{Kind: topology.DeleteQueue, Queue: queue}}
}

// TestAccProxyDeletionKeepsUnacknowledgedMessages (finding 2, through the
// proxies): a consumer holds a queue's only message, delivered and not
// acknowledged. The deletion refuses, the queue keeps its bindings and the
// message (the consumer gets it again when it gives it back), and once the
// message is acknowledged the deletion goes through.
func TestAccProxyDeletionKeepsUnacknowledgedMessages(t *testing.T) {
	direct := accClient(t)
	t.Parallel()
	for name, queueType := range map[string]topology.QueueType{
		"classic": topology.QueueTypeClassic,
		"quorum":  topology.QueueTypeQuorum,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			queue := topology.Queue{Name: uniqueName(t), Arguments: topology.QueueArguments{QueueType: queueType}}
			bindings := boundQueue(t, direct, queue)
			p := throughProxies(t)
			publish(t, amqpChannel(t), bindings[0].Source, "one.k")
			c := consume(t, queue.Name)
			held := c.next(t)

			err := p.client.Apply(t.Context(), accVHost, deletion(&queue), broker.ApplyOptions{})
			var notEmpty *broker.QueueNotEmptyError
			if !errors.As(err, &notEmpty) && !broker.IsUncounted(err) {
				t.Fatalf("Apply(delete) error = %v, want a refusal: the consumer holds a message\n%s", err, p.log.text())
			}
			if !queueExists(t, queue.Name) {
				t.Fatal("the queue was deleted with a message its consumer had not acknowledged")
			}
			assertAllBound(t, direct, bindings)
			if err := held.Nack(false, true); err != nil {
				t.Fatal(err)
			}
			again := c.next(t) // the queue still had it
			if !again.Redelivered {
				t.Errorf("the consumer got a message that is not the one it gave back: %+v", again)
			}
			if err := again.Ack(false); err != nil {
				t.Fatal(err)
			}

			// The consumer stays: only statistics sampled after the check
			// began tell that it holds nothing now, and until they do the
			// deletion is refused.
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
				err = p.client.Apply(t.Context(), accVHost, deletion(&queue), broker.ApplyOptions{})
				if err == nil || time.Now().After(deadline) {
					break
				}
				t.Logf("not deleted yet: %v", err)
			}
			if err != nil {
				t.Fatalf("hung: the acknowledged queue was never deleted: %v", err)
			}
			if queueExists(t, queue.Name) {
				t.Error("Apply(delete) succeeded, but the queue is still there")
			}
		})
	}
}

// TestAccProxyCancelWhileUnbinding (finding 4, Ctrl-C while a binding's
// DELETE is in flight): the proxy forwards the check's second DELETE of a
// binding and keeps the broker's answer from the client; once the broker
// has deleted that binding, the deletion is cancelled. Every binding of
// the queue is on the broker again when Apply returns, and the queue is
// kept. A consumer makes the check unbind the queue: a classic queue in use,
// and on 4.3 a quorum queue, which is otherwise peeked at.
func TestAccProxyCancelWhileUnbinding(t *testing.T) {
	direct := accClient(t)
	t.Parallel()
	for name, queueType := range map[string]topology.QueueType{
		"classic": topology.QueueTypeClassic,
		"quorum":  topology.QueueTypeQuorum,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			queue := topology.Queue{Name: uniqueName(t), Arguments: topology.QueueArguments{QueueType: queueType}}
			bindings := boundQueue(t, direct, queue)
			consume(t, queue.Name)
			p := throughProxies(t)
			var unbinding atomic.Int32
			inFlight := make(chan struct{})
			p.http.Inspect(func(sent []byte) faultproxy.Verdict {
				if bytes.HasPrefix(sent, []byte("DELETE /api/bindings/")) && unbinding.Add(1) == 2 {
					close(inFlight)
					return faultproxy.ForwardUnanswered
				}
				return faultproxy.Forward
			})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			unbound := make(chan error, 1)
			go func() {
				select {
				case <-inFlight:
				case <-ctx.Done():
					unbound <- errors.New("the check never deleted a second binding")
					return
				}
				// The broker deleted it; only the client does not know.
				unbound <- awaitBindings(ctx, direct, queue.Name, len(bindings)-2)
				cancel()
			}()

			err := p.client.Apply(ctx, accVHost, deletion(&queue), broker.ApplyOptions{})
			if why := <-unbound; why != nil {
				t.Fatalf("%v; Apply returned %v\n%s", why, err, p.log.text())
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Apply(delete) error = %v, want the cancellation", err)
			}
			if !queueExists(t, queue.Name) {
				t.Fatal("a cancelled deletion deleted the queue")
			}
			assertAllBound(t, direct, bindings)
		})
	}
}

// awaitBindings waits until the broker has exactly want bindings into
// queue besides the default exchange's.
func awaitBindings(ctx context.Context, direct *broker.Client, queue string, want int) error {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		listed, err := direct.QueueBindings(ctx, accVHost, queue)
		if err != nil {
			return err
		}
		bound := 0
		for _, b := range listed {
			if b.Source != "" {
				bound++
			}
		}
		if bound == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the broker has %d bindings into %s, want %d", bound, queue, want)
		}
	}
}

// TestAccProxyLastAskRefuses (finding 4, the last ask in the deletion's
// turn refuses): the check unbinds a quorum queue and counts it empty; the
// proxy holds back the client's last passive declaration of the queue, in
// the deletion's turn, while a message is published into the queue (its
// consumer, on 4.3, gone first). The deletion is refused, and the queue is
// kept with the message and every binding.
func TestAccProxyLastAskRefuses(t *testing.T) {
	direct := accClient(t)
	t.Parallel()
	queue := quorumQueue(uniqueName(t))
	bindings := boundQueue(t, direct, queue)
	// On 4.3, where a check peeks at a quorum queue, it unbinds the queue
	// only when a consumer holds it.
	var c *consumer
	if peeksAtQuorumQueues(t, direct) {
		held := consume(t, queue.Name)
		c = &held
	}
	publisher := amqpChannel(t)
	p := throughProxies(t)
	var unbinding, asks atomic.Int32
	p.http.Inspect(requestsSeen("DELETE /api/bindings/", &unbinding, nil))
	arrived := make(chan error, 1)
	p.amqp.Inspect(func(sent []byte) faultproxy.Verdict {
		// The count asks once, the deletion's turn once more.
		if bytes.Contains(sent, []byte(queue.Name)) && asks.Add(1) == 2 {
			arrived <- arriveWhileHeld(t.Context(), publisher, c, queue.Name)
		}
		return faultproxy.Forward
	})

	err := p.client.Apply(t.Context(), accVHost, deletion(&queue), broker.ApplyOptions{})
	select {
	case why := <-arrived:
		if why != nil {
			t.Fatalf("publishing while the last ask was held: %v", why)
		}
	default:
		t.Fatalf("the deletion never asked a second time; Apply returned %v\n%s", err, p.log.text())
	}
	var notEmpty *broker.QueueNotEmptyError
	if !errors.As(err, &notEmpty) {
		t.Errorf("Apply(delete) error = %v, want the refusal of a queue that holds a message", err)
	}
	if n := unbinding.Load(); n != int32(len(bindings)) {
		t.Errorf("the check deleted %d bindings, want all %d: this tests nothing", n, len(bindings))
	}
	if !queueExists(t, queue.Name) {
		t.Fatal("the queue was deleted with the message that reached it")
	}
	assertAllBound(t, direct, bindings)
	if depth := queueDepth(t, publisher, queue.Name); depth != 1 {
		t.Errorf("the queue holds %d messages, want the one published", depth)
	}
}

// arriveWhileHeld is what happens while the proxy holds the last ask back:
// the consumer (if any) leaves, and a message reaches the queue by the
// default exchange, which no check unbinds. It returns once a passive
// declaration counts the message: the ask then sees it.
func arriveWhileHeld(ctx context.Context, publisher *amqp.Channel, c *consumer, queue string) error {
	if c != nil {
		if err := c.ch.Cancel(c.tag, false); err != nil {
			return err
		}
	}
	confirmation, err := publisher.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte("arrived during the last ask")})
	if err != nil {
		return err
	}
	if acked, err := confirmation.WaitContext(ctx); err != nil || !acked {
		return fmt.Errorf("the publish was not confirmed: %v, %w", acked, err)
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		q, err := publisher.QueueDeclarePassive(queue, true, false, false, false, nil)
		switch {
		case err != nil:
			return err
		case q.Messages > 0:
			return nil
		case time.Now().After(deadline):
			return errors.New("a passive declaration does not count the confirmed message")
		}
	}
}

// TestAccProxyCancelWaitingForTurn (finding 4, Ctrl-C while waiting for
// the quorum deletion's turn): a first deletion holds the turn of the
// cluster's quorum deletions while the proxy keeps its DELETE's answer from
// it; a second deletion unbinds its queue, counts it empty and waits for
// the turn, and is cancelled there. Every binding is on the broker again,
// the queue is kept, and its DELETE was never sent.
//
// Not parallel: the holder's turn stops every quorum deletion of the
// process, and the parallel tests' deletions waiting for it would take the
// places ahead of the turn (quorumCheckAhead), so that the waiter would
// wait for a place, not for the turn.
func TestAccProxyCancelWaitingForTurn(t *testing.T) {
	direct := accClient(t)
	name := uniqueName(t)
	first := quorumQueue(name + ".first")
	createObjects(t, direct, nil, []topology.Queue{first}, nil)
	queue := quorumQueue(name + ".waiting")
	bindings := boundQueue(t, direct, queue)
	if peeksAtQuorumQueues(t, direct) {
		consume(t, queue.Name) // see TestAccProxyLastAskRefuses
	}
	// The holder's unanswered DELETE holds the turn until the test ends it,
	// however long the waiter's count takes on a busy machine.
	holder := throughProxies(t).timingOutAfter(t, 10*time.Minute)
	waiter := holder.another(t)
	// Both know their broker and have a proven AMQP connection: the holder
	// then takes the turn only for its checked DELETE, which its context
	// ends, and the waiter asks for it only after its count.
	for _, p := range []proxied{holder, waiter} {
		if _, err := broker.PeeksAtQuorumQueues(t.Context(), p.client); err != nil {
			t.Fatal(err)
		}
		if _, err := broker.DeclarePassive(t.Context(), p.client, accVHost, queue.Name); err != nil {
			t.Fatal(err)
		}
	}
	var unbinding, waiterDeletions atomic.Int32
	holding := make(chan struct{})
	holder.http.Inspect(requestsSeen("DELETE /api/bindings/", &unbinding, func(sent []byte) faultproxy.Verdict {
		switch {
		case bytes.HasPrefix(sent, []byte("DELETE /api/queues/%2F/"+first.Name)):
			close(holding)
			return faultproxy.ForwardUnanswered
		case bytes.HasPrefix(sent, []byte("DELETE /api/queues/%2F/"+queue.Name+" ")),
			bytes.HasPrefix(sent, []byte("DELETE /api/queues/%2F/"+queue.Name+"?")):
			waiterDeletions.Add(1)
		}
		return faultproxy.Forward
	}))

	holderCtx, endHolder := context.WithCancel(t.Context())
	held := make(chan error, 1)
	var holderDone sync.WaitGroup
	holderDone.Add(1)
	go func() {
		defer holderDone.Done()
		held <- holder.client.Apply(holderCtx, accVHost, deletion(&first), broker.ApplyOptions{})
	}()
	t.Cleanup(func() { endHolder(); holderDone.Wait() })
	select {
	case <-holding:
	case err := <-held:
		t.Fatalf("the first deletion ended before its DELETE: %v\n%s", err, holder.log.text())
	case <-time.After(time.Minute):
		t.Fatalf("hung: the first deletion never sent its DELETE\n%s", holder.log.text())
	}

	ctx, cancel := context.WithCancelCause(t.Context())
	interrupted := errors.New("interrupted")
	waited := make(chan error, 1)
	go func() { waited <- waiter.client.Apply(ctx, accVHost, deletion(&queue), broker.ApplyOptions{}) }()
	for deadline := time.Now().Add(2 * time.Minute); !strings.Contains(waiter.log.text(), "waiting for another quorum queue deletion"); {
		select {
		case err := <-waited:
			t.Fatalf("the second deletion ended before it waited for the turn: %v\n%s", err, waiter.log.text())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("hung: the second deletion never waited for the turn\n%s", waiter.log.text())
		}
	}
	cancel(interrupted)
	var err error
	select {
	case err = <-waited:
	case <-time.After(time.Minute):
		t.Fatal("hung: the cancelled deletion has not returned")
	}
	if !errors.Is(err, interrupted) {
		t.Errorf("Apply(delete) error = %v, want the cancellation's cause", err)
	}
	if n := unbinding.Load(); n != int32(len(bindings)) {
		t.Errorf("the check deleted %d bindings, want all %d: this tests nothing", n, len(bindings))
	}
	if n := waiterDeletions.Load(); n != 0 {
		t.Errorf("the second deletion sent %d DELETEs of its queue while the first held the turn", n)
	}
	if !queueExists(t, queue.Name) {
		t.Fatal("the cancelled deletion deleted the queue")
	}
	assertAllBound(t, direct, bindings)
	endHolder()
	if err := <-held; !errors.Is(err, context.Canceled) {
		t.Errorf("the first deletion, its DELETE unanswered: %v, want the cancellation", err)
	}
}
