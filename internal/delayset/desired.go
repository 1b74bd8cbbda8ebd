package delayset

import (
	"context"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The steps every verb shares: what a set is to hold, and reading it.

// desired is what the set of spec is to hold, the one way every step works
// it out: spec's generation and the draining ones, with the parking lot of
// the queue type it has in seen, since declaring it again would drop the
// messages it parks (topology.KeepParkingLot). seen is what the broker
// holds or, for a plan, what the last read showed; nothing for a new set.
func desired(spec topology.Spec, draining []topology.Generation, seen topology.Topology) (topology.Topology, error) {
	planned, err := topology.PlanGenerations(spec, draining)
	if err != nil {
		return topology.Topology{}, err
	}
	return topology.KeepParkingLot(spec.Name, planned, topology.ParkingLotType(spec.Name, seen)), nil
}

// known is the planned topology of a remembered set's current and draining
// generations, or false when it cannot be planned.
func known(prior Remembered) (topology.Topology, bool) {
	if prior.Unresolved {
		return topology.Topology{}, false
	}
	set, err := desired(prior.Spec, prior.Draining, prior.Shown)
	return set, err == nil
}

// readKnown reads a remembered set by the names of its objects, so that a
// refresh costs the broker the same however many other objects the vhost
// holds; a set that cannot be planned is read by the name-filtered listing.
// opts.ShareBindings is for a refresh, whose reads of many sets share
// listings of their bindings.
func readKnown(ctx context.Context, b Broker, prior Remembered, opts broker.ReadOptions) (topology.Topology, error) {
	spec := prior.Spec
	if set, ok := known(prior); ok {
		return b.ReadSetNamed(ctx, spec.VHost, spec.Name, spec.Layout, set, opts)
	}
	return b.ReadSetOf(ctx, spec.VHost, spec.Name, spec.Layout)
}

// readPlacements reads where the queues of set run after a change.
func readPlacements(ctx context.Context, b Broker, spec topology.Spec, set topology.Topology, result *Result) {
	result.Placements, result.PlacementError = b.ReadPlacements(ctx, spec.VHost, set.QueueNames())
}

// ResolveWithLevels resolves a spec whose levels are known (read back from
// a set or from what is kept of it): the levels tell the max delay, so a
// max delay the spec may still carry is dropped.
func ResolveWithLevels(spec topology.Spec) (topology.Spec, error) {
	if spec.Levels > 0 {
		spec.MaxDelay = 0
	}
	return topology.Resolve(spec)
}

// declaredMarks is what is to be kept of the log marks the broker knows:
// those of queues, the set's queues now; nil when there are none.
func declaredMarks(b Broker, vhost string, queues []string) map[string]broker.LogMark {
	marks := b.DeclaredMarks(vhost, queues)
	if len(marks) == 0 {
		return nil
	}
	return marks
}
