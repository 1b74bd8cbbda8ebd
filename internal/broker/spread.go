package broker

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Where a quorum queue's replicas go. RabbitMQ picks a new quorum queue's
// members when it declares it, on the node that declares it: that node,
// then the running nodes that hold the fewest quorum queue members (one at
// random once the cluster holds 1,000 queues), up to the queue's
// x-quorum-initial-group-size; its leader is, with x-queue-leader-locator
// balanced, the member that leads the fewest queues
// (rabbit_queue_location:select_members and leader_node, 3.10.8 and
// 4.3.5). A declaration through the management API runs on the node that
// answers, or on the node its body names ("node": rabbit_mgmt_util's
// direct_request calls that node's rabbit_channel). Sent all to one node, a
// set's queues would all have a replica on it, and with fewer members than
// nodes that node would write every message of the set.
//
// So Apply declares each quorum queue that has a group size smaller than
// the vhost's running nodes, and balanced leaders, through a node it names,
// taking those nodes in turn (in name order, from one that the first such
// queue's name picks, so that sets of few queues do not all start on the
// same node); the broker picks the other members by its own count. Every
// node then holds about as many of the set's replicas as the others, and
// leads about as many of its queues. A queue declared with client-local
// leaders, or without a group size, still goes through the node that
// answers: client-local means that node, and without a size the broker's
// own applies to every queue alike.

// queueOnNode is a queue's declaration through a node of the cluster.
type queueOnNode struct {
	rabbithole.QueueSettings
	Node string `json:"node"`
}

// declaringNodes names the node that declares each quorum queue changes
// create with a group size and balanced leaders, when the vhost runs on
// more nodes than the group size; nil when there is none.
func (c *Client) declaringNodes(ctx context.Context, vhost string, changes []topology.Change) (map[string]string, error) {
	var spread []topology.Queue
	for _, change := range changes {
		if change.Kind != topology.CreateQueue || change.Queue == nil {
			continue
		}
		if a := change.Queue.Arguments; a.QueueType == topology.QueueTypeQuorum && a.QuorumInitialGroupSize > 0 &&
			a.LeaderLocator == topology.LeaderLocatorBalanced {
			spread = append(spread, *change.Queue)
		}
	}
	if len(spread) == 0 {
		return nil, nil
	}
	nodes, err := c.runningNodes(ctx, vhost)
	if err != nil {
		return nil, fmt.Errorf("reading the nodes vhost %q runs on, to spread the replicas of its queues over them: %w", vhost, err)
	}
	return spreadOver(nodes, spread), nil
}

// spreadOver names a node of nodes for each queue that has fewer members
// than there are nodes, taking them in turn from the one the first queue's
// name picks.
func spreadOver(nodes []string, queues []topology.Queue) map[string]string {
	if len(nodes) < 2 || len(queues) == 0 {
		return nil
	}
	hash := fnv.New32a()
	_, _ = hash.Write([]byte(queues[0].Name))
	next := int(hash.Sum32() % uint32(len(nodes)))
	chosen := map[string]string{}
	for _, q := range queues {
		if q.Arguments.QuorumInitialGroupSize >= len(nodes) {
			continue // a replica on every node, whichever declares it
		}
		chosen[q.Name] = nodes[next]
		next = (next + 1) % len(nodes)
	}
	return chosen
}

// runningNodes lists, sorted, the nodes on which vhost runs (its
// cluster_state), from GET /api/vhosts/{vhost}, which RabbitMQ shows to
// administrators only, or else from the listing of the vhosts the user
// may see.
func (c *Client) runningNodes(ctx context.Context, vhost string) ([]string, error) {
	var info *rabbithole.VhostInfo
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("vhosts", vhost), func() (err error) {
		info, err = c.rabbit.GetVhost(vhost)
		return err
	})
	var authErr *AuthError
	if errors.As(err, &authErr) && strings.Contains(authErr.Reason, notAdministrator) {
		info, err = c.visibleVHost(ctx, vhost)
	}
	if err != nil {
		return nil, err
	}
	var running []string
	for node, state := range info.ClusterState {
		if state == "running" {
			running = append(running, node)
		}
	}
	slices.Sort(running)
	return running, nil
}

// visibleVHost finds vhost among those the user may see.
func (c *Client) visibleVHost(ctx context.Context, vhost string) (*rabbithole.VhostInfo, error) {
	var infos []rabbithole.VhostInfo
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("vhosts"), func() (err error) {
		infos, err = c.rabbit.ListVhosts()
		return err
	})
	if err != nil {
		return nil, err
	}
	for i := range infos {
		if infos[i].Name == vhost {
			return &infos[i], nil
		}
	}
	return nil, fmt.Errorf("vhost %q: %w", vhost, ErrVHostNotFound)
}

// groupSize reads x-quorum-initial-group-size as the broker shows it, a
// JSON number: a whole number from 1 up; anything else stays untyped.
func groupSize(value any) (int, bool) {
	n, ok := value.(float64)
	if !ok || n < 1 || n > 1<<31-1 || n != float64(int(n)) {
		return 0, false
	}
	return int(n), true
}
