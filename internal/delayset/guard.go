package delayset

import (
	"context"
	"fmt"
	"strings"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The guard: the one place that decides whether a queue of a set may be
// deleted. A queue may go only when an exact count (HeldMessages) finds it
// empty; a count above zero, or a queue the broker cannot count, holds
// messages. Every decision to delete asks it: an apply before its changes
// (guardedApply), the emptiness of a draining generation (Empty, Keep,
// Refreshed), the drifted queues a refresh notes. The broker client asks
// once more at the instant of each deletion (broker.Client.Apply), for
// messages that arrive in between: that is the guard's last word, and it
// lives there because only the client holds the deletion's lock.

// exactCounts counts queues exactly for a decision to delete, with
// counter.HeldMessages. A queue the broker cannot count is in the counts as
// holding a message (broker.Uncounted), so that error is no failure here:
// its reasons come back for a refusal to name.
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

// HoldsMessagesError refuses a change that would delete queues holding
// messages; a refused change changes nothing.
type HoldsMessagesError struct {
	// Held says of each queue that holds messages how many, or why it
	// could not be counted.
	Held []string
	// RedeclaredIn is the library layout of a set whose change declares
	// some of those queues again, or "": such a layout's queues have the
	// library's names, so unlike the default layout's they cannot drain in
	// an older generation beside new ones.
	RedeclaredIn topology.Layout
}

func (e *HoldsMessagesError) Error() string {
	message := fmt.Sprintf("refusing to delete queues that hold messages: %s. Wait until they drain, or set "+
		"force_destroy = true to delete them with their messages", strings.Join(e.Held, "; "))
	if e.RedeclaredIn != "" {
		message += fmt.Sprintf(". In the %s layout the queues have the library's names, so a change of their "+
			"arguments (queue_type, or drift to repair) cannot start a new generation beside them to drain into: "+
			"each queue is deleted and declared again, which is done only to an empty one", e.RedeclaredIn)
	}
	return message
}

// guardedApply runs changes after refusing, with every queue that holds
// messages named, any deletion of such a queue unless force is set, so
// that a refused change changes nothing.
func (s Sets) guardedApply(ctx context.Context, spec topology.Spec, changes []topology.Change, force bool) error {
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
		counts, uncounted, err := exactCounts(ctx, s.Broker, spec.VHost, doomed)
		if err != nil {
			return err
		}
		refused := &HoldsMessagesError{}
		for _, queue := range doomed {
			if !holdsMessages(queue, counts, uncounted) {
				continue
			}
			if why, ok := uncounted[queue]; ok {
				refused.Held = append(refused.Held, why.Error())
				continue
			}
			refused.Held = append(refused.Held, fmt.Sprintf("%s holds %d message(s)", queue, counts[queue]))
			if redeclared[queue] && spec.Layout.DeclaredByLibrary() {
				refused.RedeclaredIn = spec.Layout
			}
		}
		if len(refused.Held) > 0 {
			return refused
		}
	}
	return s.Broker.Apply(ctx, spec.VHost, changes, broker.ApplyOptions{ForceDeleteQueues: force})
}
