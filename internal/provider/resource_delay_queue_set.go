package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider/drain"
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
	// clock times the draining of generations; nil is the machine's.
	clock drain.Clock
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
	var plan, config delayQueueSetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state delayQueueSetModel
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	// A change of layout replaces the set (requiresReplaceOfLayout): the
	// new one is planned like a set of its own, from nothing.
	exists := !req.State.Raw.IsNull() && layoutOf(state.Layout) == layoutOf(plan.Layout)
	// Levels, the strategy and the leader locator are derived unless
	// configured: start from the configuration's values, not from the prior
	// state's.
	plan.Levels, plan.DeadLetterStrategy, plan.QueueLeaderLocator = config.Levels, config.DeadLetterStrategy, config.QueueLeaderLocator
	spec, unknown, diags := specFromModel(plan.delaySpecModel)
	if diags.HasError() || len(unknown) > 0 {
		return // ValidateConfig reports the errors; unknown values leave the computed ones unknown
	}
	resolved, err := topology.Resolve(spec)
	if err != nil {
		return // ValidateConfig has reported it
	}
	var current *topology.Spec // the state's, resolved once, when the set exists
	if exists {
		stateSpec, diags := specOf(state)
		resp.Diagnostics.Append(diags...)
		if diags.HasError() {
			return
		}
		current = &stateSpec
	}
	if config.QueueLeaderLocator.IsNull() {
		resolved.QueueLeaderLocator = topology.UnsetLeaderLocator(resolved, current)
	}
	plan.Draining = types.ListValueMust(drainingObjectType, nil)
	if exists {
		var ok bool
		resolved, plan.Draining, ok, diags = r.planGeneration(ctx, req.Private, state, *current, resolved)
		resp.Diagnostics.Append(diags...)
		if !ok {
			return
		}
	}
	desired, err := desiredSet(resolved, nil, shownQueues(state))
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
	// What an update leaves is known after it: the placement it reads (the
	// framework leaves the prior one planned when only the broker drifted)
	// but the members of the queues it keeps, and, while generations drain,
	// those it finds empty and deletes and the others' message counts.
	if !req.State.Raw.IsNull() && !resp.Plan.Raw.Equal(req.State.Raw) {
		plan.Placement, plan.Leaders = types.StringUnknown(), types.MapUnknown(types.Int64Type)
		plan.Members = plannedMembers(plan, state)
		if len(state.Draining.Elements()) > 0 {
			plan.Draining = types.ListUnknown(drainingObjectType)
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	}
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
	if layout := layoutOf(plan.Layout); layout.DeclaredByLibrary() && r.data != nil {
		if other := r.data.claimLibraryLayout(layout, plan.VHost.ValueString(), plan.Name.ValueString()); other != "" {
			resp.Diagnostics.AddError("Delay Queue Set Already Exists",
				fmt.Sprintf("The set %q of the %s layout in vhost %q is being created in this same run. The layout's "+
					"objects have the library's names, so a vhost holds at most one set of that layout: keep one of "+
					"the two resources.", other, layout, plan.VHost.ValueString()))
			return
		}
	}
	client, spec, desired, actual, diags := r.desiredAndActual(ctx, "create", plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(actual.Exchanges)+len(actual.Queues) > 0 {
		resp.Diagnostics.Append(alreadyExists(spec, actual)...)
		return
	}
	changes := topology.Diff(desired, actual)
	err := r.apply(ctx, client, spec, changes, false)
	// State is saved even after a failure part-way, so that no object the
	// broker made is forgotten: Terraform marks the set tainted, and the next
	// apply deletes what exists (the usual empty-queue checks apply) and
	// creates it again. Without state, the next Create would find the objects
	// and refuse, like for a set made by hand.
	if err == nil {
		resp.Diagnostics.Append(readPlacement(ctx, client, spec, desired, &plan)...)
	} else {
		noPlacement(&plan)
	}
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
	// Just imported: only the name, the vhost and perhaps the layout are known.
	importing := state.Levels.IsNull()
	layout := layoutOf(state.Layout)
	var actual topology.Topology
	var err error
	switch {
	case importing && state.Layout.IsNull():
		actual, err = client.ReadSetOfAnyLayout(ctx, vhost, name)
	case importing:
		actual, err = client.ReadSetOf(ctx, vhost, name, layout)
	default:
		actual, err = readKnownSet(ctx, client, state, broker.ReadOptions{ShareBindings: true})
	}
	if errors.Is(err, broker.ErrVHostNotFound) {
		tflog.Warn(ctx, "vhost of the delay queue set is gone; removing the set from state", map[string]any{"vhost": vhost})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(brokerError("read", topology.Spec{Name: name, VHost: vhost, Layout: layout}, err, "")...)
		return
	}
	if len(actual.Exchanges)+len(actual.Queues) == 0 {
		tflog.Warn(ctx, "no object of the delay queue set exists; removing it from state", map[string]any{"vhost": vhost, "name": name})
		resp.State.RemoveResource(ctx)
		return
	}

	if importing && state.Layout.IsNull() {
		// The objects tell the layout; then only that layout's count.
		told, err := topology.Infer(name, actual)
		if err != nil {
			resp.Diagnostics.AddError("Cannot Import the Delay Queue Set",
				fmt.Sprintf("The objects of %q in vhost %q do not explain a delay queue set: %s. If they are those of two "+
					"layouts, name the one to import at the end of the import ID: %s/<layout>, one of %s.",
					name, vhost, err, importID(vhost, name), quoted(topology.Layouts)))
			return
		}
		layout = told.Layout.OrDefault()
		if actual, err = client.ReadSetOf(ctx, vhost, name, layout); err != nil {
			resp.Diagnostics.Append(brokerError("read", topology.Spec{Name: name, VHost: vhost, Layout: layout}, err, "")...)
			return
		}
	}
	inferred, draining, inferErr := topology.InferLayout(name, layout, actual)
	if importing {
		if inferErr != nil {
			resp.Diagnostics.AddError("Cannot Import the Delay Queue Set",
				fmt.Sprintf("The objects of %q in vhost %q do not explain a delay queue set: %s", name, vhost, inferErr))
			return
		}
		setSpec(&state, inferred)
	}
	spec, desired, diags := planOf(state, actual)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if inferErr != nil {
		// The broker's objects explain no set: drift, which the next plan
		// shows. The state's generations stand, the draining ones too.
		draining, _ = drainingOf(state)
	} else if followed := topology.FollowBroker(spec, inferred); followed.Generation != spec.Generation ||
		followed.FormatGeneration != spec.FormatGeneration {
		// The broker holds a generation the state does not know: an apply
		// was cut off in the middle of a change. The next plan starts from it.
		setGeneration(&state, followed)
		if spec, desired, diags = planOf(state, actual); diags.HasError() {
			resp.Diagnostics.Append(diags...)
			return
		}
	}
	// Counted by the statistics, and exactly only where they count nothing
	// (see drain.Refreshed).
	switched, diags := switchedAt(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	counts, err := drain.Refreshed(ctx, client, spec, draining, drain.Settled(r.drainClock().Now(), switched))
	if err != nil {
		resp.Diagnostics.Append(brokerError("read", spec, err, "")...)
		return
	}
	resp.Diagnostics.Append(r.noteDriftedHolding(ctx, client, spec, desired, actual, resp.Private)...)
	state.Draining, diags = drainingValue(name, draining, counts)
	resp.Diagnostics.Append(diags...)
	// Listed in the plan's order so that an unchanged set reads back exactly
	// as planned; the draining generations show in draining instead. The
	// delivery bindings a library made for itself do not show at all: the set
	// leaves them to the library, so they are never drift.
	current := topology.WithoutLibraryBindings(spec, desired, topology.CurrentObjects(spec, actual))
	setPlanned(&state, spec, topology.Align(current, desired))
	setPlacement(&state, client.Placements(vhost, actual.QueueNames()))
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *DelayQueueSetResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan delayQueueSetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client, spec, _, actual, diags := r.desiredAndActual(ctx, "update", plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	draining, err := keepDraining(ctx, client, spec, actual, req.State)
	changed := false
	if err == nil {
		// After a failure the state keeps the prior values: the next refresh
		// reads what the broker has, and the next apply makes what is missing.
		changed, err = r.applyGenerations(ctx, client, spec, draining, actual, plan.ForceDestroy.ValueBool())
	}
	if err != nil {
		resp.Diagnostics.Append(brokerError("update", spec, err, "Part of the change may have been made. "+
			"The next apply reads the set again and makes only what is still missing.")...)
		return
	}
	switched, diags := switchedAt(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	if changed && len(draining) > 0 {
		// Taken for a switch, which it is unless only routes or drift
		// changed beside a draining generation, or finishes one an apply
		// cut off began: either way the last generation to drain may have
		// taken messages until now.
		switched = r.drainClock().Now()
		resp.Diagnostics.Append(noteSwitchedAt(ctx, resp.Private, switched)...)
	}
	// Wait for the draining generations to empty, then delete those that did.
	wait, _ := time.ParseDuration(plan.MigrationWait.ValueString())
	draining, counts, diags, err := r.deleteEmptied(ctx, client, spec, draining, wait, switched)
	resp.Diagnostics.Append(diags...)
	if err != nil {
		resp.Diagnostics.Append(brokerError("update", spec, err, "The change is made; the older generations drain on, "+
			"and the next apply deletes those it finds empty.")...)
		return
	}
	plan.Draining, diags = drainingValue(spec.Name, draining, counts)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, driftedHoldingKey, nil)...) // repaired: the next refresh looks again
	if after, err := topology.PlanGenerations(spec, draining); err == nil {
		resp.Diagnostics.Append(readPlacement(ctx, client, spec, after, &plan)...)
	} else {
		noPlacement(&plan) // applyGenerations has planned the same without error
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
	spec := topology.Spec{Name: state.Name.ValueString(), VHost: state.VHost.ValueString(), Layout: layoutOf(state.Layout)}
	// The objects the state plans are deleted by name, without reading them
	// first: a delete of what is gone already succeeds, and a queue is
	// deleted only if empty either way. A state whose last refresh found
	// more than its plan (a stray level, a drifted binding) or that plans no
	// set is read, so that none of that is left behind or, holding
	// messages, stripped of the exchanges it dead-letters to.
	doomed, known := knownSet(state)
	if !known || !plansAllOf(doomed, state) {
		var err error
		doomed, err = readKnownSet(ctx, client, state, broker.ReadOptions{})
		if errors.Is(err, broker.ErrVHostNotFound) {
			return // the vhost and everything in it are gone
		}
		if err != nil {
			resp.Diagnostics.Append(brokerError("destroy", spec, err, "")...)
			return
		}
	}
	// Teardown deletes no binding to an object outside the set on its own:
	// the delivery exchange's bindings, the routes' and a library's, stay
	// while the queues are checked and deleted, so a message leaving level 0
	// meanwhile still reaches its destination, and go with the exchange.
	changes := topology.Teardown(doomed)
	err := r.apply(ctx, client, spec, changes, state.ForceDestroy.ValueBool())
	if errors.Is(err, broker.ErrVHostNotFound) {
		return // the vhost and everything in it are gone
	}
	if err != nil {
		// The set stays in state; the next refresh sees what is left.
		resp.Diagnostics.Append(brokerError("destroy", spec, err, "Part of the set may have been deleted. "+
			"Run destroy again: it deletes what remains.")...)
	}
}

// ImportState takes an ID "<url-escaped vhost>/<name>", such as "%2F/delay",
// optionally followed by "/<layout>"; Read then infers the rest of the spec
// from the broker, and the layout when the ID names none.
func (r *DelayQueueSetResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	vhost, name, layout, err := parseImportID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid Import ID", err.Error())
		return
	}
	if layout != "" {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("layout"), string(layout))...)
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), importID(vhost, name))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("vhost"), vhost)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("migration_wait"), defaultMigrationWait.String())...)
}
