package provider

import (
	"fmt"
	"math"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// groupSizeAttribute is the attribute of a set's quorum initial group
// size (topology.Spec.QuorumInitialGroupSize), and of each draining
// generation's.
const groupSizeAttribute = "quorum_initial_group_size"

// clusterLink points to the benchmarks of a set on a cluster.
const clusterLink = "[cluster benchmarks](" + benchmarksURL + "README.md#a-set-on-a-cluster-make-bench-cluster)"

// groupSizeShared is quorum_initial_group_size in the table both schemas
// are built from.
var groupSizeShared = sharedAttribute{kind: int64Attribute, optional: true, onResource: newGeneration,
	description: "How many nodes hold a replica of each TTL queue: RabbitMQ's initial group size, the queues' " +
		"`x-quorum-initial-group-size`, a whole number from 1, for `quorum` queues only. Unset, the queues get none and the " +
		"broker's own size applies: its `quorum_queue.initial_cluster_size` (3 unless set), or every node of a smaller " +
		"cluster. With fewer replicas than nodes, a node writes only the messages of the queues it holds, so a larger " +
		"cluster carries more: see the " + clusterLink + ". The broker picks a queue's members when it declares it: the " +
		"node that declares it, then the nodes that hold the fewest members. With `queue_leader_locator = \"balanced\"` the " +
		"provider therefore declares the set's queues through the nodes its vhost runs on in turn (through the management " +
		"endpoint it has), so that each node holds about as many of them; `members` shows where they went. No policy sets " +
		"it. In a library's `layout` it must stay unset: the library declares its queues without it (see the operating guide)."}

// groupSizeOf reads quorum_initial_group_size: 0 when unset or unknown
// (specFromModel reports unknown values). A configured 0, which the
// planner would read as unset, is refused in the planner's words, and so is
// a size beyond what every platform's int holds (the broker's argument is a
// 64-bit integer; no cluster has that many nodes).
func groupSizeOf(v types.Int64, diags *diag.Diagnostics) int {
	if v.IsNull() || v.IsUnknown() {
		return 0
	}
	size := v.ValueInt64()
	switch {
	case size == 0:
		diags.AddAttributeError(path.Root(groupSizeAttribute), "Invalid Delay Queue Set", topology.ExplicitZero(groupSizeAttribute).Error())
	case size > math.MaxInt32:
		diags.AddAttributeError(path.Root(groupSizeAttribute), "Invalid Delay Queue Set",
			fmt.Sprintf("%s: must be at most %d, got %d", groupSizeAttribute, math.MaxInt32, size))
		return 0
	}
	return int(max(size, math.MinInt32)) // the planner refuses a negative size
}

// optionalInt64 is n, or null for 0 (unset).
func optionalInt64(n int) types.Int64 {
	if n == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(int64(n))
}
