package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Where a set's queues run: the placement, leaders and members attributes.

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
