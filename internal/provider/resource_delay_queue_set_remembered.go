package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// What the state remembers of a set, as package delayset reads it
// (delayset.Remembered), and the draining attribute.

// rememberedOf is what a state remembers of its set, for package delayset:
// its resolved spec, or, when the state cannot be planned (diags say why),
// its name, vhost and layout alone; its draining generations, the objects
// it shows and, with private (nil: not read), when it last switched and
// the log marks of the queues it declared.
func rememberedOf(ctx context.Context, state delayQueueSetModel, private privateState) (delayset.Remembered, diag.Diagnostics) {
	spec, diags := specOf(state)
	prior := delayset.Remembered{Spec: spec}
	prior.Shown, prior.ShownMore = shownOf(state)
	if diags.HasError() {
		prior.Spec = topology.Spec{Name: state.Name.ValueString(), VHost: state.VHost.ValueString(), Layout: layoutOf(state.Layout)}
		prior.Unresolved = true
	}
	prior.Draining, prior.DrainingMessages = drainingOf(state)
	if private != nil {
		var noteDiags diag.Diagnostics
		prior.SwitchedAt, noteDiags = switchedAt(ctx, private)
		diags.Append(noteDiags...)
		prior.Declared, noteDiags = declared(ctx, private)
		diags.Append(noteDiags...)
	}
	return prior, diags
}

// shownOf is the objects a state's exchanges, queues and bindings
// attributes show: the exchanges' and queues' names, the queues' types,
// and the bindings; more is true when a line names no binding (a plan
// never holds it, so the set is read before it is destroyed).
func shownOf(state delayQueueSetModel) (shown topology.Topology, more bool) {
	for _, line := range lines(state.Exchanges) {
		shown.Exchanges = append(shown.Exchanges, topology.Exchange{Name: topology.LineName(line)})
	}
	for _, line := range lines(state.Queues) {
		name, queueType := topology.QueueTypeInLine(line)
		shown.Queues = append(shown.Queues, topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: queueType}})
	}
	for _, line := range lines(state.Bindings) {
		b, ok := topology.BindingInLine(line)
		if ok {
			shown.Bindings = append(shown.Bindings, b)
		}
		more = more || !ok
	}
	return shown, more
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
