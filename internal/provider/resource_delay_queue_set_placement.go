package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Where the set's queues run: read by every refresh with the queues
// themselves (no request of its own) and by every apply after its changes
// (a read of each queue by name); shown, never planned: the broker places a
// queue when it is declared, so a plan that changes the set knows it only
// after.
const placementWhen = "As the last refresh or apply read it; known after apply when a plan changes the set. It is " +
	"never a change of the set: a queue's leader moves when its node goes down or the operator rebalances."

func placementAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"placement": schema.StringAttribute{
			MarkdownDescription: "Where each queue of the set runs, one line each: a quorum queue's leader node and members, " +
				"and its members on nodes that are down (`<queue>: leader rabbit@a, members rabbit@a rabbit@b rabbit@c, " +
				"offline rabbit@c`), or a classic queue's node (`<queue>: node rabbit@a`). " + placementWhen,
			Computed: true,
		},
		"leaders": schema.MapAttribute{
			MarkdownDescription: "How many of the set's queues each node leads (a classic queue counts for its node): a set " +
				"whose queues all lead on one node leaves that node all of its expiry and dead-lettering work " +
				"(see `queue_leader_locator`). " + placementWhen,
			ElementType: types.Int64Type,
			Computed:    true,
		},
	}
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
}

// readPlacement shows where the queues of set are after an apply. The apply is
// done, so a failed read is only a warning, and the next refresh reads it.
func readPlacement(ctx context.Context, client *broker.Client, spec topology.Spec, set topology.Topology, m *delayQueueSetModel) diag.Diagnostics {
	placements, err := client.ReadPlacements(ctx, spec.VHost, set.QueueNames())
	if err != nil {
		m.Placement, m.Leaders = types.StringNull(), types.MapNull(types.Int64Type)
		var diags diag.Diagnostics
		diags.AddWarning("Cannot Read Where the Queues Run",
			fmt.Sprintf("The apply is done, but reading where the queues of %q run failed: %v. placement and leaders stay "+
				"empty until the next refresh.", spec.Name, err))
		return diags
	}
	setPlacement(m, placements)
	return nil
}

// noPlacement leaves the placement of a set an apply left part-made empty:
// the next refresh reads it.
func noPlacement(m *delayQueueSetModel) {
	m.Placement, m.Leaders = types.StringNull(), types.MapNull(types.Int64Type)
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
