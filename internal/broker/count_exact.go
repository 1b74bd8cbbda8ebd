package broker

import (
	"context"
	"time"
)

// ExactMessages is HeldMessages where the count needs no statistics yet to
// come: each queue is counted once arrivalsSettle has passed since the
// client last deleted a binding into it, and a queue that only statistics
// not yet sampled could count (a new quorum queue's first ones, fresh ones)
// is uncounted at once (IsUncounted) instead of waited for, so that a caller
// with a wait of its own, such as a switch's, can choose it.
func (c *Client) ExactMessages(ctx context.Context, vhost string, queues []string) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "exact messages", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	for _, queue := range queues {
		if err := c.counter.awaitSettledArrivals(ctx, vhost, queue); err != nil {
			return nil, err
		}
	}
	return withoutEmpty(c.counter.count(context.WithValue(ctx, noStatisticsWait{}, true), vhost, queues, countHeld, nil))
}

// noStatisticsWait, in a count's context, makes its waits for statistics
// end at once (ExactMessages).
type noStatisticsWait struct{}

// statisticsWait is how long a count may wait for statistics: bound, or
// nothing for ExactMessages.
func statisticsWait(ctx context.Context, bound time.Duration) time.Duration {
	if none, _ := ctx.Value(noStatisticsWait{}).(bool); none {
		return 0
	}
	return bound
}
