package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The steps of ModifyPlan: the models it is given, the spec it resolves,
// and what it leaves to the apply. The generations it plans are below.

// planModels reads the plan, the configuration and the prior state (empty
// for a create) that ModifyPlan is given.
func planModels(ctx context.Context, req resource.ModifyPlanRequest) (plan, config, state delayQueueSetModel, diags diag.Diagnostics) {
	diags.Append(req.Plan.Get(ctx, &plan)...)
	diags.Append(req.Config.Get(ctx, &config)...)
	if diags.HasError() || req.State.Raw.IsNull() {
		return plan, config, state, diags
	}
	diags.Append(req.State.Get(ctx, &state)...)
	return plan, config, state, diags
}

// resolvedPlan resolves the spec plan asks for, and, when the set exists,
// the state's (current). Levels, the strategy and the leader locator are
// derived unless configured, so plan starts from the configuration's
// values, not from the prior state's; an unset leader locator is
// topology.UnsetLeaderLocator's. ok is false when the plan cannot be
// resolved yet: ValidateConfig reports invalid values, and unknown ones
// leave the computed values unknown.
func resolvedPlan(plan *delayQueueSetModel, config, state delayQueueSetModel, exists bool) (
	resolved topology.Spec, current *topology.Spec, ok bool, diags diag.Diagnostics,
) {
	plan.Levels, plan.DeadLetterStrategy, plan.QueueLeaderLocator = config.Levels, config.DeadLetterStrategy, config.QueueLeaderLocator
	spec, unknown, specDiags := specFromModel(plan.delaySpecModel)
	if specDiags.HasError() || len(unknown) > 0 {
		return resolved, nil, false, nil
	}
	resolved, err := topology.Resolve(spec)
	if err != nil {
		return resolved, nil, false, nil
	}
	if exists {
		stateSpec, diags := specOf(state)
		if diags.HasError() {
			return resolved, nil, false, diags
		}
		current = &stateSpec
	}
	if config.QueueLeaderLocator.IsNull() {
		resolved.QueueLeaderLocator = topology.UnsetLeaderLocator(resolved, current)
	}
	return resolved, current, true, nil
}

// leaveToApply plans as known after apply what an update leaves: the
// placement it reads (the framework leaves the prior one planned when only
// the broker drifted), and, while generations drain, those it finds empty
// and deletes and the others' message counts.
func leaveToApply(ctx context.Context, plan, state delayQueueSetModel, planned *tfsdk.Plan) diag.Diagnostics {
	plan.Placement, plan.Leaders = types.StringUnknown(), types.MapUnknown(types.Int64Type)
	plan.Members = plannedMembers(plan, state)
	if len(state.Draining.Elements()) > 0 {
		plan.Draining = types.ListUnknown(drainingObjectType)
	}
	return planned.Set(ctx, &plan)
}

// ValidateConfig checks the whole spec with the planner at plan time, so every
// problem is reported at once against the attribute it concerns.
func (r *DelayQueueSetResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config delayQueueSetModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if wait := config.MigrationWait; !wait.IsNull() && !wait.IsUnknown() {
		if d, err := time.ParseDuration(wait.ValueString()); err != nil || d < 0 || d > maxMigrationWait {
			resp.Diagnostics.AddAttributeError(path.Root("migration_wait"), "Invalid Migration Wait",
				fmt.Sprintf("migration_wait: %q is not a duration from 0s to %s; write it like \"0s\", \"30s\" or \"5m\"", wait.ValueString(), maxMigrationWait))
		}
	}
	spec, unknown, diags := specFromModel(config.delaySpecModel)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	resp.Diagnostics.Append(problemDiagnostics(topology.Validate(spec), "Invalid Delay Queue Set", func(problem *topology.FieldError) bool {
		// Judged once the value is known.
		return unknown[problem.Field] || unknown[routeField(problem.Route, problem.Field)] ||
			(sizeFields[problem.Field] && (unknown["levels"] || unknown["max_delay"] || unknown["resolution"] || unknown["radix"]))
	})...)
}

// sizeFields are the attributes the planner judges together: the number of
// levels follows from max_delay, resolution and radix, unless levels is set,
// and the top queue's TTL from all of them.
var sizeFields = map[string]bool{"levels": true, "max_delay": true, "resolution": true}

// ModifyPlan computes everything the planner derives, so `terraform plan`
// shows the levels, the effective max delay and every object and binding.
func (r *DelayQueueSetResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy: Delete checks the queues
	}
	plan, config, state, diags := planModels(ctx, req)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	// A change of layout replaces the set (requiresReplaceOfLayout): the
	// new one is planned like a set of its own, from nothing.
	exists := !req.State.Raw.IsNull() && layoutOf(state.Layout) == layoutOf(plan.Layout)
	resolved, current, ok, diags := resolvedPlan(&plan, config, state, exists)
	resp.Diagnostics.Append(diags...)
	if !ok {
		return
	}
	plan.Draining = types.ListValueMust(drainingObjectType, nil)
	if exists {
		resolved, plan.Draining, ok, diags = r.planGeneration(ctx, req.Private, state, *current, resolved)
		resp.Diagnostics.Append(diags...)
		if !ok {
			return
		}
	}
	desired, err := delayset.Desired(resolved, nil, shownOf(state))
	if err != nil {
		resp.Diagnostics.Append(problemDiagnostics(err, "Invalid Delay Queue Set", nil)...)
		return
	}
	if exists {
		resp.Diagnostics.Append(removedRoutesStayBound(state, resolved, desired)...)
	}
	setPlanned(&plan, resolved, desired)
	if resp.Diagnostics.HasError() {
		return
	}
	if req.State.Raw.IsNull() {
		plan.Members = plannedMembers(plan, delayQueueSetModel{}) // each queue known after apply
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	if req.State.Raw.IsNull() || !resp.Plan.Raw.Equal(req.State.Raw) {
		// A create or a change: a refresh and a plan without one cost
		// the policies' reads nothing.
		resp.Diagnostics.Append(r.lengthLimitWarnings(ctx, resolved, desired)...)
	}
	if !req.State.Raw.IsNull() && !resp.Plan.Raw.Equal(req.State.Raw) {
		resp.Diagnostics.Append(leaveToApply(ctx, plan, state, &resp.Plan)...)
	}
}

// The generations a plan shows: the one an update takes, and what it says
// of those that drain. The decisions are package delayset's (CalledEmpty,
// Settled); here they meet the framework.

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

// policiesTimeout bounds the plan's read of a vhost's policies: the
// warning it may bring is not worth a slow plan.
const policiesTimeout = 10 * time.Second

// lengthLimitWarnings warns at plan time when a policy or operator policy
// of the set's vhost limits the length of its TTL queues so that a full
// one sends messages on early (broker.LengthLimit.SendsEarly), as managed
// brokers' operator policies often do. ModifyPlan asks for it in the plans
// of a create or a change only, so that a refresh and a plan without a
// change make no more requests. The policies are read once per vhost and
// run; a user who may not read them, or a broker that does not answer,
// gets no warning and no error: the plan does not depend on it.
func (r *DelayQueueSetResource) lengthLimitWarnings(ctx context.Context, spec topology.Spec, desired topology.Topology) diag.Diagnostics {
	if r.data == nil || r.data.clientErr != nil || r.data.client == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, policiesTimeout)
	defer cancel()
	policies, ok, err := r.data.client.VHostPolicies(ctx, spec.VHost)
	if err != nil || !ok {
		tflog.Debug(ctx, "the vhost's policies were not read: no check of the queues' length limits", map[string]any{
			"vhost": spec.VHost, "readable": ok, "error": fmt.Sprint(err)})
		return nil
	}
	return lengthLimitDiagnostics(spec, desired.Queues, policies)
}

// lengthLimitDiagnostics is one warning naming the policies that make a
// full TTL queue of the set send messages on early, and what to change;
// none when no such limit applies.
func lengthLimitDiagnostics(spec topology.Spec, queues []topology.Queue, policies broker.VHostPolicies) diag.Diagnostics {
	var limited []string
	var limit broker.LengthLimit
	ttlQueues := 0
	for _, q := range queues {
		if q.Arguments.MessageTTL == 0 {
			continue // not a level: the parking lot
		}
		ttlQueues++
		if l := policies.LengthLimitOf(q); l.SendsEarly() {
			limited = append(limited, q.Name)
			limit = l
		}
	}
	if len(limited) == 0 {
		return nil
	}
	var diags diag.Diagnostics
	diags.AddWarning("Queue Length Limit Sends Delayed Messages Early",
		fmt.Sprintf("The %s of vhost %q limits the length of %d of the %d TTL queues of the delay queue set %q (%s). A TTL queue that "+
			"reaches the limit %s: the broker dead-letters that message to the set's next level at once, and it arrives "+
			"before its delay is over. The set works while no level queue holds more messages than the limit at once.\n\n"+
			"To keep every delay: have the broker's operator exclude the set's queues from the policy (a pattern that "+
			"matches none of %s), or raise the limit above the most messages one level holds at once. With "+
			"queue_type = \"quorum\" and dead_letter_strategy = \"at-least-once\" the set's queues overflow with "+
			"reject-publish instead, which refuses a message rather than dead-letter it (a publisher with confirms gets "+
			"a nack).",
			limitedBy(limit), spec.VHost, len(limited), ttlQueues, spec.Name, limitText(limit),
			overflowText(limit.Overflow), exampleNames(limited)))
	return diags
}

// limitedBy names the policies that set the limit.
func limitedBy(l broker.LengthLimit) string {
	var by []string
	if l.OperatorPolicy != "" {
		by = append(by, fmt.Sprintf("operator policy %q", l.OperatorPolicy))
	}
	if l.Policy != "" {
		by = append(by, fmt.Sprintf("policy %q", l.Policy))
	}
	if len(by) == 0 {
		return "queue arguments"
	}
	return strings.Join(by, " and the ")
}

func limitText(l broker.LengthLimit) string {
	var parts []string
	if l.MaxLength > 0 {
		parts = append(parts, fmt.Sprintf("max-length %d", l.MaxLength))
	}
	if l.MaxLengthBytes > 0 {
		parts = append(parts, fmt.Sprintf("max-length-bytes %d", l.MaxLengthBytes))
	}
	return strings.Join(append(parts, "overflow "+l.Overflow), ", ")
}

func overflowText(overflow string) string {
	if overflow == broker.OverflowRejectPublishDLX {
		return "refuses each new message (overflow reject-publish-dlx)"
	}
	return "drops its oldest message (overflow " + overflow + ")"
}

// exampleNames quotes the first two names and says how many more.
func exampleNames(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	quoted := make([]string, 0, 2)
	for _, n := range names[:min(2, len(names))] {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	text := strings.Join(quoted, ", ")
	if more := len(names) - len(quoted); more > 0 {
		text += fmt.Sprintf(" and %d more of the set's queues", more)
	}
	return text
}
