package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider/drain"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The generations of a set: what a plan says of those that drain, which an
// update keeps, and the deletion of those that emptied. The decisions are
// package drain's; here they meet the framework and the broker.

// planGeneration moves resolved, the spec an update of state plans, to the
// generation it takes: the state's own (current, the state's resolved
// spec: specOf), or a new one beside it, which then drains, when the
// queues' kind or key format changes or when queues of the current
// generation drifted and hold messages (as a refresh noted: see
// noteDriftedHolding). It plans the draining attribute too (see
// plannedDraining). ok is false when the update cannot be planned.
func (r *DelayQueueSetResource) planGeneration(ctx context.Context, private privateState, state delayQueueSetModel,
	current, resolved topology.Spec,
) (_ topology.Spec, planned types.List, ok bool, diags diag.Diagnostics) {
	draining, messages := drainingOf(state)
	resolved, err := topology.NextGeneration(resolved, current, draining)
	if err != nil {
		diags.Append(problemDiagnostics(err, "Cannot Change the Delay Queue Set", nil)...)
		return resolved, planned, false, diags
	}
	drifted, driftDiags := driftedHolding(ctx, private)
	diags.Append(driftDiags...)
	if len(drifted) > 0 && resolved.Generation == current.Generation {
		if resolved, err = topology.NewGeneration(resolved, current, draining); err != nil {
			diags.Append(problemDiagnostics(err, "Cannot Repair the Delay Queue Set", nil)...)
			return resolved, planned, false, diags
		}
		diags.AddWarning("Drifted Queues Hold Messages",
			fmt.Sprintf("The arguments of %s changed outside Terraform, and the broker cannot change them back in place; "+
				"they hold messages, so this apply does not declare them again but starts generation %d of the delay queue set %q "+
				"beside them. They drain as they are, and the first apply that finds them empty deletes them.",
				strings.Join(drifted, ", "), resolved.Generation, resolved.Name))
	}
	planned, drainingDiags := r.plannedDraining(ctx, private, state.Draining, resolved, current.Generation, draining, messages)
	diags.Append(drainingDiags...)
	return resolved, planned, true, diags
}

// plannedDraining is the draining attribute of an update's plan, from the
// state's generations that drain and their messages at the last refresh
// (messages[i] for draining[i]): the state's, unless the update switches
// from current to a new generation or may delete a generation that looked
// empty, each of which it warns of (see drain.CalledEmpty); then it is
// known after the apply.
func (r *DelayQueueSetResource) plannedDraining(ctx context.Context, private privateState, state types.List, resolved topology.Spec,
	current int, draining []topology.Generation, messages []int64,
) (types.List, diag.Diagnostics) {
	planned := state
	if resolved.Generation != current {
		planned = types.ListUnknown(drainingObjectType)
	}
	switched, diags := switchedAt(ctx, private)
	for _, g := range drain.CalledEmpty(draining, messages, drain.Settled(r.data.clock.Now(), switched)) {
		diags.AddWarning("A Draining Generation Is Empty",
			fmt.Sprintf("Generation %d of the delay queue set %q held no message at the last refresh, by the queues' statistics: "+
				"this apply deletes its %d queues and their exchanges if a look into each finds it empty.", g.Number, resolved.Name, len(g.Queues(resolved.Name))))
		planned = types.ListUnknown(drainingObjectType)
	}
	return planned, diags
}

// keepDraining lists the generations of actual other than spec's that the
// update keeps (see drain.Keep). The broker says which they are; when its
// objects explain no set (a queue of the current generation drifted), the
// prior state does.
func keepDraining(ctx context.Context, client drain.Counter, spec topology.Spec, actual topology.Topology,
	prior tfsdk.State,
) ([]topology.Generation, error) {
	current, draining, inferErr := topology.InferGenerations(spec.Name, actual)
	if inferErr != nil {
		var state delayQueueSetModel
		if diags := prior.Get(ctx, &state); diags.HasError() {
			return nil, fmt.Errorf("reading the prior state: %v", diags)
		}
		var diags diag.Diagnostics
		if current, diags = specOf(state); diags.HasError() {
			return nil, nil // no prior set to keep anything of: Diff makes the set
		}
		draining, _ = drainingOf(state)
	}
	return drain.Keep(ctx, client, spec, current, draining)
}

// applyGenerations makes actual the set of spec with the draining
// generations kept, and tells whether it changed anything.
func (r *DelayQueueSetResource) applyGenerations(ctx context.Context, client *broker.Client, spec topology.Spec, draining []topology.Generation,
	actual topology.Topology, force bool,
) (changed bool, err error) {
	desired, err := desiredSet(spec, draining, actual)
	if err != nil {
		return false, err
	}
	desired = topology.KeepDrainingQueues(spec.Name, desired, actual, draining)
	// The delivery bindings a library made for itself are its own: deleting
	// one would drop the delayed messages on their way to its destination.
	desired = topology.KeepLibraryBindings(spec, desired, actual)
	changes := topology.Diff(desired, actual)
	return len(changes) > 0, r.apply(ctx, client, spec, changes, force)
}

// deleteEmptied waits up to wait for the draining generations to empty
// (see drain.Empty; switched is when the last one stopped taking messages,
// zero when not in this update), deletes those that did, and returns the
// generations that still drain and the messages their queues hold. A
// message that reaches a generation between the count and the deletion
// keeps it, with a warning: it drains on, and a later apply deletes it.
func (r *DelayQueueSetResource) deleteEmptied(ctx context.Context, client *broker.Client, spec topology.Spec, draining []topology.Generation,
	wait time.Duration, switched time.Time,
) (still []topology.Generation, counts map[string]int64, diags diag.Diagnostics, err error) {
	counts, empty, err := drain.Empty(ctx, client, r.data.clock, spec, draining, wait, switched)
	if err != nil || len(empty) == 0 {
		return draining, counts, nil, err
	}
	still = slices.DeleteFunc(slices.Clone(draining), func(g topology.Generation) bool { return slices.Contains(empty, g) })
	actual, err := client.ReadSetOf(ctx, spec.VHost, spec.Name, spec.Layout)
	if err == nil {
		_, err = r.applyGenerations(ctx, client, spec, still, actual, false)
	}
	var refused *queuesHoldMessagesError
	var notEmpty *broker.QueueNotEmptyError
	var uncounted *broker.UncountedError
	if errors.As(err, &refused) || errors.As(err, &notEmpty) || errors.As(err, &uncounted) {
		diags.AddWarning("A Generation Still Drains", fmt.Sprintf("A generation the counts found empty took a message "+
			"before it was deleted, so it was kept: it drains on, and the next apply that finds it empty deletes it. "+
			"Nothing needs doing; its messages leave on time. The broker said: %v", err))
		still, err = draining, nil
	}
	if err != nil {
		return nil, nil, diags, err
	}
	counts, err = r.drainingCounts(ctx, client, spec, still, switched)
	return still, counts, diags, err
}

// drainingCounts counts the messages each queue of the draining
// generations holds, as a refresh shows them: by the statistics, and
// exactly where they count nothing (see drain.Refreshed), the generation
// switched from last, at switched, only once its statistics have settled.
func (r *DelayQueueSetResource) drainingCounts(ctx context.Context, client drain.Counter, spec topology.Spec,
	draining []topology.Generation, switched time.Time,
) (map[string]int64, error) {
	return drain.Refreshed(ctx, client, spec, draining, drain.Settled(r.data.clock.Now(), switched))
}
