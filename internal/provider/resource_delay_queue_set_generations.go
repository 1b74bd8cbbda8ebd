package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
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
// empty, each of which it warns of (see delayset.CalledEmpty); then it is
// known after the apply.
func (r *DelayQueueSetResource) plannedDraining(ctx context.Context, private privateState, state types.List, resolved topology.Spec,
	current int, draining []topology.Generation, messages []int64,
) (types.List, diag.Diagnostics) {
	planned := state
	if resolved.Generation != current {
		planned = types.ListUnknown(drainingObjectType)
	}
	switched, diags := switchedAt(ctx, private)
	for _, g := range delayset.CalledEmpty(draining, messages, delayset.Settled(r.data.clock.Now(), switched)) {
		diags.AddWarning("A Draining Generation Is Empty",
			fmt.Sprintf("Generation %d of the delay queue set %q held no message at the last refresh, by the queues' statistics: "+
				"this apply deletes its %d queues and their exchanges if a look into each finds it empty.", g.Number, resolved.Name, len(g.Queues(resolved.Name))))
		planned = types.ListUnknown(drainingObjectType)
	}
	return planned, diags
}
