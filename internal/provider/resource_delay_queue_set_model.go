package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

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

// specOf resolves the spec of a model that is fully known (a plan or a
// state), its current generation's; delayset.Desired plans it.
func specOf(m delayQueueSetModel) (topology.Spec, diag.Diagnostics) {
	spec, _, diags := specFromModel(m.delaySpecModel)
	if diags.HasError() {
		return spec, diags
	}
	if !m.MaxDelay.IsNull() && !m.Levels.IsNull() {
		spec.MaxDelay = 0 // levels already derived from it
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
	resolved, err := topology.Resolve(spec)
	if err != nil {
		return spec, problemDiagnostics(err, "Invalid Delay Queue Set", nil)
	}
	return resolved, nil
}

// planOf resolves a fully known model and works out what its set is to
// hold (delayset.Desired), the current generation only, with the parking lot as
// seen has it.
func planOf(m delayQueueSetModel, seen topology.Topology) (topology.Spec, topology.Topology, diag.Diagnostics) {
	spec, diags := specOf(m)
	if diags.HasError() {
		return spec, topology.Topology{}, diags
	}
	desired, err := delayset.Desired(spec, nil, seen)
	return spec, desired, problemDiagnostics(err, "Invalid Delay Queue Set", nil)
}

// drainingOf reads the draining generations of a state, oldest first, and
// the messages each holds; a state written before generations has none.
func drainingOf(m delayQueueSetModel) ([]topology.Generation, []int64) {
	var generations []topology.Generation
	var messages []int64
	for _, element := range m.Draining.Elements() {
		entry, ok := element.(types.Object)
		if !ok {
			continue
		}
		a := entry.Attributes()
		integer := func(name string) int64 {
			v, _ := a[name].(types.Int64)
			return v.ValueInt64()
		}
		small := func(name string) int { return clampedIntOf(integer(name)) }
		text := func(name string) string {
			v, _ := a[name].(types.String)
			return v.ValueString()
		}
		resolution, _ := time.ParseDuration(text("resolution"))
		generations = append(generations, topology.Generation{
			Number: small("generation"), Format: small("exchange_generation"), Levels: small("levels"), Radix: small("radix"),
			Resolution: resolution, QueueType: topology.QueueType(text("queue_type")), QuorumInitialGroupSize: small(groupSizeAttribute),
			DeadLetterStrategy: topology.DeadLetterStrategy(text("dead_letter_strategy")),
			QueueLeaderLocator: topology.LeaderLocator(text("queue_leader_locator")), // null before it existed: none
		})
		messages = append(messages, integer("messages"))
	}
	return generations, messages
}

// drainingValue is the draining attribute of generations of set name whose
// queues hold counts[queue] messages (a queue absent from counts holds none).
func drainingValue(name string, generations []topology.Generation, counts map[string]int64) (types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	entries := make([]attr.Value, 0, len(generations))
	for _, g := range generations {
		queues := map[string]attr.Value{}
		for _, q := range g.Queues(name) {
			queues[q] = types.Int64Value(counts[q])
		}
		entries = append(entries, object(&diags, drainingObjectType, map[string]attr.Value{
			"generation":           types.Int64Value(int64(g.Number)),
			"exchange_generation":  types.Int64Value(int64(g.Format)),
			"levels":               types.Int64Value(int64(g.Levels)),
			"radix":                types.Int64Value(int64(g.Radix)),
			"resolution":           types.StringValue(topology.FormatDuration(g.Resolution)),
			"queue_type":           types.StringValue(string(g.QueueType)),
			"dead_letter_strategy": types.StringValue(string(g.DeadLetterStrategy)),
			"queue_leader_locator": optionalString(string(g.QueueLeaderLocator)),
			groupSizeAttribute:     optionalInt64(g.QuorumInitialGroupSize),
			"messages":             types.Int64Value(g.Messages(name, counts)),
			"queues":               types.MapValueMust(types.Int64Type, queues),
		}))
	}
	return list(&diags, drainingObjectType, entries), diags
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

// rememberedOf is what a state remembers of its set, for package delayset:
// its resolved spec, or, when the state cannot be planned (diags say why),
// its name, vhost and layout alone; its draining generations, the objects
// it shows and, with private (nil: not read), when it last switched.
func rememberedOf(ctx context.Context, state delayQueueSetModel, private privateState) (delayset.Remembered, diag.Diagnostics) {
	spec, diags := specOf(state)
	prior := delayset.Remembered{Spec: spec, Shown: shownOf(state)}
	if diags.HasError() {
		prior.Spec = topology.Spec{Name: state.Name.ValueString(), VHost: state.VHost.ValueString(), Layout: layoutOf(state.Layout)}
		prior.Unresolved = true
	}
	prior.Draining, _ = drainingOf(state)
	if private != nil {
		var noteDiags diag.Diagnostics
		prior.SwitchedAt, noteDiags = switchedAt(ctx, private)
		diags.Append(noteDiags...)
	}
	return prior, diags
}

// shownOf is the objects a state's exchanges, queues and bindings
// attributes show: the exchanges' and queues' names, the queues' types,
// and the bindings.
func shownOf(state delayQueueSetModel) topology.Topology {
	var shown topology.Topology
	for _, line := range lines(state.Exchanges) {
		shown.Exchanges = append(shown.Exchanges, topology.Exchange{Name: topology.LineName(line)})
	}
	for _, line := range lines(state.Queues) {
		name, queueType := topology.QueueTypeInLine(line)
		shown.Queues = append(shown.Queues, topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: queueType}})
	}
	for _, line := range lines(state.Bindings) {
		if b, ok := topology.BindingInLine(line); ok {
			shown.Bindings = append(shown.Bindings, b)
		} else {
			// A line no binding writes: a plan never holds it, so the
			// set is read before it is destroyed.
			shown.Bindings = append(shown.Bindings, topology.Binding{Source: line, DestinationType: "?"})
		}
	}
	return shown
}

// setPlacement shows where the queues are; no queue, no placement.
func setPlacement(m *delayQueueSetModel, placements map[string]broker.Placement) {
	if len(placements) == 0 {
		noPlacement(m)
		return
	}
	lines := make([]string, 0, len(placements))
	leaders := map[string]attr.Value{}
	counts := map[string]int64{}
	for _, queue := range slices.Sorted(maps.Keys(placements)) {
		p := placements[queue]
		lines = append(lines, queue+": "+placementText(p))
		if p.Leader != "" {
			counts[p.Leader]++
		}
	}
	for node, n := range counts {
		leaders[node] = types.Int64Value(n)
	}
	m.Placement = types.StringValue(strings.Join(lines, "\n"))
	m.Leaders = types.MapValueMust(types.Int64Type, leaders)
	m.Members = membersOf(m.Queues, placements)
}

// showPlacement shows where the queues of a set are after an apply
// (result's placements). The apply is done, so a failed read is only a
// warning, and the next refresh reads it.
func showPlacement(m *delayQueueSetModel, spec topology.Spec, result delayset.Result) diag.Diagnostics {
	planned := m.Members
	if err := result.PlacementError; err != nil {
		noPlacement(m)
		var diags diag.Diagnostics
		m.Members = keptMembers(planned, m.Members)
		diags.AddWarning("Cannot Read Where the Queues Run",
			fmt.Sprintf("The apply is done, but reading where the queues of %q run failed: %v. placement and leaders, and "+
				"the members of the queues the apply declared, stay empty until the next refresh.", spec.Name, err))
		return diags
	}
	setPlacement(m, result.Placements)
	m.Members = keptMembers(planned, m.Members)
	return nil
}

// noPlacement leaves the placement of a set an apply left part-made empty:
// the next refresh reads it.
func noPlacement(m *delayQueueSetModel) {
	m.Placement, m.Leaders, m.Members = types.StringNull(), types.MapNull(types.Int64Type), types.MapNull(types.StringType)
}

func placementText(p broker.Placement) string {
	if p.Members == nil {
		return "node " + p.Leader
	}
	leader := "no leader"
	if p.Leader != "" {
		leader = "leader " + p.Leader
	}
	text := fmt.Sprintf("%s, members %s", leader, strings.Join(p.Members, " "))
	if offline := slices.DeleteFunc(slices.Clone(p.Members), func(n string) bool { return slices.Contains(p.Online, n) }); len(offline) > 0 {
		text += ", offline " + strings.Join(offline, " ")
	}
	return text
}

// membersOf is the members attribute: for each queue of queues (the
// queues attribute's lines) that placements has, the nodes that hold it.
func membersOf(queues types.String, placements map[string]broker.Placement) types.Map {
	members := map[string]attr.Value{}
	for _, line := range lines(queues) {
		name := topology.LineName(line)
		if p, ok := placements[name]; ok {
			members[name] = types.StringValue(nodesText(p))
		}
	}
	return types.MapValueMust(types.StringType, members)
}

// nodesText is a quorum queue's members or a classic queue's node.
func nodesText(p broker.Placement) string {
	if p.Members == nil {
		return p.Leader
	}
	return strings.Join(p.Members, " ")
}

// plannedMembers is the members a plan shows: for each queue of the plan
// whose line the state has too, so that the apply keeps it, the members
// the state says; unknown for each queue the apply declares. Members
// change only when an operator adds or removes one, so what the refresh
// read stands.
func plannedMembers(plan, state delayQueueSetModel) types.Map {
	if plan.Queues.IsUnknown() {
		return types.MapUnknown(types.StringType)
	}
	kept := map[string]string{}
	for _, line := range lines(state.Queues) {
		kept[topology.LineName(line)] = line
	}
	known := state.Members.Elements()
	members := map[string]attr.Value{}
	for _, line := range lines(plan.Queues) {
		name := topology.LineName(line)
		members[name] = types.StringUnknown()
		if v, ok := known[name].(types.String); ok && kept[name] == line && !v.IsUnknown() && !v.IsNull() {
			members[name] = v
		}
	}
	return types.MapValueMust(types.StringType, members)
}

// keptMembers is what an apply shows of members, read the members it read
// after its changes, planned the plan's: the planned value of each queue
// the plan knew (a queue the apply kept, as the refresh read it), and the
// read one of the others, "" when the read did not find it. Terraform
// requires an apply to end with what its plan knew.
func keptMembers(planned, read types.Map) types.Map {
	if planned.IsNull() || planned.IsUnknown() {
		return read
	}
	got := read.Elements()
	members := map[string]attr.Value{}
	for name, v := range planned.Elements() {
		if s, ok := v.(types.String); ok && !s.IsUnknown() {
			members[name] = s
			continue
		}
		value, _ := got[name].(types.String)
		members[name] = types.StringValue(value.ValueString())
	}
	return types.MapValueMust(types.StringType, members)
}

// privateState is the provider's private data of a resource, as the
// framework passes it (its type is internal to the framework).
type privateState interface {
	GetKey(context.Context, string) ([]byte, diag.Diagnostics)
	SetKey(context.Context, string, []byte) diag.Diagnostics
}

// driftedHoldingKey is the private state key under which a refresh notes
// the TTL queues of the current generation that drifted and hold messages,
// for the next plan to repair through a new generation.
const driftedHoldingKey = "drifted_queues_holding_messages"

// noteDriftedHolding notes in private the TTL queues of the current
// generation whose arguments drifted and that hold messages, as a refresh
// found them (delayset.Remembered.DriftedHolding), or that there are none.
func noteDriftedHolding(ctx context.Context, private privateState, holding []string) diag.Diagnostics {
	if len(holding) == 0 {
		return private.SetKey(ctx, driftedHoldingKey, nil)
	}
	value, _ := json.Marshal(holding) // a list of strings always marshals
	return private.SetKey(ctx, driftedHoldingKey, value)
}

// driftedHolding reads what noteDriftedHolding noted.
func driftedHolding(ctx context.Context, private privateState) ([]string, diag.Diagnostics) {
	value, diags := private.GetKey(ctx, driftedHoldingKey)
	if diags.HasError() || len(value) == 0 {
		return nil, diags
	}
	var queues []string
	if err := json.Unmarshal(value, &queues); err != nil {
		diags.Append(unreadableNote(driftedHoldingKey, "a list of queue names", err))
		return nil, diags
	}
	return queues, diags
}

// switchedAtKey is the private state key under which an update that starts
// a new generation notes when the one before it stopped taking messages:
// until broker.StatisticsLag has passed, that generation's statistics may
// count nothing while it holds messages.
const switchedAtKey = "generation_switched_at"

// noteSwitchedAt notes in private when the last switch happened.
func noteSwitchedAt(ctx context.Context, private privateState, at time.Time) diag.Diagnostics {
	value, _ := json.Marshal(at) // a time always marshals
	return private.SetKey(ctx, switchedAtKey, value)
}

// switchedAt reads when the last switch noteSwitchedAt noted happened, or
// the zero time when none is noted (see delayset.Settled).
func switchedAt(ctx context.Context, private privateState) (time.Time, diag.Diagnostics) {
	value, diags := private.GetKey(ctx, switchedAtKey)
	if diags.HasError() || len(value) == 0 {
		return time.Time{}, diags
	}
	var at time.Time
	if err := json.Unmarshal(value, &at); err != nil {
		diags.Append(unreadableNote(switchedAtKey, "a time", err))
		return time.Time{}, diags
	}
	return at, diags
}

// unreadableNote warns that a note of the provider's in the private state
// could not be read. The notes only spare a refresh or an apply work (a
// look at drifted queues, a wait for the statistics); the exact check
// before any deletion does not depend on them. So the note is ignored
// rather than failing every plan, and the next apply writes it anew.
func unreadableNote(key, want string, err error) diag.Diagnostic {
	return diag.NewWarningDiagnostic("Unreadable Private State Ignored",
		fmt.Sprintf("The provider's note %q in the state is not %s (%v), so it is ignored: nothing needs doing, "+
			"and the next apply that changes the set writes it again. No queue is deleted on the strength of a note: "+
			"each is checked for messages first.", key, want, err))
}

// isImportStub tells whether state is what ImportState writes: the name,
// the vhost and perhaps the layout, nothing read from the broker yet.
func isImportStub(state delayQueueSetModel) bool {
	return state.Levels.IsNull()
}
