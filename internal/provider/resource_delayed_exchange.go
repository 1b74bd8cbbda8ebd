package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var (
	_ resource.Resource                   = &DelayedExchangeResource{}
	_ resource.ResourceWithConfigure      = &DelayedExchangeResource{}
	_ resource.ResourceWithValidateConfig = &DelayedExchangeResource{}
	_ resource.ResourceWithModifyPlan     = &DelayedExchangeResource{}
	_ resource.ResourceWithImportState    = &DelayedExchangeResource{}
)

// NewDelayedExchangeResource is the rabbitmq_delayed_exchange resource's constructor.
func NewDelayedExchangeResource() resource.Resource {
	return &DelayedExchangeResource{}
}

// DelayedExchangeResource declares a delayed exchange: the plugin's
// x-delay header for a fixed list of delays (topology.PlanDelayed).
type DelayedExchangeResource struct {
	data *providerData
}

func (r *DelayedExchangeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_delayed_exchange"
}

func (r *DelayedExchangeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = delayedExchangeSchema()
}

// ValidateConfig refuses at plan what the planner refuses, skipping the
// values not known yet.
func (r *DelayedExchangeResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config delayedExchangeModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, skip, diags := delayedSpecOf(ctx, config)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(problemDiagnostics(topology.ValidateDelayed(spec), "Invalid Delayed Exchange", skip)...)
}

// ModifyPlan shows every object the apply makes, and the draining queues
// as known after apply whenever the apply may delete one.
func (r *DelayedExchangeResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan delayedExchangeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	spec, skip, diags := delayedSpecOf(ctx, plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || anyUnknown(skip) {
		return
	}
	resolved, err := topology.ResolveDelayed(spec)
	if err != nil {
		resp.Diagnostics.Append(problemDiagnostics(err, "Invalid Delayed Exchange", nil)...)
		return
	}
	setDelayedPlanned(&plan, resolved, topology.PlanDelayed(resolved, nil))
	plan.Draining = types.MapUnknown(types.Int64Type)
	if req.State.Raw.IsNull() {
		plan.Draining = drainingMap(nil)
	} else {
		var state delayedExchangeModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if unchanged(plan, state) {
			plan.Draining = state.Draining
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

// unchanged tells whether an apply of plan over state would change
// nothing: the same objects, and every draining queue still holding.
func unchanged(plan, state delayedExchangeModel) bool {
	if !plan.Exchanges.Equal(state.Exchanges) || !plan.Queues.Equal(state.Queues) || !plan.Bindings.Equal(state.Bindings) ||
		!plan.DelaysMS.Equal(state.DelaysMS) || state.Draining.IsNull() || state.Draining.IsUnknown() {
		return false
	}
	for _, messages := range state.Draining.Elements() {
		if n, ok := messages.(types.Int64); !ok || n.ValueInt64() == 0 {
			return false
		}
	}
	return true
}

func (r *DelayedExchangeResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data, resp.Diagnostics = configuredData(req.ProviderData, "Resource")
}

func (r *DelayedExchangeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan delayedExchangeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	exchanges, diags := r.exchanges()
	resp.Diagnostics.Append(diags...)
	spec, diags := resolvedDelayedSpec(ctx, plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, err := exchanges.Create(ctx, spec)
	var exists *delayset.ExistsError
	if errors.As(err, &exists) {
		resp.Diagnostics.AddError("Delayed Exchange Already Exists",
			fmt.Sprintf("Objects of the delayed exchange %q already exist in vhost %q (for example %s). Import it with "+
				"`terraform import <address> %s` to manage it, or choose another name.",
				spec.Name, spec.VHost, firstObjectName(exists.Found), importID(spec.VHost, spec.Name)))
		return
	}
	if stage, _ := stageOf(err); stage == delayset.Reading && err != nil {
		resp.Diagnostics.Append(delayedError("create", spec, err, "")...)
		return
	}
	// Saved even after a failure part-way, so that no object the broker
	// made is forgotten: Terraform marks it tainted and replaces it.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err != nil {
		resp.Diagnostics.Append(delayedError("create", spec, err, "The exchange may be partly created. Terraform marks it "+
			"tainted: the next apply deletes what exists, refusing as always to delete queues that hold messages, and creates it again.")...)
	}
}

// Read refreshes the state from the broker; after ImportState, whose
// state holds only the name and vhost, it infers the rest.
func (r *DelayedExchangeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state delayedExchangeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	exchanges, diags := r.exchanges()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	vhost, name := state.VHost.ValueString(), state.Name.ValueString()
	var result delayset.DelayedState
	var found bool
	var err error
	imported := state.DelaysMS.IsNull()
	if imported {
		result, found, err = exchanges.Import(ctx, vhost, name)
	} else {
		prior, priorDiags := delayedStateOf(ctx, state)
		resp.Diagnostics.Append(priorDiags...)
		result, found, err = exchanges.Refresh(ctx, prior)
	}
	var importErr *delayset.ImportError
	switch {
	case errors.As(err, &importErr):
		resp.Diagnostics.AddError("Cannot Import the Delayed Exchange",
			fmt.Sprintf("The objects of %q in vhost %q do not explain a delayed exchange: %s", name, vhost, importErr.Err))
		return
	case err != nil:
		resp.Diagnostics.Append(delayedError("read", topology.DelayedSpec{Name: name, VHost: vhost}, err, "")...)
		return
	case !found:
		tflog.Warn(ctx, "the vhost or every object of the delayed exchange is gone; removing it from state",
			map[string]any{"vhost": vhost, "name": name})
		resp.State.RemoveResource(ctx)
		return
	}
	if imported {
		setDelayedSpec(&state, result.Spec)
	}
	setDelayedPlanned(&state, result.Spec, result.Objects)
	state.Draining = drainingMap(result.Draining)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *DelayedExchangeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan delayedExchangeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	exchanges, diags := r.exchanges()
	resp.Diagnostics.Append(diags...)
	spec, diags := resolvedDelayedSpec(ctx, plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	result, err := exchanges.Update(ctx, spec, plan.ForceDestroy.ValueBool())
	if err != nil {
		resp.Diagnostics.Append(delayedError("update", spec, err,
			"Part of the change may have been made. The next apply reads the exchange again and makes only what is still missing.")...)
		return
	}
	plan.Draining = drainingMap(result.Draining)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *DelayedExchangeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state delayedExchangeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	exchanges, diags := r.exchanges()
	resp.Diagnostics.Append(diags...)
	prior, diags := delayedStateOf(ctx, state)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := exchanges.Destroy(ctx, prior, state.ForceDestroy.ValueBool()); err != nil {
		resp.Diagnostics.Append(delayedError("destroy", prior.Spec, err, "Part of it may have been deleted. Run destroy again: it deletes what remains.")...)
	}
}

// ImportState takes an ID "<name>@<vhost>" or "<url-escaped vhost>/<name>",
// as a set's without a layout; Read infers the rest.
func (r *DelayedExchangeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	vhost, name, layout, err := parseImportID(req.ID)
	if err == nil && layout != "" {
		err = fmt.Errorf("the import ID %q names a layout, which a delayed exchange has none of: use <url-escaped vhost>/<name> or <name>@<vhost>", req.ID)
	}
	if err != nil {
		resp.Diagnostics.AddError("Invalid Import ID", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), importID(vhost, name))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("vhost"), vhost)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("force_destroy"), false)...)
}

// exchanges is package delayset's delayed exchanges over the provider's client.
func (r *DelayedExchangeResource) exchanges() (delayset.DelayedExchanges, diag.Diagnostics) {
	client, diags := r.data.brokerClient()
	if diags.HasError() {
		return delayset.DelayedExchanges{}, diags
	}
	return delayset.DelayedExchanges{Broker: client}, diags
}

// resolvedDelayedSpec is the resolved spec of a plan.
func resolvedDelayedSpec(ctx context.Context, m delayedExchangeModel) (topology.DelayedSpec, diag.Diagnostics) {
	spec, _, diags := delayedSpecOf(ctx, m)
	resolved, err := topology.ResolveDelayed(spec)
	diags.Append(problemDiagnostics(err, "Invalid Delayed Exchange", nil)...)
	return resolved, diags
}

// delayedError is brokerError for a delayed exchange, partly said only
// when the failure struck part-way through the changes.
func delayedError(action string, spec topology.DelayedSpec, err error, partly string) diag.Diagnostics {
	stage, cause := stageOf(err)
	if stage != delayset.Applying {
		partly = ""
	}
	return brokerErrorOf(action, subject{kind: "delayed exchange", short: "delayed exchange", name: spec.Name, vhost: spec.VHost,
		pattern: topology.DelayedNames(spec.Name).ObjectNamePattern(), destinations: "each queue or exchange bound to its delivery exchange"},
		cause, partly)
}
