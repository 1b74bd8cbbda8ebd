package broker_test

import (
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccTeardownLeavesNothing deletes sets of 17 levels of quorum queues,
// with a route to an exchange, by topology.Teardown, twenty at once as a
// destroy of many sets does: nothing of any set may remain.
func TestAccTeardownLeavesNothing(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	const sets = 20
	specs := make([]topology.Spec, sets)
	for i := range specs {
		specs[i] = topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: 17, Resolution: time.Second, QueueType: topology.QueueTypeQuorum,
			Routes: []topology.Route{{Destination: "amq.topic", DestinationType: topology.DestinationExchange}}}
		applySpec(t, client, specs[i])
	}
	errs := make(chan error, sets)
	for _, spec := range specs {
		go func() {
			actual, err := client.ReadSet(t.Context(), accVHost, spec.Name)
			if err == nil {
				err = client.Apply(t.Context(), accVHost, topology.Teardown(actual), broker.ApplyOptions{})
			}
			errs <- err
		}()
	}
	for range sets {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, spec := range specs {
		left, err := client.ReadSet(t.Context(), accVHost, spec.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range left.Exchanges {
			t.Errorf("exchange %s is left", e.Name)
		}
		for _, q := range left.Queues {
			t.Errorf("queue %s is left", q.Name)
		}
	}
}
