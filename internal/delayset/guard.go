package delayset

import (
	"context"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The guard: the one place that decides whether a queue of a set may be
// deleted. A queue may go only when an exact count (HeldMessages) finds it
// empty; a count above zero, or a queue the broker cannot count, holds
// messages. Every decision to delete asks it; the broker client asks once
// more at the instant of each deletion, as only it holds the deletion's lock.

// exactCounts counts queues exactly for a decision to delete. A queue the
// broker cannot count is in the counts as holding a message, so that error
// is no failure here: its reasons come back for a refusal to name.
func exactCounts(ctx context.Context, counter Counter, vhost string, queues []string) (map[string]int64, map[string]*broker.UncountedError, error) {
	if len(queues) == 0 {
		return nil, nil, nil
	}
	counts, err := counter.HeldMessages(ctx, vhost, queues)
	if broker.IsUncounted(err) {
		return counts, broker.Uncounted(err), nil
	}
	return counts, nil, err
}

// holdsMessages is the guard's rule for one queue.
func holdsMessages(queue string, counts map[string]int64, uncounted map[string]*broker.UncountedError) bool {
	_, unknown := uncounted[queue]
	return unknown || counts[queue] > 0
}

// applier is what the guard needs of a broker: a set's and a delayed
// exchange's alike.
type applier interface {
	Counter
	Apply(ctx context.Context, vhost string, changes []topology.Change, opts broker.ApplyOptions) error
}

// guardedApply runs changes in vhost after refusing, with every queue that
// holds messages named, any deletion of such a queue unless force is set,
// so that a refused change changes nothing. layout is the set's, whose
// library names say why a redeclared queue is refused ("" for none).
func guardedApply(ctx context.Context, b applier, vhost string, layout topology.Layout, changes []topology.Change, force bool) error {
	var doomed []string
	redeclared := map[string]bool{}
	for _, change := range changes {
		switch change.Kind {
		case topology.DeleteQueue:
			doomed = append(doomed, change.Queue.Name)
		case topology.CreateQueue:
			redeclared[change.Queue.Name] = true
		}
	}
	if len(doomed) > 0 && !force {
		counts, uncounted, err := exactCounts(ctx, b, vhost, doomed)
		if err != nil {
			return err
		}
		refused := &HoldsMessagesError{}
		for _, queue := range doomed {
			if !holdsMessages(queue, counts, uncounted) {
				continue
			}
			refused.Held = append(refused.Held, HeldQueue{Queue: queue, Messages: counts[queue], Uncounted: uncounted[queue]})
			if _, unknown := uncounted[queue]; !unknown && redeclared[queue] && layout.DeclaredByLibrary() {
				refused.RedeclaredIn = layout
			}
		}
		if len(refused.Held) > 0 {
			return refused
		}
	}
	return b.Apply(ctx, vhost, changes, broker.ApplyOptions{ForceDeleteQueues: force})
}
