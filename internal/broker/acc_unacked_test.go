package broker_test

import (
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccDeletionKeepsUnacknowledgedMessages: a consumer holds a queue's
// only message, delivered and not acknowledged. The broker's if-empty
// counts the queue empty, and a peek sees nothing ready; the deletion must
// still refuse, leave the queue bound as it was, and delete it once the
// message is acknowledged.
func TestAccDeletionKeepsUnacknowledgedMessages(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	for name, queueType := range map[string]topology.QueueType{
		"classic": topology.QueueTypeClassic,
		"quorum":  topology.QueueTypeQuorum,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prefix := uniqueName(t)
			exchange := topology.Exchange{Name: prefix + ".x", Type: topology.ExchangeTopic}
			queue := topology.Queue{Name: prefix + ".q", Arguments: topology.QueueArguments{QueueType: queueType}}
			binding := topology.Binding{Source: exchange.Name, Destination: queue.Name, DestinationType: topology.DestinationQueue, RoutingKey: "#"}
			createObjects(t, client, []topology.Exchange{exchange}, []topology.Queue{queue}, []topology.Binding{binding})

			publish(t, amqpChannel(t), exchange.Name, "k")
			consumer := amqpChannel(t)
			if err := consumer.Qos(1, 0, false); err != nil {
				t.Fatal(err)
			}
			deliveries, err := consumer.Consume(queue.Name, "", false, false, false, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			var held amqp.Delivery
			select {
			case held = <-deliveries:
			case <-time.After(time.Minute):
				t.Fatal("hung: the message was never delivered")
			}

			err = client.Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{})
			var notEmpty *broker.QueueNotEmptyError
			var uncounted *broker.UncountedError
			if !errors.As(err, &notEmpty) && !errors.As(err, &uncounted) {
				t.Fatalf("Apply(delete) error = %v, want a refusal of a queue whose consumer holds a message", err)
			}
			if !queueExists(t, queue.Name) {
				t.Fatal("the queue was deleted with a message its consumer had not acknowledged")
			}
			assertBound(t, client, binding)

			if err := held.Ack(false); err != nil {
				t.Fatal(err)
			}
			// The consumer stays: only statistics sampled after the check
			// began can tell that it holds nothing now.
			deadline := time.Now().Add(2 * time.Minute)
			for {
				err = client.Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{})
				if err == nil || time.Now().After(deadline) {
					break
				}
				t.Logf("not deleted yet: %v", err)
				time.Sleep(time.Second)
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

// assertBound fails the test unless binding is on the broker.
func assertBound(t *testing.T, client *broker.Client, binding topology.Binding) {
	t.Helper()
	bindings, err := client.QueueBindings(t.Context(), accVHost, binding.Destination)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings {
		if b.Source == binding.Source && b.RoutingKey == binding.RoutingKey {
			return
		}
	}
	t.Errorf("the binding %s → %s (%q) is gone: %v", binding.Source, binding.Destination, binding.RoutingKey, bindings)
}
