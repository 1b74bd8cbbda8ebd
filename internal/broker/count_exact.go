package broker

import (
	"context"
	"time"
)

// ExactMessages is HeldMessages waiting no longer than wait for statistics:
// each queue is counted once arrivalsSettle has passed since the client
// last deleted a binding into it, and a queue that only statistics not
// sampled within wait could count (a new quorum queue's first ones, with
// at-least-once dead-lettering on 4.0–4.2; fresh ones) is uncounted
// (IsUncounted), so that a caller with a wait of its own, such as a
// switch's for the statistics to settle, is never held up longer by it.
func (c *Client) ExactMessages(ctx context.Context, vhost string, queues []string, wait time.Duration) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "exact messages", map[string]any{"vhost": vhost, "queues": len(queues), "wait_ms": wait.Milliseconds()})
	defer func() { report(err) }()
	for _, queue := range queues {
		if err := c.counter.awaitSettledArrivals(ctx, vhost, queue); err != nil {
			return nil, err
		}
	}
	counts, err := c.counter.count(context.WithValue(ctx, statisticsBound{}, max(wait, 0)), vhost, queues, countHeld, nil)
	return withoutEmpty(counts, err)
}

// statisticsBound, in a count's context, bounds its waits for statistics
// (ExactMessages).
type statisticsBound struct{}

// statisticsWait is how long a count may wait for statistics: bound, or
// less where its context says so.
func statisticsWait(ctx context.Context, bound time.Duration) time.Duration {
	if limit, ok := ctx.Value(statisticsBound{}).(time.Duration); ok {
		return min(bound, limit)
	}
	return bound
}
