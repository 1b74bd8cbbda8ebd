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

// TestAccPeekMovesQuorumHeadBehind records what a peek does to a quorum
// queue of RabbitMQ 3.10 that holds two messages: the peeked head is
// requeued at the back, behind the message published after it, and since a
// quorum queue expires messages from its head only, it dead-letters after
// that one, late by the gap between them — up to the queue's TTL. This is
// why HeldMessages peeks only at queues whose statistics count nothing.
func TestAccPeekMovesQuorumHeadBehind(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	const ttl, gap = 3 * time.Second, 1500 * time.Millisecond
	ch, source, dead, published := orderedTTLQueue(t, client, ttl, gap)
	if peeked := peek(t, source); len(peeked) != 1 || peeked[0]["payload"] != "first" {
		t.Fatalf("peek at %s = %v, want the first message", source, peeked)
	}
	body, at := firstDeadLettered(t, ch, dead, published.Add(ttl+gap+5*time.Second))
	t.Logf("after the peek, %q dead-lettered first, %s after the first message's publish (TTL %s, gap %s)",
		body, at.Sub(published).Round(time.Millisecond), ttl, gap)
	if body != "second" {
		t.Errorf("the first message dead-lettered first: the broker no longer moves a peeked head behind; " +
			"HeldMessages could peek at every queue again")
	}
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
