package broker

import (
	"context"
	"sync"
)

// A quorum queue's Raft log as the declaration that created it left it. No
// message enters or leaves a quorum queue without an entry in its log, so
// a queue whose leader's log still ends where it ended right after that
// declaration holds nothing: none ready, none delivered, none waiting for
// a dead-letter confirm. Where a count needs messages_dlx (RabbitMQ
// 4.0–4.2), that spares the wait for a new queue's first statistics.
// DESIGN.md, "Counting without a delivery", gives the limits.

// LogMark is where a quorum queue's log ended: the leader's term and the
// index of its last entry.
type LogMark struct {
	Term  int64 `json:"term"`
	Index int64 `json:"index"`
}

// declaredMarks are the marks of the queues this client created, and of
// those it was told of (RememberDeclared).
type declaredMarks struct {
	mu    sync.Mutex
	marks map[vhostObject]LogMark
}

func (d *declaredMarks) set(vhost, queue string, mark LogMark) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.marks == nil {
		d.marks = map[vhostObject]LogMark{}
	}
	d.marks[vhostObject{vhost, queue}] = mark
}

func (d *declaredMarks) forget(vhost, queue string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.marks, vhostObject{vhost, queue})
}

func (d *declaredMarks) get(vhost, queue string) (LogMark, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	mark, ok := d.marks[vhostObject{vhost, queue}]
	return mark, ok
}

// DeclaredMarks are the log marks of the named queues of vhost that this
// client created, or was told of: what a later run hands RememberDeclared.
func (c *Client) DeclaredMarks(vhost string, queues []string) map[string]LogMark {
	found := map[string]LogMark{}
	for _, queue := range queues {
		if mark, ok := c.counter.declared.get(vhost, queue); ok {
			found[queue] = mark
		}
	}
	return found
}

// RememberDeclared tells the client the log marks that DeclaredMarks gave
// an earlier client for queues of vhost.
func (c *Client) RememberDeclared(vhost string, marks map[string]LogMark) {
	for queue, mark := range marks {
		c.counter.declared.set(vhost, queue, mark)
	}
}

// createdQueues are the quorum queues whose declarations created them
// (201 Created): a queue that existed (204) may hold messages already, so
// its log marks nothing.
type createdQueues struct {
	mu     sync.Mutex
	queues []string
}

func (q *createdQueues) add(queue string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queues = append(q.queues, queue)
}

func (q *createdQueues) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	taken := q.queues
	q.queues = nil
	return taken
}

// markDeclared notes the log marks of queues, quorum queues of vhost just
// created, on a broker whose counts ask the leader. Nothing fails for want
// of a mark: it only spares a wait.
func (c *Client) markDeclared(ctx context.Context, vhost string, queues []string) {
	if len(queues) == 0 {
		return
	}
	if rule, err := c.counter.rule(ctx); err != nil || rule.quorum != quorumNoPeek {
		return
	}
	runLimited(ctx, len(queues), applyConcurrency, func(ctx context.Context, i int) error {
		if mark, ok := c.counter.leaderLog(ctx, vhost, queues[i]); ok {
			c.counter.declared.set(vhost, queues[i], mark)
		}
		return nil
	})
}

// leaderLog reads where the log of queue's leader ends.
func (k *counter) leaderLog(ctx context.Context, vhost, queue string) (LogMark, bool) {
	var members []struct {
		State string `json:"Raft State"`
		Term  int64  `json:"Term"`
		Index int64  `json:"Last Log Index"`
	}
	if err := k.api.get(ctx, apiPath("queues", "quorum", vhost, queue, "status"), nil, &members); err != nil {
		return LogMark{}, false
	}
	for _, m := range members {
		if m.State == "leader" {
			return LogMark{Term: m.Term, Index: m.Index}, true
		}
	}
	return LogMark{}, false
}

// untouchedSinceDeclared tells whether queue's leader's log ends where it
// ended right after the declaration that created it, so that the queue
// holds nothing. A log that moved forgets its mark.
func (k *counter) untouchedSinceDeclared(ctx context.Context, vhost, queue string) bool {
	declared, ok := k.declared.get(vhost, queue)
	if !ok {
		return false
	}
	now, ok := k.leaderLog(ctx, vhost, queue)
	untouched := ok && now == declared
	if ok && !untouched {
		k.declared.forget(vhost, queue) // a log never returns to its mark
	}
	if k.logf != nil {
		k.logf(ctx, "a quorum queue's log since its declaration", map[string]any{
			"queue": queue, "declared_index": declared.Index, "index": now.Index, "untouched": untouched,
		})
	}
	return untouched
}

// recountTouchedSince counts again each queue of names that its log mark
// found empty (trustedByMark), if the log moved since: the queues
// are counted at different instants, and a message dead-lettered from a
// queue counted later into one counted before would be seen by neither.
func (k *counter) recountTouchedSince(ctx context.Context, vhost string, names []string, mode checkMode,
	stop arrivalsStopper, counts []int64, exists []bool, errs []error,
) {
	marked, ok := ctx.Value(trustedByMark{}).(*sync.Map)
	if !ok {
		return
	}
	var recount []int
	for i, name := range names {
		if _, byMark := marked.Load(name); byMark && exists[i] && counts[i] == 0 && errs[i] == nil {
			recount = append(recount, i)
		}
	}
	runLimited(ctx, len(recount), checkConcurrency, func(ctx context.Context, j int) error {
		i := recount[j]
		if !k.untouchedSinceDeclared(ctx, vhost, names[i]) {
			counts[i], exists[i], errs[i] = k.queueHeld(ctx, vhost, names[i], mode, stop)
			if IsUncounted(errs[i]) {
				counts[i] = max(counts[i], 1)
			}
		}
		return nil
	})
}

// trustedByMark, in a count's context, holds the names of the queues whose
// 0 a log at its mark let the count trust.
type trustedByMark struct{}

func noteTrustedByMark(ctx context.Context, queue string) {
	if marked, ok := ctx.Value(trustedByMark{}).(*sync.Map); ok {
		marked.Store(queue, true)
	}
}
