package broker_test

import (
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// orderedTTLQueue declares a quorum queue with a message TTL that
// dead-letters (at most once) into a queue of its own
// (ttlQueueDeadLettering), publishes "first"
// and, gap later, "second" to it, and returns the channel, the two queues'
// names and when "first" was confirmed.
func orderedTTLQueue(t *testing.T, client *broker.Client, ttl, gap time.Duration) (ch *amqp.Channel, source, dead string, first time.Time) {
	t.Helper()
	sourceQueue, deadQueue := ttlQueueDeadLettering(t, client, ttl, topology.AtMostOnce)

	ch = amqpChannel(t)
	send := func(body string) {
		confirmation, err := ch.PublishWithDeferredConfirmWithContext(t.Context(), "", sourceQueue.Name, true, false,
			amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if acked, err := confirmation.WaitContext(t.Context()); err != nil || !acked {
			t.Fatalf("publishing %q to %s: acked = %v, error = %v", body, sourceQueue.Name, acked, err)
		}
	}
	send("first")
	first = time.Now()
	time.Sleep(gap)
	send("second")
	return ch, sourceQueue.Name, deadQueue.Name, first
}

// firstDeadLettered waits until queue holds a message, at most until
// deadline, and returns when, and the body of the first one.
func firstDeadLettered(t *testing.T, ch *amqp.Channel, queue string, deadline time.Time) (string, time.Time) {
	t.Helper()
	for queueDepth(t, ch, queue) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("nothing dead-lettered into %s in time", queue)
		}
		time.Sleep(10 * time.Millisecond)
	}
	at := time.Now()
	msg, ok, err := ch.Get(queue, true)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = %v, %v; want a message", queue, ok, err)
	}
	return string(msg.Body), at
}

// TestAccPeekKeepsQuorumHeadFirst records what the client's peek does to
// a quorum queue that holds two messages: the peeked head goes back to the
// head, and since a quorum queue expires messages from its head only, it
// still dead-letters first, on time — on RabbitMQ 3.10.8 and 4.3.6 alike.
// The peek is a nack with requeue (broker.PeekRequest). A reject with
// requeue, the peek before, put the message back at the end of a 3.10
// quorum queue, behind the message published after it, where it
// dead-lettered late by the gap between them (up to the queue's TTL): that
// is why the provider kept peeks away from queues whose statistics count
// messages, and waits StatisticsLag before checking a generation it just
// switched from.
func TestAccPeekKeepsQuorumHeadFirst(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	const ttl, gap = 3 * time.Second, 1500 * time.Millisecond
	ch, source, dead, published := orderedTTLQueue(t, client, ttl, gap)
	if peeked := peek(t, source); len(peeked) != 1 || peeked[0]["payload"] != "first" {
		t.Fatalf("peek at %s = %v, want the first message", source, peeked)
	}
	body, at := firstDeadLettered(t, ch, dead, published.Add(ttl+gap+5*time.Second))
	version := brokerVersion(t, client)
	t.Logf("RabbitMQ %s: after the peek, %q dead-lettered first, %s after the first message's publish (TTL %s, gap %s)",
		version, body, at.Sub(published).Round(time.Millisecond), ttl, gap)
	if body != "first" {
		t.Errorf("the second message dead-lettered first: RabbitMQ %s moves a peeked head behind the others, "+
			"late by up to the queue's TTL", version)
	}
}

// brokerVersion is the RabbitMQ version of the node the tests use.
func brokerVersion(t *testing.T, client *broker.Client) string {
	t.Helper()
	node, err := client.Node(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return node.RabbitMQVersion
}

// TestAccHeldMessagesKeepsQuorumOrder checks that HeldMessages does not
// delay the messages of a quorum TTL queue whose statistics count them: it
// does not peek there, so the head still dead-letters first, on time.
func TestAccHeldMessagesKeepsQuorumOrder(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	// Long enough for the statistics, which lag up to ~10 s, to count both.
	const ttl, gap = 16 * time.Second, 2 * time.Second
	ch, source, dead, published := orderedTTLQueue(t, client, ttl, gap)
	awaitStatistics(t, client, source, 2)
	held, err := client.HeldMessages(t.Context(), accVHost, []string{source})
	if err != nil {
		t.Fatal(err)
	}
	if held[source] != 2 {
		t.Fatalf("HeldMessages = %v, want 2 in %s", held, source)
	}
	body, at := firstDeadLettered(t, ch, dead, published.Add(ttl+gap+5*time.Second))
	late := at.Sub(published) - ttl
	t.Logf("%q dead-lettered first, %s after its TTL", body, late.Round(time.Millisecond))
	if body != "first" || late > 500*time.Millisecond {
		t.Errorf("%s", fmt.Sprintf("%q dead-lettered first, %s after the first message's TTL; want the first, on time", body, late))
	}
}

// TestAccPeeksAreNoDeliveries checks that the client's peek does not count
// as a delivery. A quorum queue of RabbitMQ 4.x dead-letters a message that
// comes back to it more often than its delivery limit (20 by default) with
// reason delivery_limit: a peek that counted would, from the 21st check of
// a draining generation, send its head on early (issue 23). Peeked 25
// times, a message with a 6 s TTL dead-letters on time, as expired.
func TestAccPeeksAreNoDeliveries(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	const ttl, peeks = 6 * time.Second, 25
	source, dead := ttlQueueDeadLettering(t, client, ttl, topology.AtMostOnce)
	ch := amqpChannel(t)
	published := time.Now() // before the broker takes it: its TTL runs from later
	publish(t, ch, "", source.Name)
	for i := range peeks {
		ready, gone, err := broker.PeekReady(client, t.Context(), accVHost, source.Name)
		if err != nil || gone || ready != 1 {
			t.Fatalf("peek %d at %s: %d ready, gone %v, error %v; want the message", i+1, source.Name, ready, gone, err)
		}
	}
	if took := time.Since(published); took > ttl/2 {
		t.Fatalf("%d peeks took %s, too close to the TTL (%s) to tell an early message", peeks, took, ttl)
	}
	for queueDepth(t, ch, dead.Name) == 0 {
		if time.Since(published) > ttl+5*time.Second {
			t.Fatalf("the message did not dead-letter into %s within its TTL and 5 s", dead.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	after := time.Since(published)
	msg, ok, err := ch.Get(dead.Name, true)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = %v, %v; want the message", dead.Name, ok, err)
	}
	reason := "?"
	if deaths, _ := msg.Headers["x-death"].([]any); len(deaths) > 0 {
		if death, ok := deaths[0].(amqp.Table); ok {
			reason, _ = death["reason"].(string)
		}
	}
	t.Logf("peeked %d times, the message dead-lettered %s after its publish (TTL %s), reason %s, x-delivery-count %v",
		peeks, after.Round(time.Millisecond), ttl, reason, msg.Headers["x-delivery-count"])
	if after < ttl || reason != "expired" {
		t.Errorf("the message dead-lettered %s after its publish with reason %q, want at its TTL (%s), expired: the peeks counted as deliveries",
			after.Round(time.Millisecond), reason, ttl)
	}
}
