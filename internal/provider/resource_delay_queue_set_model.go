package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// delayQueueSetModel maps the resource's schema.
type delayQueueSetModel struct {
	delaySpecModel
	ID                 types.String `tfsdk:"id"`
	ForceDestroy       types.Bool   `tfsdk:"force_destroy"`
	Generation         types.Int64  `tfsdk:"generation"`
	ExchangeGeneration types.Int64  `tfsdk:"exchange_generation"`
	MigrationWait      types.String `tfsdk:"migration_wait"`
	Draining           types.List   `tfsdk:"draining"`
	Exchanges          types.String `tfsdk:"exchanges"`
	Queues             types.String `tfsdk:"queues"`
	Placement          types.String `tfsdk:"placement"`
	Leaders            types.Map    `tfsdk:"leaders"`
	Members            types.Map    `tfsdk:"members"`
}

// specOf resolves the spec of a model that is fully known (a plan or a
// state), its current generation's.
func specOf(m delayQueueSetModel) (topology.Spec, diag.Diagnostics) {
	spec, _, diags := specFromModel(m.delaySpecModel)
	if diags.HasError() {
		return spec, diags
	}
	// A state written before generations existed has none: generation 0.
	generation, generationOK := intOf(m.Generation.ValueInt64())
	format, formatOK := intOf(m.ExchangeGeneration.ValueInt64())
	switch {
	case !generationOK:
		diags.AddAttributeError(path.Root("generation"), "Invalid Delay Queue Set", "generation: "+outOfRange(m.Generation.ValueInt64()))
		return spec, diags
	case !formatOK:
		diags.AddAttributeError(path.Root("exchange_generation"), "Invalid Delay Queue Set",
			"exchange_generation: "+outOfRange(m.ExchangeGeneration.ValueInt64()))
		return spec, diags
	}
	spec.Generation, spec.FormatGeneration = generation, format
	resolved, err := delayset.ResolveWithLevels(spec) // the levels are derived once planned
	if err != nil {
		return spec, problemDiagnostics(err, "Invalid Delay Queue Set", nil)
	}
	return resolved, nil
}

// setPlanned fills a resource's computed values from its resolved spec and
// a topology: the planned one, or the actual one aligned to it.
func setPlanned(m *delayQueueSetModel, resolved topology.Spec, t topology.Topology) {
	m.ID = types.StringValue(importID(resolved.VHost, resolved.Name))
	m.Generation = types.Int64Value(int64(resolved.Generation))
	m.ExchangeGeneration = types.Int64Value(int64(resolved.FormatGeneration))
	setDerived(&m.delaySpecModel, resolved)
	setBindings(&m.delaySpecModel, t)
	setObjects(m, t)
}

// setSpec writes an inferred spec into a freshly imported state.
func setSpec(m *delayQueueSetModel, spec topology.Spec) {
	setGeneration(m, spec)
	m.Layout = types.StringValue(string(spec.Layout.OrDefault()))
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

// setGeneration stores what a resolved spec says of its generation: its
// key format, queue kind and generation numbers (levels, not max_delay).
func setGeneration(m *delayQueueSetModel, spec topology.Spec) {
	m.Levels = types.Int64Value(int64(spec.Levels))
	m.Radix = types.Int64Value(int64(spec.Radix))
	m.MaxDelay = types.StringNull()
	m.Resolution = types.StringValue(topology.FormatDuration(spec.Resolution))
	m.QueueType = types.StringValue(string(spec.QueueType))
	m.DeadLetterStrategy = types.StringValue(string(spec.DeadLetterStrategy))
	m.QueueLeaderLocator = optionalString(string(spec.QueueLeaderLocator))
	m.QuorumInitialGroupSize = optionalInt64(spec.QuorumInitialGroupSize)
	m.Generation = types.Int64Value(int64(spec.Generation))
	m.ExchangeGeneration = types.Int64Value(int64(spec.FormatGeneration))
}

// setObjects shows a topology's exchanges and queues, one line each.
func setObjects(m *delayQueueSetModel, t topology.Topology) {
	m.Exchanges = types.StringValue(topology.Lines(t.Exchanges))
	m.Queues = types.StringValue(topology.Lines(t.Queues))
}

// isImportStub tells whether state is what ImportState writes: the name,
// the vhost and perhaps the layout, nothing read from the broker yet.
func isImportStub(state delayQueueSetModel) bool {
	return state.Levels.IsNull()
}
