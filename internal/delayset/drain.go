package delayset

import (
	"context"
	"maps"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// poll is how often Empty asks the statistics again while it waits.
const poll = time.Second

// Counted counts by the statistics the messages each queue of the draining
// generations of spec's set holds (nil when there are none).
func Counted(ctx context.Context, counter Counter, spec topology.Spec, draining []topology.Generation) (map[string]int64, error) {
	return count(ctx, counter.CountedMessages, spec, draining)
}

// exactCount counts exactly the queues of generations, as the guard does
// (exactCounts): an uncounted queue holds.
func exactCount(ctx context.Context, counter Counter, spec topology.Spec, generations []topology.Generation) (map[string]int64, error) {
	counts, _, err := exactCounts(ctx, counter, spec.VHost, queuesOf(spec, generations))
	return counts, err
}

// queuesOf lists the queues of generations of spec's set.
func queuesOf(spec topology.Spec, generations []topology.Generation) []string {
	var queues []string
	for _, g := range generations {
		queues = append(queues, g.Queues(spec.Name)...)
	}
	return queues
}

// count counts with one of a Counter's methods.
func count(ctx context.Context, method func(ctx context.Context, vhost string, queues []string) (map[string]int64, error),
	spec topology.Spec, draining []topology.Generation,
) (map[string]int64, error) {
	queues := queuesOf(spec, draining)
	if len(queues) == 0 {
		return nil, nil
	}
	counts, err := method(ctx, spec.VHost, queues)
	if broker.IsUncounted(err) {
		// The counts hold each queue the broker cannot count as holding a
		// message: its generation is kept, never deleted on a guess.
		return counts, nil
	}
	return counts, err
}

// Refreshed counts the messages each queue of the draining generations
// holds, for a refresh: by the statistics, and exactly the generations they
// count nothing in that a plan would then call empty (CalledEmpty; settled
// as there). Statistics lag behind messages that move between queues, so a
// generation holding messages can count none for seconds; the exact check
// keeps a refresh from showing it empty (DESIGN.md, Generations).
func Refreshed(ctx context.Context, counter Counter, spec topology.Spec, draining []topology.Generation, settled bool) (map[string]int64, error) {
	counts, err := Counted(ctx, counter, spec, draining)
	if err != nil {
		return nil, err
	}
	held, err := exactCount(ctx, counter, spec, CalledEmpty(draining, messagesOf(spec, draining, counts), settled))
	if err != nil {
		return nil, err
	}
	if len(held) > 0 && counts == nil {
		counts = map[string]int64{}
	}
	maps.Copy(counts, held)
	return counts, nil
}

// Keep lists the generations an update to spec keeps beside spec's own,
// oldest first (see topology.KeepDraining), given the broker's current
// generation and the older ones that drain: each older one that holds a
// message by the exact count, since those found empty are deleted, and the
// current one when spec switches from it. The current one is not counted:
// a switch keeps it anyway, so a peek there would be work for nothing.
func Keep(ctx context.Context, counter Counter, spec, current topology.Spec, draining []topology.Generation) ([]topology.Generation, error) {
	held, err := exactCount(ctx, counter, spec, draining)
	if err != nil {
		return nil, err
	}
	return topology.KeepDraining(spec, current, draining, held), nil
}

// Settled tells whether the statistics of the generation that stopped taking
// messages at switched can be trusted, now, to count every message that
// entered it: whether broker.StatisticsLag has passed since. A zero switched
// (no switch noted) is settled.
func Settled(now, switched time.Time) bool {
	return switched.IsZero() || now.Sub(switched) >= broker.StatisticsLag
}

// CalledEmpty lists the draining generations, oldest first, that may be
// called empty from the statistics' counts of their messages (messages[i]
// for draining[i]): each that counts none, but the last, the one switched
// from last, only once its statistics have settled; until then they may
// count nothing while it holds messages.
func CalledEmpty(draining []topology.Generation, messages []int64, settled bool) []topology.Generation {
	var empty []topology.Generation
	for i, g := range draining {
		if messages[i] == 0 && (settled || i < len(draining)-1) {
			empty = append(empty, g)
		}
	}
	return empty
}

// Empty waits up to wait for the draining generations of spec's set to
// empty. It returns the messages their queues hold and the generations that
// are empty for certain, which may be deleted. The generation that stopped
// taking messages at switched (zero: none in this update), the last one,
// is first counted exactly (exactlyEmpty): found empty, it is empty for
// certain at once. Otherwise Empty watches the generations by their
// statistics, every second, until none holds a message and those of the
// last one have settled, or until wait has passed. Then it checks exactly
// only the generations the statistics call empty (see CalledEmpty): a
// generation the exact count finds a message in is kept.
func Empty(ctx context.Context, counter Counter, clock Clock, spec topology.Spec, draining []topology.Generation,
	wait time.Duration, switched time.Time,
) (counts map[string]int64, empty []topology.Generation, err error) {
	if n := len(draining); n > 0 && !Settled(clock.Now(), switched) {
		last := draining[n-1]
		// Never longer than the wait below, for the statistics to settle.
		statistics := min(wait, switched.Add(broker.StatisticsLag).Sub(clock.Now()))
		switch none, err := exactlyEmpty(ctx, counter, spec, last, statistics); {
		case err != nil:
			return nil, nil, err
		case none:
			// The older ones stopped taking messages before: settled.
			counts, empty, err = Empty(ctx, counter, clock, spec, draining[:n-1], wait, time.Time{})
			if counts == nil && err == nil {
				counts = map[string]int64{}
			}
			return counts, append(empty, last), err
		}
	}
	deadline := clock.Now().Add(wait)
	counts, err = Counted(ctx, counter, spec, draining)
	for err == nil && (len(topology.Holding(spec.Name, draining, counts)) > 0 || !Settled(clock.Now(), switched)) &&
		clock.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		case <-clock.After(min(poll, deadline.Sub(clock.Now()))):
			counts, err = Counted(ctx, counter, spec, draining)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	candidates := CalledEmpty(draining, messagesOf(spec, draining, counts), Settled(clock.Now(), switched))
	held, err := exactCount(ctx, counter, spec, candidates)
	if err != nil {
		return nil, nil, err
	}
	maps.Copy(counts, held)
	for _, g := range candidates {
		if g.Messages(spec.Name, held) == 0 {
			empty = append(empty, g)
		}
	}
	return counts, empty, nil
}

// exactlyEmpty tells whether generation g holds no message by an exact
// count that waits no longer than wait for statistics
// (Counter.ExactMessages): false where it holds one, or where the broker
// could not count it so (then Empty waits for the statistics to settle, as
// for any count).
func exactlyEmpty(ctx context.Context, counter Counter, spec topology.Spec, g topology.Generation, wait time.Duration) (bool, error) {
	counts, err := counter.ExactMessages(ctx, spec.VHost, g.Queues(spec.Name), wait)
	switch {
	case broker.IsUncounted(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return g.Messages(spec.Name, counts) == 0, nil
}
