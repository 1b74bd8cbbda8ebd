package delayset

import (
	"context"
	"errors"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The steps Refresh and Import share: judging a read, and what is to be
// kept of the set it found.

// setFound judges the first read of a set: a vhost that is gone, or no
// object of the set left, means the set is gone; any other error fails.
func setFound(actual topology.Topology, err error) (bool, error) {
	switch {
	case errors.Is(err, broker.ErrVHostNotFound):
		return false, nil
	case err != nil:
		return false, failed(Reading, err)
	}
	return len(actual.Exchanges)+len(actual.Queues) > 0, nil
}

// readBack is what is to be kept of prior's set, given actual, the
// broker's objects of it: the generation the broker holds (followBroker),
// the draining generations with their messages (Refreshed), the objects in
// the plan's order, where the queues are, and the drifted queues that hold
// messages.
func readBack(ctx context.Context, b Broker, clock Clock, prior Remembered, actual topology.Topology) (Result, error) {
	spec, set, draining, err := followBroker(prior, actual)
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	counts, err := Refreshed(ctx, b, spec, draining, Settled(clock.Now(), prior.SwitchedAt))
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	drifted, err := driftedHolding(ctx, b, spec, set, actual)
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	// Listed in the plan's order so that an unchanged set reads back exactly
	// as planned; the draining generations show in Draining instead, and a
	// library's own delivery bindings not at all (they are never drift).
	current := topology.Align(topology.WithoutLibraryBindings(spec, set, topology.CurrentObjects(spec, actual)), set)
	return Result{
		Remembered: Remembered{Spec: spec, Draining: draining, DrainingMessages: messagesOf(spec, draining, counts),
			Shown: current, SwitchedAt: prior.SwitchedAt, DriftedHolding: drifted,
			Declared: declaredMarks(b, spec.VHost, actual.QueueNames())},
		Set:        current,
		Counts:     counts,
		Placements: b.Placements(spec.VHost, actual.QueueNames()),
	}, nil
}

// followBroker plans prior's set against actual: its spec, what it is to
// hold, and the generations that drain, as the broker tells them. When the
// broker holds a generation prior does not know (an apply was cut off), the
// set follows it (topology.FollowBroker), so the next plan starts from it.
// Objects that explain no set are drift for the next plan to show: prior's
// generations stand.
func followBroker(prior Remembered, actual topology.Topology) (topology.Spec, topology.Topology, []topology.Generation, error) {
	spec := prior.Spec
	set, err := desired(spec, nil, actual)
	if err != nil {
		return spec, set, nil, err
	}
	inferred, draining, explained := inferredLayout(spec, actual)
	if !explained {
		return spec, set, prior.Draining, nil
	}
	followed := topology.FollowBroker(spec, inferred)
	if followed.Generation == spec.Generation && followed.FormatGeneration == spec.FormatGeneration {
		return spec, set, draining, nil
	}
	if spec, err = ResolveWithLevels(followed); err != nil {
		return spec, set, draining, err
	}
	set, err = desired(spec, nil, actual)
	return spec, set, draining, err
}

// inferredLayout is the spec and draining generations actual's objects
// explain, if they explain a set of spec's layout (no error: drift is for
// the next plan to show).
func inferredLayout(spec topology.Spec, actual topology.Topology) (topology.Spec, []topology.Generation, bool) {
	inferred, draining, err := topology.InferLayout(spec.Name, spec.Layout, actual)
	return inferred, draining, err == nil
}

// driftedHolding lists the TTL queues of spec's generation whose arguments
// drifted from set (topology.DriftedQueues) and that hold messages by the
// guard. It asks the broker only about drifted queues.
func driftedHolding(ctx context.Context, counter Counter, spec topology.Spec, set, actual topology.Topology) ([]string, error) {
	drifted := topology.DriftedQueues(spec, set, actual)
	counts, uncounted, err := exactCounts(ctx, counter, spec.VHost, drifted)
	if err != nil {
		return nil, err
	}
	var holding []string
	for _, queue := range drifted {
		if holdsMessages(queue, counts, uncounted) {
			holding = append(holding, queue)
		}
	}
	return holding, nil
}
