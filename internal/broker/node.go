package broker

import (
	"context"
	"net/http"
	"strconv"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
)

// NodeInfo describes the node that answers the management API, for the
// reports of the benchmarks that measure it.
type NodeInfo struct {
	Name            string
	RabbitMQVersion string
	ErlangVersion   string
	// OSPID is the node's operating-system process id; 0 when the user may
	// not list nodes (that needs the monitoring tag).
	OSPID int
}

// Node describes the node that answers the management API, in two requests.
func (c *Client) Node(ctx context.Context) (NodeInfo, error) {
	var overview *rabbithole.Overview
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("overview"), func() (err error) {
		overview, err = c.rabbit.Overview()
		return err
	})
	if err != nil {
		return NodeInfo{}, err
	}
	info := NodeInfo{Name: overview.Node, RabbitMQVersion: overview.RabbitMQVersion, ErlangVersion: overview.ErlangVersion}
	var node *rabbithole.NodeInfo
	err = c.viaRabbitHole(ctx, http.MethodGet, apiPath("nodes", overview.Node), func() (err error) {
		node, err = c.rabbit.GetNode(overview.Node)
		return err
	})
	if err == nil {
		info.OSPID, _ = strconv.Atoi(string(node.OsPid))
	}
	return info, nil
}
