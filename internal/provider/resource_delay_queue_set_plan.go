package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The steps of ModifyPlan: the models it is given, the spec it resolves,
// and what it leaves to the apply. The generations it plans are in
// resource_delay_queue_set_generations.go.

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
