package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
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
	sets, diags := r.sets()
	resp.Diagnostics.Append(diags...)
	spec, diags := specOf(plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	result, err := sets.Create(ctx, spec)
	var exists *delayset.ExistsError
	if errors.As(err, &exists) {
		resp.Diagnostics.Append(alreadyExists(spec, exists.Found)...)
		return
	}
	if stage, _ := stageOf(err); stage == delayset.Reading {
		resp.Diagnostics.Append(brokerError("create", spec, err, "")...)
		return
	}
	// State is saved even after a failure part-way, so that no object the
	// broker made is forgotten: Terraform marks the set tainted, and the next
	// apply deletes what exists (the usual empty-queue checks apply) and
	// creates it again. Without state, the next Create would find the objects
	// and refuse, like for a set made by hand.
	if err == nil {
		resp.Diagnostics.Append(showPlacement(&plan, spec, result)...)
	} else {
		noPlacement(&plan)
	}
	resp.Diagnostics.Append(noteDeclared(ctx, resp.Private, result.Declared)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err != nil {
		resp.Diagnostics.Append(setError("create", spec, err, map[delayset.Stage]string{delayset.Applying: "The set may be partly " +
			"created. Terraform marks it tainted: the next apply deletes the objects that exist, refusing as always to delete " +
			"queues that hold messages, and creates the set again. To keep what exists and only add what is missing, run " +
			"`terraform untaint` on this resource before the next apply."})...)
	}
}

// Read refreshes the state from the broker. The state ImportState writes
// holds only the import ID's parts (isImportStub): then the set is
// imported, its spec inferred from its objects, and the layout when the ID
// names none.
func (r *DelayQueueSetResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state delayQueueSetModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, state.delaySpecModel)...)
	sets, diags := r.sets()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	vhost, name := state.VHost.ValueString(), state.Name.ValueString()
	var result delayset.Result
	var found bool
	var err error
	imported := isImportStub(state)
	if imported {
		layout := topology.Layout("")
		if !state.Layout.IsNull() {
			layout = layoutOf(state.Layout)
		}
		result, found, err = sets.Import(ctx, vhost, name, layout)
	} else {
		prior, specDiags := rememberedOf(ctx, state, req.Private)
		resp.Diagnostics.Append(specDiags.Warnings()...)
		result, found, err = sets.Refresh(ctx, prior)
		if err != nil && prior.Unresolved {
			resp.Diagnostics.Append(specDiags.Errors()...) // why the set cannot be planned
			return
		}
	}
	var importErr *delayset.ImportError
	switch {
	case errors.As(err, &importErr):
		hint := ""
		if importErr.LayoutsMixed {
			hint = fmt.Sprintf(". If they are those of two layouts, name the one to import at the end of the import ID: "+
				"%s/<layout>, one of %s.", importID(vhost, name), quoted(topology.Layouts))
		}
		resp.Diagnostics.Append(cannotImport(vhost, name, importErr.Err, hint))
		return
	case err != nil:
		resp.Diagnostics.Append(brokerError("read", topology.Spec{Name: name, VHost: vhost, Layout: layoutOf(state.Layout)}, err, "")...)
		return
	case !found:
		tflog.Warn(ctx, "the vhost or every object of the delay queue set is gone; removing it from state",
			map[string]any{"vhost": vhost, "name": name})
		resp.State.RemoveResource(ctx) // shows as a create in the next plan
		return
	}
	spec := result.Spec
	if imported {
		setSpec(&state, spec)
	} else if int64(spec.Generation) != state.Generation.ValueInt64() || int64(spec.FormatGeneration) != state.ExchangeGeneration.ValueInt64() {
		setGeneration(&state, spec) // the broker holds a generation an apply cut off began
	}
	resp.Diagnostics.Append(noteDriftedHolding(ctx, resp.Private, result.DriftedHolding)...)
	resp.Diagnostics.Append(noteDeclared(ctx, resp.Private, result.Declared)...)
	state.Draining, diags = drainingValue(spec.Name, result.Draining, result.Counts)
	resp.Diagnostics.Append(diags...)
	setPlanned(&state, spec, result.Set)
	setPlacement(&state, result.Placements)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *DelayQueueSetResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state delayQueueSetModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, plan.delaySpecModel)...)
	sets, diags := r.sets()
	resp.Diagnostics.Append(diags...)
	spec, diags := specOf(plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	prior, priorDiags := rememberedOf(ctx, state, req.Private)
	resp.Diagnostics.Append(priorDiags.Warnings()...) // a prior state that cannot be planned keeps nothing
	wait, _ := time.ParseDuration(plan.MigrationWait.ValueString())
	result, err := sets.Update(ctx, spec, prior, delayset.UpdateOptions{Wait: wait, Force: plan.ForceDestroy.ValueBool()})
	if !result.SwitchedAt.Equal(prior.SwitchedAt) {
		resp.Diagnostics.Append(noteSwitchedAt(ctx, resp.Private, result.SwitchedAt)...)
	}
	if err != nil {
		// After a failure the state keeps the prior values: the next refresh
		// reads what the broker has, and the next apply makes what is missing.
		resp.Diagnostics.Append(setError("update", spec, err, map[delayset.Stage]string{
			delayset.Applying: "Part of the change may have been made. The next apply reads the set again and makes only what is still missing.",
			delayset.Draining: "The change is made; the older generations drain on, and the next apply deletes those it finds empty.",
		})...)
		return
	}
	resp.Diagnostics.Append(setWarnings(spec, result.Warnings)...)
	plan.Draining, diags = drainingValue(spec.Name, result.Draining, result.Counts)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(noteDriftedHolding(ctx, resp.Private, nil)...) // repaired: the next refresh looks again
	resp.Diagnostics.Append(noteDeclared(ctx, resp.Private, result.Declared)...)
	resp.Diagnostics.Append(showPlacement(&plan, spec, result)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *DelayQueueSetResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state delayQueueSetModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	sets, diags := r.sets()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	prior, _ := rememberedOf(ctx, state, req.Private) // a state that cannot be planned is read by listing
	if err := sets.Destroy(ctx, prior, state.ForceDestroy.ValueBool()); err != nil {
		// The set stays in state; the next refresh sees what is left.
		spec := topology.Spec{Name: state.Name.ValueString(), VHost: state.VHost.ValueString(), Layout: layoutOf(state.Layout)}
		resp.Diagnostics.Append(setError("destroy", spec, err, map[delayset.Stage]string{
			delayset.Applying: "Part of the set may have been deleted. Run destroy again: it deletes what remains.",
		})...)
	}
}

// sets is package delayset over the provider's broker client and clock.
func (r *DelayQueueSetResource) sets() (delayset.Sets, diag.Diagnostics) {
	client, diags := r.data.brokerClient()
	if diags.HasError() {
		return delayset.Sets{}, diags
	}
	return delayset.Sets{Broker: client, Clock: r.data.clock}, diags
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
