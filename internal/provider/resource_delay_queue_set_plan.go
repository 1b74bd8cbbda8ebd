package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The steps of ModifyPlan: the models it is given, the spec it resolves,
// and how it shows delayset.Plan's decisions and what it leaves to the apply.

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

// configuredSpec resolves the spec plan asks for. Levels, the strategy and
// the leader locator are derived unless configured, so plan starts from
// the configuration's values, not from the prior state's; an unset leader
// locator is delayset.Plan's to choose. ok is false when the plan cannot
// be resolved yet: ValidateConfig reports invalid values, and unknown ones
// leave the computed values unknown.
func configuredSpec(plan *delayQueueSetModel, config delayQueueSetModel) (resolved topology.Spec, ok bool) {
	plan.Levels, plan.DeadLetterStrategy, plan.QueueLeaderLocator = config.Levels, config.DeadLetterStrategy, config.QueueLeaderLocator
	spec, unknown, specDiags := specFromModel(plan.delaySpecModel)
	if specDiags.HasError() || len(unknown) > 0 {
		return resolved, false
	}
	resolved, err := topology.Resolve(spec)
	return resolved, err == nil
}

// priorOf is what the state remembers of the set a plan starts from, for
// delayset.Plan: nothing for a create. Its diagnostics' errors matter only
// when the plan is an update (planDiagnostics).
func priorOf(ctx context.Context, req resource.ModifyPlanRequest, state delayQueueSetModel) (delayset.Remembered, diag.Diagnostics) {
	if req.State.Raw.IsNull() {
		return delayset.Remembered{}, nil
	}
	prior, diags := rememberedOf(ctx, state, req.Private)
	drifted, noteDiags := driftedHolding(ctx, req.Private)
	prior.DriftedHolding = drifted
	diags.Append(noteDiags...)
	return prior, diags
}

// plannedDraining is the draining attribute a plan shows: none for a new
// set, the state's while the apply keeps it, else known after the apply.
func plannedDraining(planned delayset.Planned, state delayQueueSetModel) types.List {
	switch {
	case !planned.Updates:
		return types.ListValueMust(drainingObjectType, nil)
	case planned.DrainingKnown:
		return state.Draining
	}
	return types.ListUnknown(drainingObjectType)
}

// planTime is the provider's clock's time; before the provider is
// configured, the zero time, by which no noted switch has settled.
func (r *DelayQueueSetResource) planTime() time.Time {
	if r.data == nil || r.data.clock == nil {
		return time.Time{}
	}
	return r.data.clock.Now()
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
	resolved, ok := configuredSpec(&plan, config)
	if !ok {
		return
	}
	prior, priorDiags := priorOf(ctx, req, state)
	planned, err := delayset.Plan(prior, resolved, r.planTime())
	resp.Diagnostics.Append(planDiagnostics(err, priorDiags)...)
	if err != nil {
		return
	}
	resp.Diagnostics.Append(setWarnings(planned.Spec, planned.Warnings)...)
	resolved, desired := planned.Spec, planned.Set
	plan.Draining = plannedDraining(planned, state)
	setPlanned(&plan, resolved, desired)
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
