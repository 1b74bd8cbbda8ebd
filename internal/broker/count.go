package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// The counts of a set's queues: HeldMessages before a change, CountedMessages
// to watch a draining generation, and the check Apply makes before deleting
// a quorum queue (countForDeletion), each queue read alone. What a check may
// do to a queue is check.go's (checkRule), and the leader's count over AMQP
// amqp.go's and check.go's (leaderCount).

// HeldMessages tells which of the named queues of vhost hold messages, and
// how many at least, exactly enough to decide before any change whether
// deleting them would lose messages: a queue is in the map only if it holds
// something, and a queue that does not exist is absent. A vhost that does not
// exist is ErrVHostNotFound.
//
// It makes, for each queue, the check Apply makes before deleting a quorum
// queue, but without waiting for statistics sampled after it began (see
// queueHeld): Apply's deletion waits, and checks again. A queue it cannot
// count (see UncountedError) is in the map as holding one message, and the
// error, beside the map, says why (IsUncounted tells such an error). Once
// one queue is found holding messages, the checks still waiting for fresh
// statistics heldGrace later are stopped: the map then names the queues
// found holding by then, enough to refuse a change.
func (c *Client) HeldMessages(ctx context.Context, vhost string, queues []string) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "held messages", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	return withoutEmpty(c.heldMessages(ctx, vhost, queues, countHeld))
}

// withoutEmpty drops the queues that hold nothing from what heldMessages
// counted.
func withoutEmpty(held map[string]int64, err error) (map[string]int64, error) {
	maps.DeleteFunc(held, func(_ string, n int64) bool { return n == 0 })
	return held, err
}

// StatisticsLag bounds how long the management statistics take to count a
// message that entered a queue: the broker samples them every 5 s by default
// (collect_statistics_interval), and counts showed 3.5 to 9.3 s after the
// publish (DESIGN.md, "What the broker does").
const StatisticsLag = 10 * time.Second

// CountedMessages is HeldMessages without the peek: what the management
// statistics of each named queue count, one request per queue, lagging by
// up to a statistics interval. It disturbs no queue that has statistics, so
// it suits watching queues that hold messages, such as a draining
// generation's; it never decides that deleting a queue is safe. A queue the
// broker gives no statistics for (a new one, or any on a broker that
// collects none) is peeked at where a peek is no delivery, as HeldMessages
// does: a count of nothing there would call a generation that holds
// messages empty. Where a peek would count, such a queue is counted by the
// totals of its leader's node, or uncounted, as in HeldMessages.
func (c *Client) CountedMessages(ctx context.Context, vhost string, queues []string) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "counted messages", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	return withoutEmpty(c.heldMessages(ctx, vhost, queues, countStatistics))
}

// checkMode is how exact a count of a queue's messages must be, and so
// what it may cost.
type checkMode int

const (
	// countStatistics: the statistics where they count (CountedMessages).
	countStatistics checkMode = iota
	// countHeld: exact enough to refuse a change (HeldMessages).
	countHeld
	// countForDeletion: exact at the moment of a deletion (Apply).
	countForDeletion
)

// heldMessages counts the messages each named queue of vhost holds, in
// mode, for every queue that exists (one that does not is
// absent from the map; a vhost that does not exist is ErrVHostNotFound).
// Each queue is read alone, four at a time, so the check costs the same
// however many other queues the vhost holds: one or two requests per queue
// (more while a check waits for statistics), one more if a queue is
// missing, to ask about the vhost (the broker answers 404 alike for both),
// and, at the client's first check of a quorum queue, one or two to learn
// the broker (checkRule). Uncounted queues count as holding one message,
// and come back as the error too (see HeldMessages).
func (c *Client) heldMessages(ctx context.Context, vhost string, queues []string, mode checkMode) (map[string]int64, error) {
	names := slices.Compact(slices.Sorted(slices.Values(queues)))
	counts := make([]int64, len(names))
	exists := make([]bool, len(names))
	limit := readConcurrency
	if mode != countStatistics {
		limit = checkConcurrency // checks that may wait for fresh statistics wait together
	}
	// Before a change, one queue found holding a message settles it: the
	// change is refused. The checks still waiting for fresh statistics a
	// moment later are stopped (their queues absent from the answer), so
	// that a refusal does not wait for them.
	checkCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var stopping sync.Once
	errs := runUntilUnreachable(checkCtx, len(names), limit, func(ctx context.Context, i int) (err error) {
		counts[i], exists[i], err = c.queueHeld(ctx, vhost, names[i], mode)
		if IsUncounted(err) {
			counts[i] = 1
		}
		if mode == countHeld && err == nil && counts[i] > 0 {
			stopping.Do(func() { time.AfterFunc(heldGrace, func() { stop(errOthersHold) }) })
		}
		return err
	})
	if ctx.Err() == nil && errors.Is(context.Cause(checkCtx), errOthersHold) {
		for i, err := range errs {
			if errors.Is(err, errOthersHold) || errors.Is(err, context.Canceled) {
				errs[i], exists[i] = nil, false
			}
		}
	}
	err := errors.Join(errs...)
	if err != nil && !IsUncounted(err) {
		return nil, err
	}
	held := make(map[string]int64, len(names))
	for i, name := range names {
		if exists[i] {
			held[name] = counts[i]
		}
	}
	if slices.Contains(exists, false) {
		switch found, vhostErr := c.VHostExists(ctx, vhost); {
		case vhostErr != nil:
			return nil, vhostErr
		case !found:
			return nil, fmt.Errorf("reading queues: %w: %q", ErrVHostNotFound, vhost)
		}
	}
	return held, err
}

// heldGrace is how long, once a check before a change found a queue
// holding messages, the checks of the other queues may go on: enough for
// those that need no fresh statistics, which then name their queues too.
const heldGrace = 2 * time.Second

// errOthersHold stops the checks that a refusal no longer needs.
var errOthersHold = errors.New("another queue holds messages")

// queueHeld counts the messages one queue holds:
//
//  1. the queue's management statistics (ready, unacknowledged and
//     messages_dlx), the only source for messages delivered but
//     unacknowledged and, for at-least-once dead-lettering, waiting in
//     messages_dlx; they lag by up to a statistics interval;
//  2. only when they count none (or the broker gives none), and only where
//     a peek is no delivery (checkRule), a peek at the queue's head that
//     puts the message back (peekReady), exact for ready messages at the
//     instant the broker answers; a message it finds comes back marked
//     redelivered. Without statistics the peek is all there is: messages
//     unacknowledged or waiting in messages_dlx go unseen;
//  3. where a peek would count as a delivery, no peek at all
//     (countWithoutPeek): the statistics, or the totals of the leader's
//     node, and for a deletion only a count sampled after the check began.
//
// The peek is kept for when the statistics count nothing because each peek
// disturbs the queue a little (it marks the message redelivered, and a
// reject-peek, before issue 23, moved a 3.10 quorum queue's head behind the
// others). A count from statistics that lag may also be too high; a caller
// deciding to delete then keeps the queue, which errs on the safe side.
//
// exists is false when either answered 404: the queue (or its vhost) does
// not exist.
func (c *Client) queueHeld(ctx context.Context, vhost, name string, mode checkMode) (held int64, exists bool, err error) {
	q, err := c.readQueue(ctx, vhost, name)
	switch {
	case isNotFound(err):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("reading the statistics of queue %q of vhost %q: %w", name, vhost, err)
	}
	if counted, _ := q.messages(); counted > 0 {
		return counted, true, nil
	}
	rule, peek, gone, err := c.howToCheck(ctx, vhost, &q, mode)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("checking queue %q of vhost %q: %w", name, vhost, err)
	case gone:
		return 0, false, nil
	case !peek:
		return c.countWithoutPeek(ctx, vhost, rule, q, mode)
	}
	if counted, known := q.messages(); counted > 0 || (mode == countStatistics && known) {
		return counted, true, nil
	}
	ready, gone, err := c.peekReady(ctx, vhost, name)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("looking for a message in queue %q of vhost %q: %w", name, vhost, err)
	case gone:
		return 0, false, nil
	}
	return ready, true, nil
}

// howToCheck tells whether rule lets a check peek at q, whose statistics
// count nothing. A classic queue is peeked at without learning the broker.
// On 3.x, where a limit that a policy sets decides, a quorum queue whose
// policy the answer lacks (a new queue's comes with its statistics) is
// read again until it has it (not for CountedMessages).
func (c *Client) howToCheck(ctx context.Context, vhost string, q *queueJSON, mode checkMode) (rule checkRule, peek, gone bool, err error) {
	if q.Type == queueTypeClassic {
		return checkRule{}, true, false, nil
	}
	if rule, err = c.rule(ctx); err != nil {
		return rule, false, false, err
	}
	if rule.quorum == quorumPeekUnlessLimited && mode != countStatistics && !hasPolicy(*q) {
		if *q, gone, err = c.awaitFirstStatistics(ctx, vhost, *q, hasPolicy); err != nil || gone {
			return rule, false, gone, err
		}
	}
	return rule, rule.mayPeek(*q), false, nil
}

// countWithoutPeek counts q, which rule forbids peeking at: for a deletion
// countForDeletion's count; before a change, its leader's count where it
// can be trusted (leaderCount), else a count sampled after the check began
// (countFresh); otherwise what the statistics or the leader's totals count
// (rule.countOf). exists is false when the queue went meanwhile.
func (c *Client) countWithoutPeek(ctx context.Context, vhost string, rule checkRule, q queueJSON, mode checkMode) (_ int64, exists bool, err error) {
	switch mode {
	case countForDeletion:
		return c.countForDeletion(ctx, vhost, rule, q)
	case countHeld:
		// As fresh as the deletion's own check: a change refused here
		// changes nothing, where one refused at a deletion has begun.
		if n, trusted, gone, err := c.leaderCount(ctx, vhost, rule, q, false); err != nil || gone || trusted {
			return n, !gone, err
		}
		messages, gone, err := c.countFresh(ctx, vhost, rule, q)
		return messages, !gone, err
	case countStatistics:
	}
	messages, err := rule.countOf(vhost, q)
	return messages, true, err
}

// countForDeletion is the no-peek check of a queue about to be deleted,
// first read: it stops the messages that would reach it (stopArrivals),
// reads it again if that deleted a binding, and counts it (countStopped). A queue it does not find empty gets its
// bindings back, on a deadline of its own (restoreTimeout): a cancelled
// apply must not leave the queue unbound.
func (c *Client) countForDeletion(ctx context.Context, vhost string, rule checkRule, first queueJSON) (_ int64, exists bool, err error) {
	name := first.Name
	restore, stoppedAny, err := c.stopArrivals(ctx, vhost, name)
	if err != nil {
		return 0, false, err
	}
	// A read made before arrivals stopped does not count; one made when
	// none came any more (no binding left to delete) does.
	q := first
	if stoppedAny {
		q, err = c.readQueue(ctx, vhost, name)
	}
	var messages int64
	gone := isNotFound(err)
	if err == nil {
		messages, gone, err = c.countStopped(ctx, vhost, rule, q)
	}
	if !gone && (err != nil || messages > 0) {
		if restoreErr := restoreOnItsOwn(ctx, restore); restoreErr != nil {
			return 0, false, errors.Join(err, restoreErr)
		}
	}
	return messages, !gone, err
}

// countStopped counts q, which takes no more messages: what its statistics
// count, if anything; else its leader's count where it can be trusted
// (leaderCount); else a count sampled after q was read (countFresh).
func (c *Client) countStopped(ctx context.Context, vhost string, rule checkRule, q queueJSON) (_ int64, gone bool, err error) {
	if counted, err := rule.countOf(vhost, q); err == nil && counted > 0 {
		return counted, false, nil
	}
	if n, trusted, gone, err := c.leaderCount(ctx, vhost, rule, q, true); err != nil || gone || trusted {
		return n, gone, err
	}
	return c.countFresh(ctx, vhost, rule, q)
}
