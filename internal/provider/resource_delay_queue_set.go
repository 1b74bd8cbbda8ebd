package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var (
	_ resource.Resource                   = &DelayQueueSetResource{}
	_ resource.ResourceWithConfigure      = &DelayQueueSetResource{}
	_ resource.ResourceWithValidateConfig = &DelayQueueSetResource{}
	_ resource.ResourceWithModifyPlan     = &DelayQueueSetResource{}
	_ resource.ResourceWithImportState    = &DelayQueueSetResource{}
)

// NewDelayQueueSetResource is the rabbitmq_delay_queue_set resource's constructor.
func NewDelayQueueSetResource() resource.Resource {
	return &DelayQueueSetResource{}
}

// DelayQueueSetResource declares a whole delay topology — exchanges, TTL
// queues and bindings — as one resource, planned by internal/topology.
type DelayQueueSetResource struct {
	data *providerData
}

func (r *DelayQueueSetResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_delay_queue_set"
}

func (r *DelayQueueSetResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = delayQueueSetSchema()
}

// ValidateConfig checks the whole spec with the planner at plan time, so every
// problem is reported at once against the attribute it concerns.
func (r *DelayQueueSetResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config delayQueueSetModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
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
	var plan, config delayQueueSetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Levels and the strategy are derived unless configured: start from the
	// configuration's values, not from the prior state's.
	plan.Levels, plan.DeadLetterStrategy = config.Levels, config.DeadLetterStrategy
	spec, unknown, diags := specFromModel(plan.delaySpecModel)
	if diags.HasError() || len(unknown) > 0 {
		return // ValidateConfig reports the errors; unknown values leave the computed ones unknown
	}
	resolved, desired, diags := resolveAndPlan(spec, "Invalid Delay Queue Set")
	if diags.HasError() {
		return // ValidateConfig has reported it
	}
	resp.Diagnostics.Append(setPlanned(ctx, &plan, resolved, desired)...)
	if resp.Diagnostics.HasError() {
		return
	}

	if !req.State.Raw.IsNull() {
		var state delayQueueSetModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if resp.Diagnostics.HasError() {
			return
		}
		if !sameDuration(state.Resolution, plan.Resolution) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("resolution"))
		}
		stateRadix := int64(topology.DefaultRadix) // a state written before radix existed: its set is binary
		if !state.Radix.IsNull() {
			stateRadix = state.Radix.ValueInt64()
		}
		if stateRadix != plan.Radix.ValueInt64() {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("radix"))
		}
		if !state.DeadLetterStrategy.IsNull() && state.DeadLetterStrategy.ValueString() != plan.DeadLetterStrategy.ValueString() {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("dead_letter_strategy"))
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *DelayQueueSetResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if req.ProviderData == nil {
		return // not configured yet (validation)
	}
	data, ok := req.ProviderData.(*providerData)
	if !ok {
		resp.Diagnostics.AddError("Unexpected Resource Configure Type",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", req.ProviderData))
		return
	}
	r.data = data
}

func (r *DelayQueueSetResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan delayQueueSetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, spec, desired, actual, diags := r.desiredAndActual(ctx, "create", plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(actual.Exchanges)+len(actual.Queues) > 0 {
		resp.Diagnostics.AddError("Delay Queue Set Already Exists",
			fmt.Sprintf("Objects of the set %q already exist in vhost %q (for example %s). Import the set with "+
				"`terraform import <address> %s` to manage it, or choose another name.",
				spec.Name, spec.VHost, firstObjectName(actual), importID(spec.VHost, spec.Name)))
		return
	}
	changes := topology.Diff(desired, actual)
	err := r.apply(ctx, client, spec, changes, false)
	// State is saved even after a failure part-way, so that no object the
	// broker made is forgotten: Terraform marks the set tainted, and the next
	// apply deletes what exists (the usual empty-queue checks apply) and
	// creates it again. Without state, the next Create would find the objects
	// and refuse, like for a set made by hand.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err != nil {
		resp.Diagnostics.Append(brokerError("create", spec, err, "The set may be partly created. Terraform marks it "+
			"tainted: the next apply deletes the objects that exist, refusing as always to delete queues that "+
			"hold messages, and creates the set again. To keep what exists and only add what is missing, run "+
			"`terraform untaint` on this resource before the next apply.")...)
	}
}

func (r *DelayQueueSetResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state delayQueueSetModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	client, diags := r.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	vhost, name := state.VHost.ValueString(), state.Name.ValueString()
	actual, err := client.ReadSet(ctx, vhost, name)
	if errors.Is(err, broker.ErrVHostNotFound) {
		tflog.Warn(ctx, "vhost of the delay queue set is gone; removing the set from state", map[string]any{"vhost": vhost})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(brokerError("read", topology.Spec{Name: name, VHost: vhost}, err, "")...)
		return
	}
	if len(actual.Exchanges)+len(actual.Queues) == 0 {
		tflog.Warn(ctx, "no object of the delay queue set exists; removing it from state", map[string]any{"vhost": vhost, "name": name})
		resp.State.RemoveResource(ctx)
		return
	}

	if state.Levels.IsNull() { // just imported: only the name and vhost are known
		inferred, err := topology.Infer(name, actual)
		if err != nil {
			resp.Diagnostics.AddError("Cannot Import the Delay Queue Set",
				fmt.Sprintf("The objects of %q in vhost %q do not explain a delay queue set: %s", name, vhost, err))
			return
		}
		setSpec(&state, inferred)
	}
	spec, desired, diags := planOf(state)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Listed in the plan's order so that an unchanged set reads back exactly as planned.
	resp.Diagnostics.Append(setPlanned(ctx, &state, spec, topology.Align(actual, desired))...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *DelayQueueSetResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan delayQueueSetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, spec, desired, actual, diags := r.desiredAndActual(ctx, "update", plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	// After a failure the state keeps the prior values: the next refresh
	// reads what the broker has, and the next apply makes what is missing.
	if err := r.apply(ctx, client, spec, topology.Diff(desired, actual), plan.ForceDestroy.ValueBool()); err != nil {
		resp.Diagnostics.Append(brokerError("update", spec, err, "Part of the change may have been made. "+
			"The next apply reads the set again and makes only what is still missing.")...)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *DelayQueueSetResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state delayQueueSetModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	client, diags := r.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec := topology.Spec{Name: state.Name.ValueString(), VHost: state.VHost.ValueString()}
	actual, err := client.ReadSet(ctx, spec.VHost, spec.Name)
	if errors.Is(err, broker.ErrVHostNotFound) {
		return // the vhost and everything in it are gone
	}
	if err != nil {
		resp.Diagnostics.Append(brokerError("destroy", spec, err, "")...)
		return
	}
	changes := topology.Diff(topology.Topology{VHost: spec.VHost}, actual)
	if err := r.apply(ctx, client, spec, changes, state.ForceDestroy.ValueBool()); err != nil {
		// The set stays in state; the next refresh sees what is left.
		resp.Diagnostics.Append(brokerError("destroy", spec, err, "Part of the set may have been deleted. "+
			"Run destroy again: it deletes what remains.")...)
	}
}

// desiredAndActual plans a fully known model and reads what the broker has
// of that set, for Create and Update (the action, for errors) to diff.
func (r *DelayQueueSetResource) desiredAndActual(ctx context.Context, action string, m delayQueueSetModel) (
	client *broker.Client, spec topology.Spec, desired, actual topology.Topology, diags diag.Diagnostics,
) {
	client, diags = r.data.brokerClient()
	if diags.HasError() {
		return
	}
	spec, desired, planDiags := planOf(m)
	diags.Append(planDiags...)
	if diags.HasError() {
		return
	}
	actual, err := client.ReadSet(ctx, spec.VHost, spec.Name)
	if err != nil {
		diags.Append(brokerError(action, spec, err, "")...)
	}
	return client, spec, desired, actual, diags
}

// ImportState takes an ID "<url-escaped vhost>/<name>", such as "%2F/delay";
// Read then infers the rest of the spec from the broker.
func (r *DelayQueueSetResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	vhost, name, err := parseImportID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid Import ID", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), importID(vhost, name))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("vhost"), vhost)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
}

// apply runs the changes after refusing, with every non-empty queue named,
// any deletion of a queue that holds messages unless force is set, so that a
// refused change changes nothing. The broker layer checks again at the moment
// of each deletion, for messages that arrive in between (see package broker).
func (r *DelayQueueSetResource) apply(ctx context.Context, client *broker.Client, spec topology.Spec, changes []topology.Change, force bool) error {
	var doomed []string
	for _, change := range changes {
		if change.Kind == topology.DeleteQueue {
			doomed = append(doomed, change.Queue.Name)
		}
	}
	if len(doomed) > 0 && !force {
		counts, err := client.HeldMessages(ctx, spec.VHost, doomed)
		if err != nil {
			return err
		}
		var held []string
		for _, queue := range doomed {
			if n := counts[queue]; n > 0 {
				held = append(held, fmt.Sprintf("%s holds %d message(s)", queue, n))
			}
		}
		if len(held) > 0 {
			return &queuesHoldMessagesError{held: held}
		}
	}
	started, before := time.Now(), client.Requests()
	err := client.Apply(ctx, spec.VHost, changes, broker.ApplyOptions{ForceDeleteQueues: force})
	tflog.Debug(ctx, "applied delay queue set changes", map[string]any{
		"changes": len(changes), "requests": client.Requests() - before, "duration": time.Since(started).String(),
	})
	return err
}
