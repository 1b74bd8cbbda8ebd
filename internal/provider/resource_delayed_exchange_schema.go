package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// delayedExchangeModel is rabbitmq_delayed_exchange's configuration and state.
type delayedExchangeModel struct {
	ID                 types.String `tfsdk:"id"`
	Name               types.String `tfsdk:"name"`
	VHost              types.String `tfsdk:"vhost"`
	DelaysMS           types.Set    `tfsdk:"delays_ms"`
	DeliveryType       types.String `tfsdk:"delivery_type"`
	QueueType          types.String `tfsdk:"queue_type"`
	DeadLetterStrategy types.String `tfsdk:"dead_letter_strategy"`
	ForceDestroy       types.Bool   `tfsdk:"force_destroy"`
	Exchange           types.String `tfsdk:"exchange"`
	DeliveryExchange   types.String `tfsdk:"delivery_exchange"`
	ParkingQueue       types.String `tfsdk:"parking_queue"`
	Draining           types.Map    `tfsdk:"draining"`
	Exchanges          types.String `tfsdk:"exchanges"`
	Queues             types.String `tfsdk:"queues"`
	Bindings           types.String `tfsdk:"bindings"`
}

func delayedExchangeSchema() schema.Schema {
	attributes := delayedExchangeConfigured()
	maps.Copy(attributes, delayedExchangeComputed())
	return schema.Schema{
		MarkdownDescription: "A headers exchange that delays each message by its `x-delay` header, in milliseconds, as the " +
			"delayed-message-exchange plugin does, for a fixed list of delays, through one TTL queue per delay.",
		Attributes: attributes,
	}
}

// delayedExchangeConfigured is what a configuration sets.
func delayedExchangeConfigured() map[string]schema.Attribute {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	return map[string]schema.Attribute{
		"name": schema.StringAttribute{
			MarkdownDescription: fmt.Sprintf("The name of the headers exchange publishers send to; every other object's name "+
				"starts with it. At most %d bytes of %s, not starting with `amq.`. Changing it replaces the exchange.",
				topology.MaxDelayedNameLength, nameCharactersText),
			Required: true, PlanModifiers: replace,
		},
		"vhost": schema.StringAttribute{
			MarkdownDescription: "The vhost. Defaults to `/`. Changing it replaces the exchange.",
			Optional:            true, Computed: true, Default: stringdefault.StaticString(defaultVHost), PlanModifiers: replace,
		},
		"delays_ms": schema.SetAttribute{
			MarkdownDescription: fmt.Sprintf("The delays, in milliseconds, that a message's `x-delay` header may ask for: "+
				"each from 0 to %d (the broker's longest message TTL), at least one. 0 delivers at once, through a "+
				"binding straight to the delivery exchange. A removed delay's queue stops taking messages and is "+
				"deleted by a later apply that finds it empty.", topology.MaxTTL),
			Required: true, ElementType: types.Int64Type,
		},
		"delivery_type": schema.StringAttribute{
			MarkdownDescription: fmt.Sprintf("The delivery exchange's type, as the plugin's `x-delayed-type`: one of %s. "+
				"Defaults to `%s`. Changing it replaces the exchange.", quoted(topology.DeliveryTypes), topology.DeliveryTypes[0]),
			Optional: true, Computed: true, Default: stringdefault.StaticString(topology.DeliveryTypes[0]), PlanModifiers: replace,
		},
		"queue_type": schema.StringAttribute{
			MarkdownDescription: fmt.Sprintf("The type of the delay queues and the parking queue: one of %s. Defaults to `%s`. "+
				"Changing it replaces the exchange.", quoted(topology.QueueTypes), topology.QueueTypes[0]),
			Optional: true, Computed: true, Default: stringdefault.StaticString(string(topology.QueueTypes[0])), PlanModifiers: replace,
		},
		"dead_letter_strategy": schema.StringAttribute{
			MarkdownDescription: fmt.Sprintf("How the quorum delay queues dead-letter an expired message: one of %s. Defaults to "+
				"`%s` for quorum queues and `%s` for classic ones, which know no other. Changing it replaces the exchange.",
				quoted(topology.DeadLetterStrategies), topology.AtLeastOnce, topology.AtMostOnce),
			Optional: true, Computed: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured()},
		},
		"force_destroy": schema.BoolAttribute{
			MarkdownDescription: "Delete the queues even when they hold messages, losing them. Defaults to `false`: destroy " +
				"refuses while any queue, the parking queue included, holds a message, and a removed delay's queue stays until empty.",
			Optional: true, Computed: true, Default: booldefault.StaticBool(false),
		},
	}
}

// delayedExchangeComputed is what the provider tells: the ID and the objects.
func delayedExchangeComputed() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			MarkdownDescription: "The ID: the URL-escaped vhost (`@` as `%40`) and the name, joined by `/` (`%2F/orders`).",
			Computed:            true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"exchange": schema.StringAttribute{
			MarkdownDescription: "The headers exchange to publish to, with the `x-delay` header: `name`.",
			Computed:            true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"delivery_exchange": schema.StringAttribute{
			MarkdownDescription: "The exchange every delay delivers to, `<name>.delivery`, of `delivery_type`: bind consumers' " +
				"queues here, as to the plugin's exchange. What it cannot route is parked too.",
			Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"parking_queue": schema.StringAttribute{
			MarkdownDescription: "The queue, `<name>.unroutable`, that keeps every message whose `x-delay` is missing, not an " +
				"integer or not listed, and every delivery no queue is bound for.",
			Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"draining": schema.MapAttribute{
			MarkdownDescription: "The queues of removed delays that still held messages, each with how many, at the last look; " +
				"an apply deletes each once empty.",
			Computed: true, ElementType: types.Int64Type,
		},
		"exchanges": schema.StringAttribute{
			MarkdownDescription: "Every exchange, one line each, with its type and arguments. " + linesRatherThanLists, Computed: true,
		},
		"queues": schema.StringAttribute{
			MarkdownDescription: "Every queue of the listed delays and the parking queue, one line each, with its arguments " +
				"(`x-message-ttl` in milliseconds). " + linesRatherThanLists, Computed: true,
		},
		"bindings": schema.StringAttribute{
			MarkdownDescription: "Every binding, one line each, with its `x-match` and `x-delay`. " + linesRatherThanLists, Computed: true,
		},
	}
}

// nameCharactersText is what a name may hold, for the schema.
const nameCharactersText = "ASCII letters, digits, `.`, `_`, `-` and `:`"

// delayedSpecOf is the spec m configures, unresolved, and which fields'
// problems to skip: those whose values are not known yet.
func delayedSpecOf(ctx context.Context, m delayedExchangeModel) (spec topology.DelayedSpec, skip func(*topology.FieldError) bool, diags diag.Diagnostics) {
	unknown := map[string]bool{}
	spec = topology.DelayedSpec{
		Name: m.Name.ValueString(), VHost: m.VHost.ValueString(), DeliveryType: m.DeliveryType.ValueString(),
		QueueType: topology.QueueType(m.QueueType.ValueString()), DeadLetterStrategy: topology.DeadLetterStrategy(m.DeadLetterStrategy.ValueString()),
	}
	for field, value := range map[string]attr.Value{"name": m.Name, "vhost": m.VHost, "delays_ms": m.DelaysMS, "delivery_type": m.DeliveryType,
		"queue_type": m.QueueType, "dead_letter_strategy": m.DeadLetterStrategy} {
		unknown[field] = value.IsUnknown()
	}
	if m.VHost.IsNull() {
		spec.VHost = defaultVHost
	}
	if !m.DelaysMS.IsUnknown() && !m.DelaysMS.IsNull() {
		var delays []types.Int64
		diags.Append(m.DelaysMS.ElementsAs(ctx, &delays, false)...)
		for _, d := range delays {
			unknown["delays_ms"] = unknown["delays_ms"] || d.IsUnknown()
			spec.DelaysMS = append(spec.DelaysMS, d.ValueInt64())
		}
	}
	return spec, func(problem *topology.FieldError) bool { return unknown[problem.Field] }, diags
}

// anyUnknown tells whether skip leaves a configured field of the spec
// unchecked; dead_letter_strategy, when unknown, takes its default.
func anyUnknown(skip func(*topology.FieldError) bool) bool {
	return slices.ContainsFunc([]string{"name", "vhost", "delays_ms", "delivery_type", "queue_type"},
		func(field string) bool { return skip(&topology.FieldError{Field: field}) })
}

// setDelayedPlanned writes what the delayed exchange of spec, resolved,
// holds (objects: as planned or as the broker holds it) into m.
func setDelayedPlanned(m *delayedExchangeModel, spec topology.DelayedSpec, objects topology.Topology) {
	names := topology.DelayedNames(spec.Name)
	m.ID = types.StringValue(importID(spec.VHost, spec.Name))
	m.Exchange, m.DeliveryExchange, m.ParkingQueue = types.StringValue(names.Exchange()), types.StringValue(names.Delivery()), types.StringValue(names.Parking())
	m.DeadLetterStrategy = types.StringValue(string(spec.DeadLetterStrategy))
	m.Exchanges = types.StringValue(topology.Lines(objects.Exchanges))
	m.Queues = types.StringValue(topology.Lines(objects.Queues))
	m.Bindings = types.StringValue(topology.Lines(objects.Bindings))
}

// setDelayedSpec writes an imported spec into m.
func setDelayedSpec(m *delayedExchangeModel, spec topology.DelayedSpec) {
	delays := make([]attr.Value, len(spec.DelaysMS))
	for i, d := range spec.DelaysMS {
		delays[i] = types.Int64Value(d)
	}
	m.Name, m.VHost = types.StringValue(spec.Name), types.StringValue(spec.VHost)
	m.DelaysMS = types.SetValueMust(types.Int64Type, delays)
	m.DeliveryType, m.QueueType = types.StringValue(spec.DeliveryType), types.StringValue(string(spec.QueueType))
	m.ForceDestroy = types.BoolValue(false)
}

// drainingMap is the draining attribute of a state.
func drainingMap(draining map[string]int64) types.Map {
	values := map[string]attr.Value{}
	for queue, messages := range draining {
		values[queue] = types.Int64Value(messages)
	}
	return types.MapValueMust(types.Int64Type, values)
}

// delayedStateOf is what m remembers of its delayed exchange.
func delayedStateOf(ctx context.Context, m delayedExchangeModel) (delayset.DelayedState, diag.Diagnostics) {
	spec, _, diags := delayedSpecOf(ctx, m)
	resolved, err := topology.ResolveDelayed(spec)
	if err != nil {
		// A state the planner refuses still names its objects.
		resolved = spec
	}
	state := delayset.DelayedState{Spec: resolved}
	if !m.Draining.IsNull() && !m.Draining.IsUnknown() {
		var draining map[string]int64
		diags.Append(m.Draining.ElementsAs(ctx, &draining, false)...)
		state.Draining = draining
	}
	return state, diags
}
