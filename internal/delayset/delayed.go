package delayset

import (
	"context"
	"errors"
	"slices"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// DelayedBroker is what a delayed exchange needs of the broker;
// *broker.Client is one.
type DelayedBroker interface {
	applier
	ReadObjectsNamed(ctx context.Context, vhost, pattern string, known topology.Topology, opts broker.ReadOptions) (topology.Topology, error)
	ReadObjectsMatching(ctx context.Context, vhost, pattern string) (topology.Topology, error)
}

var _ DelayedBroker = (*broker.Client)(nil)

// DelayedExchanges creates, updates, refreshes, imports and destroys
// delayed exchanges (topology.DelayedSpec), with the sets' guard: a
// removed delay's queue is deleted only once an exact count finds it
// empty, and a destroy refuses while any queue holds a message, unless
// forced.
type DelayedExchanges struct {
	Broker DelayedBroker
}

// DelayedState is what is kept of a delayed exchange between runs.
type DelayedState struct {
	// Spec is resolved.
	Spec topology.DelayedSpec
	// Draining is the queues of delays no longer listed that held messages
	// at the last look, and how many (an uncounted queue holds one).
	Draining map[string]int64
	// Objects is what the broker holds of the listed delays' layout (a
	// refresh) or the plan (an apply), without the draining queues and the
	// consumers' bindings (topology.DelayedNames.ConsumerBindings).
	Objects topology.Topology
}

// pattern is the name pattern of the delayed exchange of s.
func pattern(s topology.DelayedSpec) string { return topology.DelayedNames(s.Name).ObjectNamePattern() }

// drainingDelays are the delays of the draining queues of state.
func (d DelayedState) drainingDelays() []int64 {
	var delays []int64
	for queue := range d.Draining {
		if ms, ok := topology.DelayedNames(d.Spec.Name).DelayOfQueue(queue); ok {
			delays = append(delays, ms)
		}
	}
	slices.Sort(delays)
	return delays
}

// Create declares the delayed exchange of spec, resolved, refusing
// (ExistsError) when objects of it exist already.
func (x DelayedExchanges) Create(ctx context.Context, spec topology.DelayedSpec) (DelayedState, error) {
	plan := topology.PlanDelayed(spec, nil)
	actual, err := x.Broker.ReadObjectsNamed(ctx, spec.VHost, pattern(spec), plan, broker.ReadOptions{})
	if err != nil {
		return DelayedState{}, failed(Reading, err)
	}
	if len(actual.Exchanges)+len(actual.Queues) > 0 {
		return DelayedState{}, &ExistsError{Found: actual}
	}
	state := DelayedState{Spec: spec, Objects: plan}
	return state, failed(Applying, guardedApply(ctx, x.Broker, spec.VHost, "", topology.Diff(plan, actual), false))
}

// Update makes the broker's delayed exchange that of spec. The queue of a
// delay no longer listed loses its binding at once, so nothing new enters
// it, and stays: its messages leave on time through the delivery exchange.
// A later update deletes it once an exact count finds it empty; never the
// one that unbinds it, while a message may still be on its way in or out
// (a dead-letter awaiting its confirm). force deletes such queues with
// their messages.
func (x DelayedExchanges) Update(ctx context.Context, spec topology.DelayedSpec, force bool) (DelayedState, error) {
	// Every object named like the exchange, so that no queue lost track of escapes.
	actual, err := x.Broker.ReadObjectsMatching(ctx, spec.VHost, pattern(spec))
	if err != nil {
		return DelayedState{}, failed(Reading, err)
	}
	var draining map[string]int64
	if !force {
		if draining, err = x.holding(ctx, spec, unlistedQueues(spec, actual), boundQueues(spec, actual)); err != nil {
			return DelayedState{}, failed(Reading, err)
		}
	}
	state := DelayedState{Spec: spec, Draining: draining, Objects: topology.PlanDelayed(spec, nil)}
	desired := topology.PlanDelayed(spec, state.drainingDelays())
	// The consumers' bindings are theirs: deleting one would drop deliveries.
	desired.Bindings = append(desired.Bindings, topology.DelayedNames(spec.Name).ConsumerBindings(actual)...)
	return state, failed(Applying, guardedApply(ctx, x.Broker, spec.VHost, "", topology.Diff(desired, actual), force))
}

// Refresh reads the delayed exchange prior remembers: found is false when
// none of its objects is left (or its vhost is gone).
func (x DelayedExchanges) Refresh(ctx context.Context, prior DelayedState) (DelayedState, bool, error) {
	known := topology.PlanDelayed(prior.Spec, prior.drainingDelays())
	actual, err := x.Broker.ReadObjectsNamed(ctx, prior.Spec.VHost, pattern(prior.Spec), known, broker.ReadOptions{})
	if errors.Is(err, broker.ErrVHostNotFound) {
		return DelayedState{}, false, nil
	}
	if err != nil || len(actual.Exchanges)+len(actual.Queues) == 0 {
		return DelayedState{}, false, err
	}
	return x.readBack(ctx, prior.Spec, actual)
}

// Import reads the delayed exchange name of vhost and infers its spec;
// found is false when none of its objects exists.
func (x DelayedExchanges) Import(ctx context.Context, vhost, name string) (DelayedState, bool, error) {
	actual, err := x.Broker.ReadObjectsMatching(ctx, vhost, topology.DelayedNames(name).ObjectNamePattern())
	if errors.Is(err, broker.ErrVHostNotFound) {
		return DelayedState{}, false, nil
	}
	if err != nil || len(actual.Exchanges)+len(actual.Queues) == 0 {
		return DelayedState{}, false, err
	}
	spec, _, err := topology.InferDelayed(name, actual)
	if err != nil {
		return DelayedState{}, false, &ImportError{Err: err}
	}
	return x.readBack(ctx, spec, actual)
}

// readBack is the state of actual, a read of the delayed exchange of spec:
// its draining queues counted exactly, the rest as the broker holds it.
func (x DelayedExchanges) readBack(ctx context.Context, spec topology.DelayedSpec, actual topology.Topology) (DelayedState, bool, error) {
	unlisted := unlistedQueues(spec, actual)
	counts, uncounted, err := exactCounts(ctx, x.Broker, spec.VHost, unlisted)
	if err != nil {
		return DelayedState{}, false, err
	}
	listed := topology.DelayedNames(spec.Name).WithoutConsumerBindings(actual)
	listed.Queues = slices.DeleteFunc(slices.Clone(actual.Queues), func(q topology.Queue) bool { return slices.Contains(unlisted, q.Name) })
	// In the plan's order, so that a delayed exchange as planned reads back as planned.
	state := DelayedState{Spec: spec, Objects: topology.Align(listed, topology.PlanDelayed(spec, nil))}
	for _, queue := range unlisted {
		if state.Draining == nil {
			state.Draining = map[string]int64{}
		}
		state.Draining[queue] = counts[queue]
		if _, unknown := uncounted[queue]; unknown {
			state.Draining[queue] = max(counts[queue], 1)
		}
	}
	return state, true, nil
}

// holding is those of queues that are bound still or hold messages by the
// guard's count, and how many they hold.
func (x DelayedExchanges) holding(ctx context.Context, spec topology.DelayedSpec, queues []string, bound map[string]bool) (map[string]int64, error) {
	counts, uncounted, err := exactCounts(ctx, x.Broker, spec.VHost, queues)
	if err != nil {
		return nil, err
	}
	held := map[string]int64{}
	for _, queue := range queues {
		switch {
		case holdsMessages(queue, counts, uncounted):
			held[queue] = max(counts[queue], 1)
		case bound[queue]:
			held[queue] = 0
		}
	}
	if len(held) == 0 {
		return nil, nil
	}
	return held, nil
}

// boundQueues are the queues a binding from the exchange of spec leads to.
func boundQueues(spec topology.DelayedSpec, actual topology.Topology) map[string]bool {
	bound := map[string]bool{}
	for _, b := range actual.Bindings {
		if b.Source == topology.DelayedNames(spec.Name).Exchange() && b.DestinationType.OrQueue() == topology.DestinationQueue {
			bound[b.Destination] = true
		}
	}
	return bound
}

// unlistedQueues are the delay queues of actual whose delay spec does not
// list.
func unlistedQueues(spec topology.DelayedSpec, actual topology.Topology) []string {
	var queues []string
	for _, q := range actual.Queues {
		if ms, ok := topology.DelayedNames(spec.Name).DelayOfQueue(q.Name); ok && !slices.Contains(spec.DelaysMS, ms) {
			queues = append(queues, q.Name)
		}
	}
	return queues
}

// Destroy deletes every object named like the delayed exchange of prior,
// refusing while any of its queues holds a message unless force is set.
// A vhost that is gone took it with it.
func (x DelayedExchanges) Destroy(ctx context.Context, prior DelayedState, force bool) error {
	actual, err := x.Broker.ReadObjectsMatching(ctx, prior.Spec.VHost, pattern(prior.Spec))
	if errors.Is(err, broker.ErrVHostNotFound) {
		return nil
	}
	if err != nil {
		return failed(Reading, err)
	}
	err = guardedApply(ctx, x.Broker, prior.Spec.VHost, "", topology.Teardown(actual), force)
	if errors.Is(err, broker.ErrVHostNotFound) {
		return nil
	}
	return failed(Applying, err)
}
