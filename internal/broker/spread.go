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
// members on the node that declares it: that node first, then the nodes
// with the fewest members. A set declared through one node would have a
// replica of every queue there. So Apply declares each quorum queue whose
// group size is smaller than the vhost's running nodes, with balanced
// leaders, through a node it names (the declaration's "node"), taking the
// nodes in turn. DESIGN.md, "Where the queues run on a cluster".

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
