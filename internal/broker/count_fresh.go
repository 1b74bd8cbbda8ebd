package broker

import (
	"context"
	"fmt"
	"time"
)

// Counting by statistics sampled after the check began: a queue's first
// statistics, and the proof that a sample is fresh.

// awaitFirstStatistics reads q again until it has what the check needs
// (has), at most k.timing.firstStatistics: a new queue has no statistics
// for some seconds (benchmarks/checks-4.0.md), and its policy, which on 3.x
// tells whether it may be peeked, comes with them. gone tells that it was
// deleted meanwhile.
func (k *counter) awaitFirstStatistics(ctx context.Context, vhost string, q queueJSON, has func(queueJSON) bool) (_ queueJSON, gone bool, err error) {
	deadline := time.Now().Add(statisticsWait(ctx, k.timing.firstStatistics))
	for !has(q) && time.Now().Before(deadline) {
		if err := k.pause(ctx); err != nil {
			return q, false, err
		}
		if q, err = k.readQueue(ctx, vhost, q.Name); isNotFound(err) {
			return q, true, nil
		} else if err != nil {
			return q, false, err
		}
	}
	return q, false, nil
}

func (k *counter) pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(k.timing.poll):
		return nil
	}
}

// countFresh counts q by statistics sampled after first was read: a count
// above 0 at once (a staleCount until proven fresh), and 0 only once proven.
// A quorum queue proves a fresh sample by the third change of its
// reductions, read twice (the collector may pair one collection's
// reductions with the previous counts); an idle classic queue, whose
// reductions do not change, and totals (no management metrics, from the
// leader's node) count from k.timing.totals after first. Past
// k.timing.fresh without proof, the queue is uncounted. DESIGN.md, "The
// broker client", says why.
func (k *counter) countFresh(ctx context.Context, vhost string, rule checkRule, first queueJSON) (_ int64, gone bool, err error) {
	started, deadline := time.Now(), time.Now().Add(statisticsWait(ctx, k.timing.fresh))
	q, changes, reread := first, 0, false
	for {
		messages, err := rule.countOf(vhost, q)
		// An idle classic queue's reductions do not change: its process
		// emits statistics every interval all the same, so one bound later
		// they count what it held once the check began.
		fresh := q.source() == fromStatistics && changes >= 3 && reread ||
			q.source() == fromStatistics && q.Type == queueTypeClassic && time.Since(started) >= k.timing.totals ||
			q.source() == fromTotals && q.Leader == first.Leader && time.Since(started) >= k.timing.totals
		switch {
		case err == nil && messages > 0 && fresh:
			return messages, false, nil
		case err == nil && messages > 0:
			// Not worth waiting for: the change is refused either way.
			return messages, false, rule.staleCount(vhost, q.Name, messages, q.describeCounts())
		case err == nil && fresh:
			return 0, false, nil
		case err != nil && q.source() == fromTotals:
			return 0, false, err // another node leads it: waiting changes nothing
		case time.Now().After(deadline):
			return 0, false, k.notFreshInTime(vhost, rule, q, err)
		}
		// The third change is read again at once: a pause could outlast the
		// node's sampling interval, and no read would ever repeat a row.
		if changes < 3 || reread || q.source() != fromStatistics {
			if err := k.pause(ctx); err != nil {
				return 0, false, err
			}
		}
		next, err := k.readQueue(ctx, vhost, q.Name)
		if isNotFound(err) {
			return 0, true, nil
		} else if err != nil {
			return 0, false, err
		}
		reread = sameReductions(q.Reductions, next.Reductions)
		if !reread {
			changes++
		}
		q = next
	}
}

// notFreshInTime is why countFresh could not count q within
// k.timing.fresh: err, the statistics' own failure, else an *UncountedError.
func (k *counter) notFreshInTime(vhost string, rule checkRule, q queueJSON, err error) error {
	switch {
	case err != nil:
		return err
	case rule.mayPeek(q):
		return &UncountedError{VHost: vhost, Queue: q.Name, Version: rule.version, Reason: fmt.Sprintf("only its "+
			"statistics count what its consumers hold, and they did not show a sample taken after the check began "+
			"within %s. Try again", k.timing.fresh)}
	}
	why := fmt.Sprintf("its statistics did not show a sample taken after the check began within %s. Try again", k.timing.fresh)
	if unproven := k.amqp.unproven(vhost); unproven != nil {
		why += fmt.Sprintf(" (its leader's count over AMQP was not asked: %v)", unproven)
	}
	return rule.uncounted(vhost, q.Name, why)
}
