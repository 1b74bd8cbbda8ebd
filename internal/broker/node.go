package broker

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
)

// NodeInfo describes the node that answers the management API, for the
// reports of the benchmarks that measure it.
type NodeInfo struct {
	Name            string
	RabbitMQVersion string
	ErlangVersion   string
	// MetadataStore is where the node keeps its metadata: Khepri (the
	// khepri_db feature flag enabled, the default of 4.3) or Mnesia; empty
	// when the user may not read the feature flags.
	MetadataStore string
	// OSPID is the node's operating-system process id; 0 when the user may
	// not list nodes (that needs the monitoring tag).
	OSPID int
}

// Node describes the node that answers the management API, in two requests
// (more, half a second apart, while a node just started has no statistics).
func (c *Client) Node(ctx context.Context) (NodeInfo, error) {
	var overview *rabbithole.Overview
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("overview"), func() (err error) {
		overview, err = c.rabbit.Overview()
		return err
	})
	if err != nil {
		return NodeInfo{}, err
	}
	info := NodeInfo{Name: overview.Node, RabbitMQVersion: overview.RabbitMQVersion, ErlangVersion: overview.ErlangVersion,
		MetadataStore: c.MetadataStore(ctx)}
	err = awaitStatistics(ctx, func() (bool, error) {
		pid, visible := c.nodeOSPID(ctx, overview.Node)
		info.OSPID = pid
		return pid != 0 || !visible, nil
	})
	return info, err
}

// ClusterNode is a node of the broker's cluster, for the benchmarks that
// measure each node's CPU.
type ClusterNode struct {
	Name string
	// OSPID is the node's operating-system process id; 0 while the node
	// does not run or has no statistics yet.
	OSPID int
}

// ClusterNodes lists the nodes of the cluster of the node that answers
// (one for a lone node), sorted by name (GET /api/nodes, which needs the
// monitoring tag). As Node does, it waits a little for the first
// statistics of running nodes that just started, which bring their os_pid.
func (c *Client) ClusterNodes(ctx context.Context) ([]ClusterNode, error) {
	var nodes []ClusterNode
	err := awaitStatistics(ctx, func() (bool, error) {
		var infos []rabbithole.NodeInfo
		err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("nodes"), func() (err error) {
			infos, err = c.rabbit.ListNodes()
			return err
		})
		if err != nil {
			return false, err
		}
		nodes = make([]ClusterNode, 0, len(infos))
		complete := true
		for _, info := range infos {
			pid, _ := strconv.Atoi(string(info.OsPid))
			if !info.IsRunning {
				pid = 0
			}
			complete = complete && (pid != 0 || !info.IsRunning)
			nodes = append(nodes, ClusterNode{Name: info.Name, OSPID: pid})
		}
		return complete, nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(nodes, func(a, b ClusterNode) int { return strings.Compare(a.Name, b.Name) })
	return nodes, nil
}

// awaitStatistics asks ready every half second until it says yes, fails,
// or nodeStatisticsWait has passed (then what it last read stands): a
// node's details, such as its os_pid, come from its first statistics, some
// seconds after it starts.
func awaitStatistics(ctx context.Context, ready func() (bool, error)) error {
	deadline := time.Now().Add(nodeStatisticsWait)
	for {
		done, err := ready()
		if err != nil || done || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// nodeOSPID is the node's os_pid, 0 while it has no statistics yet; visible
// is false when the user may not see nodes.
func (c *Client) nodeOSPID(ctx context.Context, name string) (pid int, visible bool) {
	node, err := c.nodeDetails(ctx, name)
	if err != nil {
		return 0, false
	}
	pid, _ = strconv.Atoi(string(node.OsPid))
	return pid, true
}

// NodeMemUsed is the memory the node called name uses by its own count
// (mem_used), in bytes. The broker updates it at each statistics interval
// (5 s by default).
func (c *Client) NodeMemUsed(ctx context.Context, name string) (int64, error) {
	node, err := c.nodeDetails(ctx, name)
	if err != nil {
		return 0, err
	}
	return int64(node.MemUsed), nil
}

// nodeDetails reads the node called name (GET /api/nodes/{name}).
func (c *Client) nodeDetails(ctx context.Context, name string) (node *rabbithole.NodeInfo, err error) {
	err = c.viaRabbitHole(ctx, http.MethodGet, apiPath("nodes", name), func() (err error) {
		node, err = c.rabbit.GetNode(name)
		return err
	})
	return node, err
}

// nodeStatisticsWait bounds how long Node waits for a freshly started
// node's first statistics: three default statistics intervals.
const nodeStatisticsWait = 15 * time.Second

// MetadataStore tells where the node keeps its metadata, for the reports
// of the benchmarks and fault tests: "Khepri" when the khepri_db feature
// flag is enabled, "Mnesia" when it is not (or, as on 3.10, does not
// exist), "" when the feature flags cannot be read.
func (c *Client) MetadataStore(ctx context.Context) string {
	var flags []rabbithole.FeatureFlag
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("feature-flags"), func() (err error) {
		flags, err = c.rabbit.ListFeatureFlags()
		return err
	})
	if err != nil {
		return ""
	}
	for _, flag := range flags {
		if flag.Name == "khepri_db" && flag.State == rabbithole.StateEnabled {
			return "Khepri"
		}
	}
	return "Mnesia"
}
