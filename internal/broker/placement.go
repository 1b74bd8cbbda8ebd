package broker

import (
	"cmp"
	"context"
	"slices"
	"sync"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
)

// Placement is where a queue runs: on one node, the same for every queue;
// on a cluster, a quorum queue's leader and replicas, or a classic queue's
// node. The management API gives it with every queue, statistics or not.
type Placement struct {
	// Leader is the node of a quorum queue's leader, or of a classic queue;
	// empty while a quorum queue has no leader.
	Leader string
	// Members are a quorum queue's replicas and Online those on nodes that
	// run, both sorted; nil for a classic queue.
	Members, Online []string
}

func placementOf(q rabbithole.QueueInfo) Placement {
	p := Placement{Leader: cmp.Or(q.Leader, q.Node)}
	if len(q.Members) > 0 {
		p.Members, p.Online = slices.Sorted(slices.Values(q.Members)), slices.Sorted(slices.Values(q.Online))
	}
	return p
}

// placements are the placements of the queues the client's reads found:
// the last read of a queue that found it says where it is.
type placements struct {
	mu    sync.Mutex
	found map[vhostQueue]Placement
}

type vhostQueue struct{ vhost, queue string }

func (p *placements) remember(vhost string, q rabbithole.QueueInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.found == nil {
		p.found = map[vhostQueue]Placement{}
	}
	p.found[vhostQueue{vhost, q.Name}] = placementOf(q)
}

// Placements says where each named queue of vhost was when a read of this
// client last found it (ReadSetOf, ReadSetNamed and the like): no request
// is made. A queue no read has found is absent.
func (c *Client) Placements(vhost string, queues []string) map[string]Placement {
	c.placements.mu.Lock()
	defer c.placements.mu.Unlock()
	found := make(map[string]Placement, len(queues))
	for _, queue := range queues {
		if p, ok := c.placements.found[vhostQueue{vhost, queue}]; ok {
			found[queue] = p
		}
	}
	return found
}

// ReadPlacements reads where each named queue of vhost runs, by name, four
// at a time (the cost of a queue listing grows with the vhost's queues,
// that of a read by name does not), for an apply that has just declared
// some. A queue that does not exist is absent. It only returns what it
// read: Placements stays what the last read of a set found.
func (c *Client) ReadPlacements(ctx context.Context, vhost string, queues []string) (_ map[string]Placement, err error) {
	ctx, report := c.observe(ctx, "read placements", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	infos := make([]*rabbithole.QueueInfo, len(queues))
	err = runFailFast(ctx, len(queues), readConcurrency, func(ctx context.Context, i int) (err error) {
		infos[i], err = c.readQueueNamed(ctx, vhost, queues[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	found := make(map[string]Placement, len(queues))
	for _, q := range infos {
		if q != nil {
			found[q.Name] = placementOf(*q)
		}
	}
	return found, nil
}
