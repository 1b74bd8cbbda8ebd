package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

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
	if req.State.Raw.IsNull() || !resp.Plan.Raw.Equal(req.State.Raw) {
		// A create or a change: a refresh and a plan without one cost
		// the policies' reads nothing.
		resp.Diagnostics.Append(r.lengthLimitWarnings(ctx, resolved, desired)...)
	}
	if !req.State.Raw.IsNull() && !resp.Plan.Raw.Equal(req.State.Raw) {
		resp.Diagnostics.Append(leaveToApply(ctx, plan, state, &resp.Plan)...)
	}
}

func (r *DelayQueueSetResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data, resp.Diagnostics = configuredData(req.ProviderData, "Resource")
}

func (r *DelayQueueSetResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan delayQueueSetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, plan.delaySpecModel)...)
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

// Read refreshes the state from the broker. The state ImportState writes
// holds only the import ID's parts: readImportedSet reads that set and
// infers the rest of its state from its objects, and the refresh goes on
// from there.
func (r *DelayQueueSetResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state delayQueueSetModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, state.delaySpecModel)...)
	client, diags := r.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	read := readStateSet
	if isImportStub(state) {
		read = readImportedSet
	}
	actual, found, diags := read(ctx, client, &state)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !found {
		resp.State.RemoveResource(ctx) // shows as a create in the next plan
		return
	}
	r.refresh(ctx, client, state, actual, req.Private, resp)
}

func (r *DelayQueueSetResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan delayQueueSetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, plan.delaySpecModel)...)
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
		switched = r.data.clock.Now()
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

// ImportState takes an ID "<name>@<vhost>", such as "delay@/", or
// "<url-escaped vhost>/<name>", such as "%2F/delay", optionally followed by
// "/<layout>" (parseImportID), or an identity (importTarget); the state's ID
// is always the second form. Read then infers the rest of the spec from the
// broker, and the layout when the ID names none.
func (r *DelayQueueSetResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	vhost, name, layout, err := importTarget(ctx, req)
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
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, delaySpecModel{VHost: types.StringValue(vhost), Name: types.StringValue(name)})...)
}
