package delayset

import (
	"context"
	"errors"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Destroy deletes the set prior remembers: the objects its plan names, by
// name, without reading them first (a delete of what is gone succeeds, and
// the guard checks each queue either way). A set that showed more than its
// plan (a stray level, a drifted binding) or that plans no set is read, so
// that none of that is left behind or, holding messages, stripped of the
// exchanges it dead-letters to. A vhost that is gone took the set with it.
func (s Sets) Destroy(ctx context.Context, prior Remembered, force bool) error {
	s.Broker.RememberDeclared(prior.Spec.VHost, prior.Declared)
	doomed, ok := known(prior)
	if !ok || prior.ShownMore || !plansAllOf(doomed, prior.Shown) {
		var err error
		doomed, err = readKnown(ctx, s.Broker, prior, broker.ReadOptions{})
		if errors.Is(err, broker.ErrVHostNotFound) {
			return nil
		}
		if err != nil {
			return failed(Reading, err)
		}
	}
	// Teardown deletes no binding to an object outside the set on its own:
	// they stay while the queues are checked and deleted, so a message
	// leaving level 0 meanwhile still reaches its destination.
	err := guardedApply(ctx, s.Broker, prior.Spec.VHost, prior.Spec.Layout, topology.Teardown(doomed), force)
	if errors.Is(err, broker.ErrVHostNotFound) {
		return nil
	}
	return failed(Applying, err)
}

// plansAllOf tells whether planned holds every exchange, queue and binding
// shown holds.
func plansAllOf(planned, shown topology.Topology) bool {
	names := map[string]bool{}
	for _, x := range planned.Exchanges {
		names["exchange "+x.Name] = true
	}
	for _, q := range planned.Queues {
		names["queue "+q.Name] = true
	}
	for _, b := range planned.Bindings {
		names[b.String()] = true
	}
	for _, x := range shown.Exchanges {
		if !names["exchange "+x.Name] {
			return false
		}
	}
	for _, q := range shown.Queues {
		if !names["queue "+q.Name] {
			return false
		}
	}
	for _, b := range shown.Bindings {
		if !names[b.String()] {
			return false
		}
	}
	return true
}
