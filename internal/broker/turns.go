package broker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync"
)

// quorumDeletionTurn waits for the turn of one quorum queue deletion on the
// cluster that the client's management API serves, and returns the function
// that ends it. Deletions take turns across every client of the process
// (provider aliases, resources) and, through a lock file, across the
// processes of this machine (two terraform runs): quorum queues deleted at
// once can corrupt a node's Ra directory (DESIGN.md, "Many sets in one
// configuration"). Waiting stops when ctx ends, with its cause.
func (c *Client) quorumDeletionTurn(ctx context.Context, vhost string) (release func(), err error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	key := c.deletionTurnKey(ctx)
	waiting := c.sayingOnce(ctx, "waiting for another quorum queue deletion on this cluster to end", vhost, key)
	endInProcess, err := processTurns.take(ctx, key, waiting)
	if err != nil {
		return nil, err
	}
	endOnMachine, err := machineTurn(ctx, key, waiting)
	switch {
	case errors.Is(err, errNoTurnFile):
		// Deleting matters more than the lock: the turn is then this process's alone.
		if c.logf != nil {
			c.logf(ctx, "quorum queue deletions take turns within this process only", map[string]any{"vhost": vhost, "error": err.Error()})
		}
		return endInProcess, nil
	case err != nil:
		endInProcess()
		return nil, err
	}
	return func() { endOnMachine(); endInProcess() }, nil
}

// deletionTurnKey names the cluster the deletions of whose quorum queues
// take turns: its cluster_name, which every node's management API gives,
// so clients of two nodes share it; the endpoint where the name cannot be
// read (an Apply's deletions then still take turns).
func (c *Client) deletionTurnKey(ctx context.Context) string {
	if name, err := c.clusterName(ctx); err == nil {
		return "cluster " + name
	}
	return "endpoint " + c.endpoint
}

// processTurns are the turns of the process's clients, by key.
var processTurns = turns{size: 1, held: map[string]chan struct{}{}}

// quorumChecksAhead bounds the quorum queue deletions of the process that
// check a cluster's queues ahead of its deletion turn: more only slow the
// one deletion in flight, whose broker answers their checks meanwhile,
// and none of them can be deleted sooner.
const quorumChecksAhead = 4

// checksAhead are the places of the deletions that check ahead, by key.
var checksAhead = turns{size: quorumChecksAhead, held: map[string]chan struct{}{}}

// quorumCheckAhead waits for a place among the quorum queue deletions that
// check the client's cluster ahead of its deletion turn, and returns the
// function that gives it up, once the deletion is done.
func (c *Client) quorumCheckAhead(ctx context.Context, vhost string) (release func(), err error) {
	key := c.deletionTurnKey(ctx)
	return checksAhead.take(ctx, key, c.sayingOnce(ctx, "waiting for other quorum queue deletions on this cluster to check their queues", vhost, key))
}

// sayingOnce is a wait's waiting function: a destroy that pauses says why,
// once, rather than stall without a word.
func (c *Client) sayingOnce(ctx context.Context, why, vhost, key string) func() {
	return sync.OnceFunc(func() {
		if c.logf != nil {
			c.logf(ctx, why, map[string]any{"vhost": vhost, "turn": key})
		}
	})
}

// turns hands out size turns per key at a time.
type turns struct {
	size int
	mu   sync.Mutex
	held map[string]chan struct{} // a full channel is every turn taken
}

// take waits for key's turn, or for ctx to end; waiting is called first
// when the turn is taken.
func (t *turns) take(ctx context.Context, key string, waiting func()) (release func(), err error) {
	t.mu.Lock()
	turn, ok := t.held[key]
	if !ok {
		turn = make(chan struct{}, t.size)
		t.held[key] = turn
	}
	t.mu.Unlock()
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	default:
		waiting()
	}
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// errNoTurnFile is a machine-wide turn that cannot be had: no lock file
// can be opened or locked, or the platform has no file locks.
var errNoTurnFile = errors.New("no lock file for the turns of this machine's processes")

// turnFilePath is the lock file of key's turns, named by a hash of the key:
// a cluster's name is no file name.
func turnFilePath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(os.TempDir(), "terraform-provider-rabbitmq-quorum-deletions-"+hex.EncodeToString(sum[:8])+".lock")
}
