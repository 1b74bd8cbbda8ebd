package provider

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// What rabbitmq_delay_queue_set and rabbitmq_delay_topology share: the
// model of a spec, its reading into topology's spec, and the values the
// planner derives from it.

// delaySpecModel maps the attributes the resource and the data source share
// (sharedAttributes and the route block); both models embed it.
type delaySpecModel struct {
	Name               types.String `tfsdk:"name"`
	VHost              types.String `tfsdk:"vhost"`
	Layout             types.String `tfsdk:"layout"`
	MaxDelay           types.String `tfsdk:"max_delay"`
	Levels             types.Int64  `tfsdk:"levels"`
	Resolution         types.String `tfsdk:"resolution"`
	Radix              types.Int64  `tfsdk:"radix"`
	QueueType          types.String `tfsdk:"queue_type"`
	DeadLetterStrategy types.String `tfsdk:"dead_letter_strategy"`
	QueueLeaderLocator types.String `tfsdk:"queue_leader_locator"`
	Routes             types.List   `tfsdk:"route"` // unknown while a dynamic block's collection is
	// QuorumInitialGroupSize is quorum_initial_group_size (groupsize.go).
	QuorumInitialGroupSize types.Int64 `tfsdk:"quorum_initial_group_size"`

	MaxDelayEffective types.String `tfsdk:"max_delay_effective"`
	IngestExchange    types.String `tfsdk:"ingest_exchange"`
	OutExchange       types.String `tfsdk:"out_exchange"`
	UnroutableQueue   types.String `tfsdk:"unroutable_queue"`
	Bindings          types.String `tfsdk:"bindings"`
}

type routeModel struct {
	Destination     types.String `tfsdk:"destination"`
	DestinationType types.String `tfsdk:"destination_type"`
	Key             types.String `tfsdk:"key"`
}

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

// specFromModel builds the planner's spec from a configuration or plan. It
// reports which fields are still unknown, by the planner's field names.
func specFromModel(m delaySpecModel) (topology.Spec, map[string]bool, diag.Diagnostics) {
	r := specReader{unknown: map[string]bool{}}
	spec := topology.Spec{
		Name:                   r.text(m.Name, "name"),
		VHost:                  r.text(m.VHost, "vhost"),
		Layout:                 topology.Layout(r.text(m.Layout, "layout")),
		QueueType:              topology.QueueType(r.text(m.QueueType, "queue_type")),
		DeadLetterStrategy:     topology.DeadLetterStrategy(r.text(m.DeadLetterStrategy, "dead_letter_strategy")),
		QueueLeaderLocator:     topology.LeaderLocator(r.text(m.QueueLeaderLocator, "queue_leader_locator")),
		Levels:                 r.count(m.Levels, "levels"),
		Radix:                  r.count(m.Radix, "radix"),
		QuorumInitialGroupSize: r.groupSize(m.QuorumInitialGroupSize),
		MaxDelay:               r.duration(m.MaxDelay, "max_delay"),
		Resolution:             r.duration(m.Resolution, "resolution"),
		Routes:                 r.routes(m.Routes),
	}
	if m.VHost.IsNull() {
		spec.VHost = defaultVHost // the schema default, not applied to configurations
	}
	return spec, r.unknown, r.diags
}

// specReader reads a model's values for the planner, noting the fields
// whose values are unknown and the values it refuses.
type specReader struct {
	unknown map[string]bool
	diags   diag.Diagnostics
}

func (r *specReader) text(v types.String, field string) string {
	if v.IsUnknown() {
		r.unknown[field] = true
	}
	return v.ValueString()
}

// count reads levels or radix. The planner reads a zero as "not set", so a
// configured zero is refused here, where it can still be told from an
// absent value, in the planner's words.
func (r *specReader) count(v types.Int64, field string) int {
	if v.IsUnknown() {
		r.unknown[field] = true
	}
	if !v.IsNull() && !v.IsUnknown() && v.ValueInt64() == 0 {
		r.explicitZero(field)
	}
	n, ok := intOf(v.ValueInt64())
	if !ok {
		r.diags.AddAttributeError(path.Root(field), "Invalid Delay Queue Set", field+": "+outOfRange(v.ValueInt64()))
	}
	return n
}

// duration reads max_delay or resolution: 0 when null, unknown or refused.
func (r *specReader) duration(v types.String, field string) time.Duration {
	s := r.text(v, field)
	if v.IsNull() || v.IsUnknown() {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		r.diags.AddAttributeError(path.Root(field), "Invalid Duration",
			fmt.Sprintf("%s: %q is not a duration; write it like \"500ms\", \"30s\", \"15m\" or \"36h\"", field, s))
		return 0
	}
	if d == 0 {
		r.explicitZero(field)
	}
	return d
}

// groupSize reads quorum_initial_group_size (groupSizeOf).
func (r *specReader) groupSize(v types.Int64) int {
	if v.IsUnknown() {
		r.unknown[groupSizeAttribute] = true
	}
	return groupSizeOf(v, &r.diags)
}

func (r *specReader) explicitZero(field string) {
	r.diags.AddAttributeError(path.Root(field), "Invalid Delay Queue Set", topology.ExplicitZero(field).Error())
}

// routes reads the route blocks; while they are unknown, so is "route".
func (r *specReader) routes(blocks types.List) []topology.Route {
	routes, known := routesOf(blocks)
	if !known {
		r.unknown["route"] = true
	}
	var spec []topology.Route
	for i, route := range routes {
		spec = append(spec, topology.Route{
			Destination:     r.text(route.Destination, routeField(i, "route.destination")),
			DestinationType: topology.DestinationType(r.text(route.DestinationType, routeField(i, "route.destination_type"))),
			Key:             r.text(route.Key, routeField(i, "route.key")),
		})
	}
	return spec
}

func routeField(index int, field string) string {
	if index < 0 {
		return field
	}
	return fmt.Sprintf("%s[%d]", field, index)
}

// setDerived fills the values the planner derives from a resolved spec, and
// the defaults of those left unset. Configured values stay as written
// ("1000ms" is not rewritten "1s").
func setDerived(m *delaySpecModel, resolved topology.Spec) {
	if m.VHost.IsNull() {
		m.VHost = types.StringValue(resolved.VHost)
	}
	if m.Layout.IsNull() {
		m.Layout = types.StringValue(string(resolved.Layout.OrDefault()))
	}
	if m.Resolution.IsNull() {
		m.Resolution = types.StringValue(topology.FormatDuration(resolved.Resolution))
	}
	if m.QueueType.IsNull() {
		m.QueueType = types.StringValue(string(resolved.QueueType))
	}
	m.Levels = types.Int64Value(int64(resolved.Levels))
	m.Radix = types.Int64Value(int64(resolved.Radix))
	m.DeadLetterStrategy = types.StringValue(string(resolved.DeadLetterStrategy))
	m.QueueLeaderLocator = optionalString(string(resolved.QueueLeaderLocator))
	m.QuorumInitialGroupSize = optionalInt64(resolved.QuorumInitialGroupSize)
	m.MaxDelayEffective = types.StringValue(topology.FormatDuration(resolved.KeyFormat().MaxDelay()))
	m.IngestExchange = types.StringValue(resolved.IngestExchange())
	m.OutExchange = types.StringValue(resolved.OutExchange())
	m.UnroutableQueue = optionalString(resolved.UnroutableQueue())
}

// setBindings shows a topology's bindings, one line each.
func setBindings(m *delaySpecModel, t topology.Topology) {
	m.Bindings = types.StringValue(topology.Lines(t.Bindings))
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

// lines are the lines of a text attribute of objects (topology.Lines):
// none when it is null, unknown or empty.
func lines(text types.String) []string {
	if text.ValueString() == "" {
		return nil
	}
	return strings.Split(text.ValueString(), "\n")
}

func optionalString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}
