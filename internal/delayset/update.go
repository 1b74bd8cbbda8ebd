package delayset

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Update makes the broker's set that of spec, a resolved spec whose
// generation the plan chose (Plan): it keeps the generations that drain
// (Keep), applies the change, waits up to opts.Wait for the draining
// generations to empty (Empty) and deletes those that did.
func (s Sets) Update(ctx context.Context, spec topology.Spec, prior Remembered, opts UpdateOptions) (Result, error) {
	s.Broker.RememberDeclared(prior.Spec.VHost, prior.Declared)
	// Every object named like the set, so that no generation that was lost
	// track of escapes the update.
	actual, err := s.Broker.ReadSetOf(ctx, spec.VHost, spec.Name, spec.Layout)
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	draining, err := s.keepDraining(ctx, spec, actual, prior)
	changed := false
	if err == nil {
		changed, err = s.applyGenerations(ctx, spec, draining, actual, opts.Force)
	}
	if err != nil {
		return Result{}, failed(Applying, err)
	}
	switched := prior.SwitchedAt
	if changed && len(draining) > 0 {
		// Taken for a switch, which it is unless only routes or drift
		// changed: either way the last generation to drain may have taken
		// messages until now.
		switched = s.clock().Now()
	}
	still, counts, warnings, err := s.deleteEmptied(ctx, spec, draining, opts.Wait, switched)
	if err != nil {
		return Result{}, failed(Draining, err)
	}
	result := Result{
		// Drift repaired: the next refresh looks again.
		Remembered: Remembered{Spec: spec, Draining: still, DrainingMessages: messagesOf(spec, still, counts), SwitchedAt: switched},
		Counts:     counts,
		Warnings:   warnings,
	}
	// applyGenerations has planned the same without error: a failure here
	// is only no placement to show.
	if after, planErr := topology.PlanGenerations(spec, still); planErr != nil {
		result.PlacementError = planErr
	} else {
		result.Set, result.Shown = after, after
		result.Declared = declaredMarks(s.Broker, spec.VHost, after.QueueNames())
		readPlacements(ctx, s.Broker, spec, after, &result)
	}
	return result, nil
}

// keepDraining lists the generations of actual other than spec's that the
// update keeps (Keep). The broker says which they are; when its objects
// explain no set (a queue of the current generation drifted), prior does.
func (s Sets) keepDraining(ctx context.Context, spec topology.Spec, actual topology.Topology, prior Remembered) ([]topology.Generation, error) {
	current, draining, err := topology.InferGenerations(spec.Name, actual)
	if err != nil {
		if !prior.exists() {
			return nil, nil // no prior set to keep anything of: Diff makes the set
		}
		current, draining = prior.Spec, prior.Draining
	}
	return Keep(ctx, s.Broker, spec, current, draining)
}

// applyGenerations makes actual the set of spec with the draining
// generations kept, and tells whether it changed anything.
func (s Sets) applyGenerations(ctx context.Context, spec topology.Spec, draining []topology.Generation, actual topology.Topology, force bool) (bool, error) {
	set, err := desired(spec, draining, actual)
	if err != nil {
		return false, err
	}
	set = topology.KeepDrainingQueues(spec.Name, set, actual, draining)
	// The delivery bindings a library made for itself are its own: deleting
	// one would drop the delayed messages on their way to its destination.
	set = topology.KeepLibraryBindings(spec, set, actual)
	changes := topology.Diff(set, actual)
	return len(changes) > 0, guardedApply(ctx, s.Broker, spec.VHost, spec.Layout, changes, force)
}

// deleteEmptied waits up to wait for the draining generations to empty
// (Empty; switched is when the last one stopped taking messages), deletes
// those that did, and returns the generations that still drain and the
// messages their queues hold. A message that reaches a generation between
// the count and the deletion keeps it, with a warning: it drains on.
func (s Sets) deleteEmptied(ctx context.Context, spec topology.Spec, draining []topology.Generation, wait time.Duration, switched time.Time) (
	still []topology.Generation, counts map[string]int64, warnings []Warning, err error,
) {
	counts, empty, err := Empty(ctx, s.Broker, s.clock(), spec, draining, wait, switched)
	if err != nil || len(empty) == 0 {
		return draining, counts, nil, err
	}
	still = slices.DeleteFunc(slices.Clone(draining), func(g topology.Generation) bool { return slices.Contains(empty, g) })
	actual, err := s.Broker.ReadSetOf(ctx, spec.VHost, spec.Name, spec.Layout)
	if err == nil {
		_, err = s.applyGenerations(ctx, spec, still, actual, false)
	}
	var refused *HoldsMessagesError
	var notEmpty *broker.QueueNotEmptyError
	var uncounted *broker.UncountedError
	if errors.As(err, &refused) || errors.As(err, &notEmpty) || errors.As(err, &uncounted) {
		warnings = append(warnings, Warning{Reason: GenerationStillDrains, Err: err})
		still, err = draining, nil
	}
	if err != nil {
		return nil, nil, warnings, err
	}
	counts, err = Refreshed(ctx, s.Broker, spec, still, Settled(s.clock().Now(), switched))
	return still, counts, warnings, err
}
