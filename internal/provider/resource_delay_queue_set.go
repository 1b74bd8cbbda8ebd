package provider

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
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

// delayQueueSetModel maps the resource's schema.
type delayQueueSetModel struct {
	ID                 types.String `tfsdk:"id"`
	Name               types.String `tfsdk:"name"`
	VHost              types.String `tfsdk:"vhost"`
	MaxDelay           types.String `tfsdk:"max_delay"`
	Levels             types.Int64  `tfsdk:"levels"`
	Resolution         types.String `tfsdk:"resolution"`
	QueueType          types.String `tfsdk:"queue_type"`
	DeadLetterStrategy types.String `tfsdk:"dead_letter_strategy"`
	Routes             types.List   `tfsdk:"route"` // unknown while a dynamic block's collection is
	ForceDestroy       types.Bool   `tfsdk:"force_destroy"`

	MaxDelayEffective types.String `tfsdk:"max_delay_effective"`
	IngestExchange    types.String `tfsdk:"ingest_exchange"`
	OutExchange       types.String `tfsdk:"out_exchange"`
	UnroutableQueue   types.String `tfsdk:"unroutable_queue"`
	Exchanges         types.List   `tfsdk:"exchanges"`
	Queues            types.List   `tfsdk:"queues"`
	Bindings          types.List   `tfsdk:"bindings"`
}

type routeModel struct {
	Destination     types.String `tfsdk:"destination"`
	DestinationType types.String `tfsdk:"destination_type"`
	Key             types.String `tfsdk:"key"`
}

var routeObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"destination": types.StringType, "destination_type": types.StringType, "key": types.StringType,
}}

// routesOf reads the route blocks; known is false while they are unknown,
// as a dynamic block over a value known only after apply is.
func routesOf(blocks types.List) (routes []routeModel, known bool) {
	if blocks.IsUnknown() {
		return nil, false
	}
	for _, element := range blocks.Elements() {
		block, ok := element.(types.Object)
		if !ok || block.IsUnknown() {
			return nil, false
		}
		attributes := block.Attributes()
		str := func(name string) types.String {
			v, _ := attributes[name].(types.String)
			return v
		}
		routes = append(routes, routeModel{Destination: str("destination"), DestinationType: str("destination_type"), Key: str("key")})
	}
	return routes, true
}

func (r *DelayQueueSetResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_delay_queue_set"
}

func (r *DelayQueueSetResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = delayQueueSetSchema()
}

func delayQueueSetSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A complete arbitrary-delay topology on one vhost: an ingest exchange, one TTL queue per " +
			"power of two of the resolution, the exchanges and bindings that chain them, an out exchange with the " +
			"routes to your queues, and an unroutable queue that parks every message no binding matches. " +
			"`terraform plan` shows every exchange, queue and binding before anything is declared.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The URL-escaped vhost and the name, joined by `/` (for example `%2F/delay`); the import ID.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("The prefix of every object of the set (`<name>.ingest`, `<name>.level.00`, …): "+
					"1 to %d bytes of ASCII letters, digits, `.`, `_`, `-` and `:`, not starting with `amq.`. "+
					"Changing it replaces the set.", topology.MaxSetNameLength),
				Required:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"vhost": schema.StringAttribute{
				MarkdownDescription: "The vhost the set lives in; it must exist. Defaults to `/`. Changing it replaces the set.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("/"),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"max_delay": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("The longest delay the set must hold, as a duration such as `\"36h\"`; "+
					"`levels` becomes the smallest N with (2^N − 1) × `resolution` ≥ `max_delay` (N ≤ %d). "+
					"Set exactly one of `max_delay` and `levels`.", topology.MaxLevels),
				Optional: true,
			},
			"levels": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("N, the number of TTL queues, from %d to %d: delays go up to "+
					"(2^N − 1) × `resolution`, and publishers write the delay as exactly N binary digits. "+
					"Computed from `max_delay` when that is set instead. Adding levels happens in place; removing "+
					"them deletes their queues, which must be empty.", topology.MinLevels, topology.MaxLevels),
				Optional: true,
				Computed: true,
			},
			"resolution": schema.StringAttribute{
				MarkdownDescription: "The tick: every delay is rounded up to a whole number of ticks, and level k's " +
					"queue holds messages for 2^k ticks. A duration of whole milliseconds, at least `\"1ms\"`; " +
					"defaults to `\"1s\"`. Changing it replaces the set.",
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(topology.DefaultResolution.String()),
			},
			"queue_type": schema.StringAttribute{
				MarkdownDescription: "The type of the set's queues: " + quoted(topology.QueueTypes) + ". Defaults to " +
					"`quorum`: replicated, and in the data-path benchmark (`make bench-delays`, RabbitMQ 3.10, 8 levels) " +
					"more punctual than classic queues under load (p99 lateness 29–43 ms against 399 ms at 500 msg/s) " +
					"with a higher top rate. Choose `classic` only where one node without replication will do. " +
					"Changing it replaces the set.",
				Optional:      true,
				Computed:      true,
				Default:       stringdefault.StaticString(string(topology.QueueTypeQuorum)),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"dead_letter_strategy": schema.StringAttribute{
				MarkdownDescription: "How expired messages move between the queues: " +
					quoted(topology.DeadLetterStrategies) + ". Defaults to `at-least-once` for quorum queues: a level " +
					"keeps an expired message until the next queue has confirmed it, so none is lost between levels, " +
					"even when a node fails (in the node-loss test at-most-once lost 456 of 700 messages, at-least-once " +
					"none); a confirm lost in a failure can deliver a message twice, so consumers should be idempotent. " +
					"It costs 10–20 % more broker CPU than `at-most-once` and reached the same top rate; bound its wait " +
					"after an outage with the broker setting of the operating guide. Classic queues support only " +
					"`at-most-once`, their default. Changing it replaces the set.",
				Optional: true,
				Computed: true,
			},
			"force_destroy": schema.BoolAttribute{
				MarkdownDescription: "Delete the set's queues even when they hold messages, losing those messages. " +
					"Defaults to `false`: destroy and level removal refuse, naming each non-empty queue.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"max_delay_effective": schema.StringAttribute{
				MarkdownDescription: "The longest delay the set holds: (2^N − 1) × `resolution`.",
				Computed:            true,
			},
			"ingest_exchange": schema.StringAttribute{
				MarkdownDescription: "The topic exchange to publish delayed messages to, with routing key `<key>.<N binary digits>`.",
				Computed:            true,
			},
			"out_exchange": schema.StringAttribute{
				MarkdownDescription: "The topic exchange messages leave through when their delay is over.",
				Computed:            true,
			},
			"unroutable_queue": schema.StringAttribute{
				MarkdownDescription: "The queue that parks every message no binding of the set matches (a malformed key, or no matching route).",
				Computed:            true,
			},
			"exchanges": schema.ListNestedAttribute{
				MarkdownDescription: "Every exchange of the set, as the plan declares it or as the broker has it after a refresh.",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: computedStrings(exchangeAttributes, true)},
			},
			"queues": schema.ListNestedAttribute{
				MarkdownDescription: "Every queue of the set with its arguments (`message_ttl` in milliseconds).",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: queueSchemaAttributes()},
			},
			"bindings": schema.ListAttribute{
				MarkdownDescription: "Every binding of the set, one line each (`<source> -> <queue|exchange> <destination>, key \"<routing key>\"`), " +
					"in the layout's order: the delay bindings from the ingest and done exchanges, then the routes. " +
					"Lines rather than objects: a set of 32 levels has 562 bindings, and lines keep its plans fast.",
				Computed:    true,
				ElementType: types.StringType,
			},
		},
		Blocks: map[string]schema.Block{
			"route": schema.ListNestedBlock{
				MarkdownDescription: "Where messages go when their delay is over: every message whose key matches is " +
					"delivered to the destination. Adding and removing routes happens in place.",
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"destination": schema.StringAttribute{
							MarkdownDescription: "The name of the queue or exchange to deliver to, in the set's vhost.",
							Required:            true,
						},
						"destination_type": schema.StringAttribute{
							MarkdownDescription: "Whether `destination` is a " + quoted(topology.DestinationTypes) + ". Defaults to `queue`.",
							Optional:            true,
						},
						"key": schema.StringAttribute{
							MarkdownDescription: "The message key this route takes (the part of the routing key before the delay digits), " +
								"without `#` or `*`. Unset or empty, the route takes every message.",
							Optional: true,
						},
					},
				},
			},
		},
	}
}

// The computed object lists: attribute names, shared by the schema and the values.
var (
	exchangeAttributes = []string{"name", "type", "alternate_exchange"}
	queueAttributes    = []string{"name", "queue_type", "dead_letter_exchange", "dead_letter_strategy", "overflow"}
)

// computedStrings is the schema of a computed object of string attributes,
// with the map of the arguments the layout does not set when withOther.
func computedStrings(names []string, withOther bool) map[string]schema.Attribute {
	attributes := make(map[string]schema.Attribute, len(names)+1)
	for _, name := range names {
		attributes[name] = schema.StringAttribute{Computed: true, MarkdownDescription: "`" + name + "`; null when absent."}
	}
	if withOther {
		attributes["other_arguments"] = schema.MapAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Arguments the layout does not set, as JSON text; only a refresh finds them, and apply replaces the object without them.",
		}
	}
	return attributes
}

func queueSchemaAttributes() map[string]schema.Attribute {
	attributes := computedStrings(queueAttributes, true)
	attributes["message_ttl"] = schema.Int64Attribute{Computed: true, MarkdownDescription: "`x-message-ttl` in milliseconds; null when absent."}
	return attributes
}

// ValidateConfig checks the whole spec with the planner at plan time, so every
// problem is reported at once against the attribute it concerns.
func (r *DelayQueueSetResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config delayQueueSetModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, unknown, diags := specFromModel(config)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	resp.Diagnostics.Append(problemDiagnostics(topology.Validate(spec), "Invalid Delay Queue Set", func(problem *topology.FieldError) bool {
		// Judged once the value is known.
		return unknown[problem.Field] || unknown[routeField(problem.Route, problem.Field)] ||
			(sizeFields[problem.Field] && (unknown["levels"] || unknown["max_delay"] || unknown["resolution"]))
	})...)
}

// problemDiagnostics turns the planner's refusal into one attribute error per
// problem, but those skip leaves out (skip may be nil).
func problemDiagnostics(err error, summary string, skip func(*topology.FieldError) bool) diag.Diagnostics {
	var diags diag.Diagnostics
	var problems topology.ValidationErrors
	if !errors.As(err, &problems) {
		if err != nil {
			diags.AddError(summary, err.Error())
		}
		return diags
	}
	for _, problem := range problems {
		if skip == nil || !skip(problem) {
			diags.AddAttributeError(fieldPath(problem), summary, problem.Error())
		}
	}
	return diags
}

// resolveAndPlan resolves a spec and plans it, reporting a refused spec per
// attribute under summary.
func resolveAndPlan(spec topology.Spec, summary string) (topology.Spec, topology.Topology, diag.Diagnostics) {
	resolved, err := topology.Resolve(spec)
	if err != nil {
		return spec, topology.Topology{}, problemDiagnostics(err, summary, nil)
	}
	desired, err := topology.Plan(resolved)
	return resolved, desired, problemDiagnostics(err, summary, nil)
}

// sizeFields are the attributes the planner judges together: the number of
// levels follows from max_delay and resolution, unless levels is set.
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
	spec, unknown, diags := specFromModel(plan)
	if diags.HasError() || len(unknown) > 0 {
		return // ValidateConfig reports the errors; unknown values leave the computed ones unknown
	}
	resolved, desired, diags := resolveAndPlan(spec, "Invalid Delay Queue Set")
	if diags.HasError() {
		return // ValidateConfig has reported it
	}
	setDerived(&plan, resolved)
	resp.Diagnostics.Append(setObjects(ctx, &plan, desired)...)
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
	setDerived(&state, spec)
	// Listed in the plan's order so that an unchanged set reads back exactly as planned.
	resp.Diagnostics.Append(setObjects(ctx, &state, topology.Align(actual, desired))...)
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

// queuesHoldMessagesError refuses a change that would delete queues holding messages.
type queuesHoldMessagesError struct {
	held []string
}

func (e *queuesHoldMessagesError) Error() string {
	return fmt.Sprintf("refusing to delete queues that hold messages: %s. Wait until they drain, or set "+
		"force_destroy = true to delete them with their messages", strings.Join(e.held, "; "))
}

// specFromModel builds the planner's spec from a configuration or plan. It
// reports which fields are still unknown, by the planner's field names.
func specFromModel(m delayQueueSetModel) (topology.Spec, map[string]bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	unknown := map[string]bool{}
	str := func(v types.String, field string) string {
		if v.IsUnknown() {
			unknown[field] = true
		}
		return v.ValueString()
	}
	spec := topology.Spec{
		Name:               str(m.Name, "name"),
		VHost:              str(m.VHost, "vhost"),
		QueueType:          topology.QueueType(str(m.QueueType, "queue_type")),
		DeadLetterStrategy: topology.DeadLetterStrategy(str(m.DeadLetterStrategy, "dead_letter_strategy")),
	}
	if m.VHost.IsNull() {
		spec.VHost = "/" // the schema default, not applied to configurations
	}
	if m.Levels.IsUnknown() {
		unknown["levels"] = true
	}
	spec.Levels = int(m.Levels.ValueInt64())
	// The planner reads a zero as "not set", so a configured zero is refused
	// here, where it can still be told from an absent value.
	if !m.Levels.IsNull() && !m.Levels.IsUnknown() && spec.Levels == 0 {
		diags.AddAttributeError(path.Root("levels"), "Invalid Delay Queue Set",
			fmt.Sprintf("levels: must be between %d and %d, got 0", topology.MinLevels, topology.MaxLevels))
	}
	for field, v := range map[string]types.String{"max_delay": m.MaxDelay, "resolution": m.Resolution} {
		s := str(v, field)
		if v.IsNull() || v.IsUnknown() {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			diags.AddAttributeError(path.Root(field), "Invalid Duration",
				fmt.Sprintf("%s: %q is not a duration; write it like \"500ms\", \"30s\", \"15m\" or \"36h\"", field, s))
			continue
		}
		if d == 0 {
			diags.AddAttributeError(path.Root(field), "Invalid Delay Queue Set", zeroDurationProblem[field])
			continue
		}
		if field == "max_delay" {
			spec.MaxDelay = d
		} else {
			spec.Resolution = d
		}
	}
	routes, known := routesOf(m.Routes)
	if !known {
		unknown["route"] = true
	}
	for i, route := range routes {
		spec.Routes = append(spec.Routes, topology.Route{
			Destination:     str(route.Destination, routeField(i, "route.destination")),
			DestinationType: topology.DestinationType(str(route.DestinationType, routeField(i, "route.destination_type"))),
			Key:             str(route.Key, routeField(i, "route.key")),
		})
	}
	return spec, unknown, diags
}

// zeroDurationProblem says, in the planner's words, why a duration attribute
// cannot be zero.
var zeroDurationProblem = map[string]string{
	"max_delay":  "max_delay: must be positive, got 0s",
	"resolution": fmt.Sprintf("resolution: must be at least %s, got 0s", topology.MinResolution),
}

func routeField(index int, field string) string {
	if index < 0 {
		return field
	}
	return fmt.Sprintf("%s[%d]", field, index)
}

// fieldPath turns a planner field name into the attribute path it concerns.
func fieldPath(problem *topology.FieldError) path.Path {
	route, attribute, isRoute := strings.Cut(problem.Field, ".")
	if route != "route" || problem.Route < 0 {
		return path.Root(problem.Field)
	}
	p := path.Root("route").AtListIndex(problem.Route)
	if isRoute {
		p = p.AtName(attribute)
	}
	return p
}

// planOf resolves a model that is fully known (a plan or a state) and plans it.
func planOf(m delayQueueSetModel) (topology.Spec, topology.Topology, diag.Diagnostics) {
	spec, _, diags := specFromModel(m)
	if diags.HasError() {
		return spec, topology.Topology{}, diags
	}
	if !m.MaxDelay.IsNull() && !m.Levels.IsNull() {
		spec.MaxDelay = 0 // levels already derived from it
	}
	return resolveAndPlan(spec, "Invalid Delay Queue Set")
}

// setDerived fills the values the planner derives from a resolved spec.
func setDerived(m *delayQueueSetModel, resolved topology.Spec) {
	names := topology.Names(resolved.Name)
	m.ID = types.StringValue(importID(resolved.VHost, resolved.Name))
	m.Levels = types.Int64Value(int64(resolved.Levels))
	m.DeadLetterStrategy = types.StringValue(string(resolved.DeadLetterStrategy))
	m.MaxDelayEffective = types.StringValue(topology.FormatDuration(topology.MaxDelayFor(resolved.Levels, resolved.Resolution)))
	m.IngestExchange = types.StringValue(names.Ingest())
	m.OutExchange = types.StringValue(names.Out())
	m.UnroutableQueue = types.StringValue(names.Unroutable())
}

// setSpec writes an inferred spec into a freshly imported state.
func setSpec(m *delayQueueSetModel, spec topology.Spec) {
	m.Levels = types.Int64Value(int64(spec.Levels))
	m.MaxDelay = types.StringNull()
	m.Resolution = types.StringValue(topology.FormatDuration(spec.Resolution))
	m.QueueType = types.StringValue(string(spec.QueueType))
	m.DeadLetterStrategy = types.StringValue(string(spec.DeadLetterStrategy))
	m.ForceDestroy = types.BoolValue(false)
	routes := make([]attr.Value, 0, len(spec.Routes))
	for _, route := range spec.Routes {
		r := map[string]attr.Value{
			"destination":      types.StringValue(route.Destination),
			"destination_type": types.StringNull(),
			"key":              types.StringNull(),
		}
		if route.DestinationType != topology.DestinationQueue {
			r["destination_type"] = types.StringValue(string(route.DestinationType))
		}
		if route.Key != "" {
			r["key"] = types.StringValue(route.Key)
		}
		routes = append(routes, types.ObjectValueMust(routeObjectType.AttrTypes, r))
	}
	m.Routes = types.ListValueMust(routeObjectType, routes)
}

var (
	exchangeObjectType = objectType(exchangeAttributes, true, false)
	queueObjectType    = objectType(queueAttributes, true, true)
)

func objectType(names []string, otherArguments, ttl bool) types.ObjectType {
	attributeTypes := make(map[string]attr.Type, len(names)+2)
	for _, name := range names {
		attributeTypes[name] = types.StringType
	}
	if otherArguments {
		attributeTypes["other_arguments"] = types.MapType{ElemType: types.StringType}
	}
	if ttl {
		attributeTypes["message_ttl"] = types.Int64Type
	}
	return types.ObjectType{AttrTypes: attributeTypes}
}

// setObjects stores a topology's objects in the computed lists.
func setObjects(ctx context.Context, m *delayQueueSetModel, t topology.Topology) diag.Diagnostics {
	var diags diag.Diagnostics
	exchanges := make([]attr.Value, 0, len(t.Exchanges))
	for _, x := range t.Exchanges {
		exchanges = append(exchanges, object(&diags, exchangeObjectType, map[string]attr.Value{
			"name":               types.StringValue(x.Name),
			"type":               types.StringValue(x.Type),
			"alternate_exchange": optionalString(x.Arguments.AlternateExchange),
			"other_arguments":    otherArguments(ctx, &diags, x.Arguments.Other),
		}))
	}
	queues := make([]attr.Value, 0, len(t.Queues))
	for _, q := range t.Queues {
		ttl := types.Int64Null()
		if q.Arguments.MessageTTL != 0 {
			ttl = types.Int64Value(q.Arguments.MessageTTL)
		}
		queues = append(queues, object(&diags, queueObjectType, map[string]attr.Value{
			"name":                 types.StringValue(q.Name),
			"queue_type":           optionalString(string(q.Arguments.QueueType)),
			"message_ttl":          ttl,
			"dead_letter_exchange": optionalString(q.Arguments.DeadLetterExchange),
			"dead_letter_strategy": optionalString(string(q.Arguments.DeadLetterStrategy)),
			"overflow":             optionalString(q.Arguments.Overflow),
			"other_arguments":      otherArguments(ctx, &diags, q.Arguments.Other),
		}))
	}
	bindings := make([]attr.Value, 0, len(t.Bindings))
	for _, b := range t.Bindings {
		bindings = append(bindings, types.StringValue(b.String()))
	}
	m.Exchanges = list(&diags, exchangeObjectType, exchanges)
	m.Queues = list(&diags, queueObjectType, queues)
	m.Bindings = list(&diags, types.StringType, bindings)
	return diags
}

func object(diags *diag.Diagnostics, t types.ObjectType, values map[string]attr.Value) attr.Value {
	v, d := types.ObjectValue(t.AttrTypes, values)
	diags.Append(d...)
	return v
}

func list(diags *diag.Diagnostics, t attr.Type, values []attr.Value) types.List {
	v, d := types.ListValue(t, values)
	diags.Append(d...)
	return v
}

func otherArguments(ctx context.Context, diags *diag.Diagnostics, other map[string]string) types.Map {
	if len(other) == 0 {
		return types.MapNull(types.StringType)
	}
	v, d := types.MapValueFrom(ctx, types.StringType, other)
	diags.Append(d...)
	return v
}

func optionalString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// sameDuration compares two duration strings by value ("1s" equals "1000ms").
func sameDuration(a, b types.String) bool {
	if a.Equal(b) {
		return true
	}
	da, errA := time.ParseDuration(a.ValueString())
	db, errB := time.ParseDuration(b.ValueString())
	return errA == nil && errB == nil && da == db
}

// importID is the resource ID: the URL-escaped vhost and the name, so that a
// vhost containing "/" (such as the default one) stays unambiguous.
func importID(vhost, name string) string {
	return url.PathEscape(vhost) + "/" + name
}

func parseImportID(id string) (vhost, name string, err error) {
	escaped, name, found := strings.Cut(id, "/")
	if !found || escaped == "" || name == "" {
		return "", "", fmt.Errorf("the import ID %q is not <url-escaped vhost>/<name>, such as %%2F/delay for the set \"delay\" in the vhost \"/\"", id)
	}
	vhost, err = url.PathUnescape(escaped)
	if err != nil {
		return "", "", fmt.Errorf("the vhost part %q of the import ID is not URL-escaped correctly: %w", escaped, err)
	}
	return vhost, name, nil
}

// brokerError turns a broker failure into one diagnostic that says what was
// being attempted, on which set, why it failed and, when the failure may
// have struck part-way through changes, what partly says happens next.
func brokerError(action string, spec topology.Spec, err error, partly string) diag.Diagnostics {
	var diags diag.Diagnostics
	summary := "RabbitMQ Request Failed"
	failed := fmt.Sprintf("Could not %s the delay queue set %q in vhost %q", action, spec.Name, spec.VHost)
	detail := failed + ": " + describeFailures(err, 5)
	var (
		unreachable *broker.UnreachableError
		auth        *broker.AuthError
		held        *queuesHoldMessagesError
		notEmpty    *broker.QueueNotEmptyError
	)
	switch {
	case errors.As(err, &held):
		summary, partly = "Delay Queues Hold Messages", "" // refused before any change
	case errors.As(err, &notEmpty):
		summary = "Delay Queues Hold Messages"
	case errors.As(err, &unreachable):
		// Every request failed alike: the first says it.
		summary = "Cannot Reach RabbitMQ"
		detail = fmt.Sprintf("%s: the RabbitMQ management API at %s did not answer.\n\n%s",
			failed, unreachable.Endpoint, describeFailures(err, 1))
		if partly != "" && action != "create" {
			// The set was read just before: the broker may be up, and one queue stuck.
			partly += " If the broker answers other requests and the failure above names a quorum queue, " +
				"that queue may be stuck without a leader since its declaration was cut off (RabbitMQ 3.10 " +
				"does that) and will never answer. Delete it by hand (the broker takes 5 s to give up on its " +
				"leader), then apply again."
		}
	case broker.IsAccessRefused(err):
		summary = "RabbitMQ Refused the Operation"
		detail += fmt.Sprintf("\n\nThe broker answers \"Access refused.\" when the user lacks a permission, even with the right "+
			"credentials. In vhost %q the user needs configure and read permission on the names of the set's "+
			"objects (%s), write permission on them and on each route's destination, and the management tag; "+
			"see the provider's documentation of the minimal permissions.",
			spec.VHost, topology.Names(spec.Name).ObjectNamePattern())
	case errors.As(err, &auth):
		summary = "RabbitMQ Refused the Credentials"
	case errors.Is(err, broker.ErrVHostNotFound):
		summary = "Vhost Not Found"
		detail = fmt.Sprintf("Could not %s the delay queue set %q: the vhost %q does not exist on the broker. "+
			"Create the vhost first, or correct the set's vhost.\n\n%s", action, spec.Name, spec.VHost, describeFailures(err, 1))
	}
	if partly != "" {
		detail += "\n\n" + partly
	}
	diags.AddError(summary, detail)
	return diags
}

// describeFailures writes the first limit of the failures joined in err
// (Apply and HeldMessages join one per change or queue), one a line, and how
// many more there were.
func describeFailures(err error, limit int) string {
	failures := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		failures = joined.Unwrap()
	}
	lines := make([]string, 0, limit+1)
	for _, failure := range failures[:min(limit, len(failures))] {
		lines = append(lines, failure.Error())
	}
	if more := len(failures) - limit; more > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more", more))
	}
	return strings.Join(lines, "\n")
}

func firstObjectName(t topology.Topology) string {
	if len(t.Exchanges) > 0 {
		return t.Exchanges[0].Name
	}
	return t.Queues[0].Name
}

func quoted[T ~string](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = "`" + string(v) + "`"
	}
	return strings.Join(parts, ", ")
}
