package delayset

import (
	"context"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Counter counts the messages of named queues of a vhost; a queue that holds
// none may be absent from the maps, and so is one that does not exist.
type Counter interface {
	// CountedMessages counts by the management statistics alone, which
	// disturb no queue, and lag (broker.Client.CountedMessages).
	CountedMessages(ctx context.Context, vhost string, queues []string) (map[string]int64, error)
	// HeldMessages counts exactly enough to tell an empty queue
	// (broker.Client.HeldMessages).
	HeldMessages(ctx context.Context, vhost string, queues []string) (map[string]int64, error)
	// ExactMessages is HeldMessages waiting no longer than wait for
	// statistics: a queue it could not count exactly within it is
	// uncounted (broker.Client.ExactMessages).
	ExactMessages(ctx context.Context, vhost string, queues []string, wait time.Duration) (map[string]int64, error)
}

// Broker is what a set needs of the broker; *broker.Client is one.
type Broker interface {
	Counter
	ReadSetOf(ctx context.Context, vhost, name string, layout topology.Layout) (topology.Topology, error)
	ReadSetOfAnyLayout(ctx context.Context, vhost, name string) (topology.Topology, error)
	ReadSetNamed(ctx context.Context, vhost, name string, layout topology.Layout, known topology.Topology, opts broker.ReadOptions) (topology.Topology, error)
	Apply(ctx context.Context, vhost string, changes []topology.Change, opts broker.ApplyOptions) error
	ReadPlacements(ctx context.Context, vhost string, queues []string) (map[string]broker.Placement, error)
	Placements(vhost string, queues []string) map[string]broker.Placement
	DeclaredMarks(vhost string, queues []string) map[string]broker.LogMark
	RememberDeclared(vhost string, marks map[string]broker.LogMark)
}

var (
	_ Counter = (*broker.Client)(nil)
	_ Broker  = (*broker.Client)(nil)
)

// Clock tells the time and waits.
type Clock interface {
	Now() time.Time
	// After sends the time on the channel once d has passed, like
	// time.After.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the machine's clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time                         { return time.Now() }
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sets does what a delay queue set does over time on a broker: it creates,
// updates, refreshes, imports and destroys sets, never deleting a queue
// that holds messages unless told to (see the guard).
type Sets struct {
	Broker Broker
	// Clock tells the time and waits; nil is the machine's clock.
	Clock Clock
}

func (s Sets) clock() Clock {
	if s.Clock == nil {
		return SystemClock{}
	}
	return s.Clock
}

// Remembered is what is kept of a set between runs.
type Remembered struct {
	// Spec is the set's resolved spec, its current generation's. Its name,
	// vhost and layout are always set; the rest only when Unresolved is
	// false. A Remembered without a name is no set.
	Spec topology.Spec
	// Unresolved says that Spec could not be resolved (written by a
	// provider that planned it otherwise): its set is then read by listing
	// rather than by the names its plan would give.
	Unresolved bool
	// Draining is the generations that drain, oldest first, and
	// DrainingMessages what each held at the last look ([i] for
	// Draining[i]; nil when not known).
	Draining         []topology.Generation
	DrainingMessages []int64
	// Shown is the objects the last refresh or apply showed; it may be
	// empty. Its queues' types keep the parking lot's (see desired).
	// ShownMore says that more was shown than Shown holds (a line that
	// names no object), so the set is read before it is destroyed.
	Shown     topology.Topology
	ShownMore bool
	// SwitchedAt is when the last generation switch happened, zero when
	// none is noted (see Settled).
	SwitchedAt time.Time
	// DriftedHolding is the TTL queues of the current generation whose
	// arguments drifted and that hold messages, as a refresh found them:
	// the next plan repairs them through a new generation.
	DriftedHolding []string
	// Declared is where the logs of the set's quorum queues ended right
	// after the declarations that created them (broker.LogMark), for the
	// counts before a deletion.
	Declared map[string]broker.LogMark
}

// exists tells whether r is a set that a plan or an update starts from.
func (r Remembered) exists() bool { return !r.Unresolved && r.Spec.Name != "" }

// Result is what is to be kept after a step, and what happened.
type Result struct {
	Remembered
	// Set is the current generation's objects, in the plan's order.
	Set topology.Topology
	// Counts is the messages each queue of the draining generations holds.
	Counts map[string]int64
	// Placements is where the set's queues run. PlacementError, when not
	// nil, is why a read of them after a change failed: the change is
	// made, and the next refresh reads them.
	Placements     map[string]broker.Placement
	PlacementError error
	Warnings       []Warning
}

// UpdateOptions are an update's: how long it waits for the draining
// generations to empty, and whether it deletes queues that hold messages.
type UpdateOptions struct {
	Wait  time.Duration
	Force bool
}

// Reason is what a Warning is about.
type Reason int

const (
	// DriftRepaired: Queues of the current generation drifted and hold
	// messages, so the plan starts Generation beside them to drain them.
	DriftRepaired Reason = iota
	// GenerationEmpty: draining Generation counted no message at the last
	// look, so the apply deletes its Queues if an exact check agrees.
	GenerationEmpty
	// GenerationStillDrains: a generation found empty took a message
	// before its deletion (Err says how), so it was kept.
	GenerationStillDrains
	// RoutesStayBound: the plan drops Bindings of a library layout's
	// delivery exchange that the library shares, so the apply leaves them.
	RoutesStayBound
)

// Warning is something to tell that failed nothing: a Reason and the
// values it concerns.
type Warning struct {
	Reason     Reason
	Generation int
	Queues     []string
	Bindings   []topology.Binding
	Err        error
}

// messagesOf is the messages each draining generation holds by counts.
func messagesOf(spec topology.Spec, draining []topology.Generation, counts map[string]int64) []int64 {
	messages := make([]int64, len(draining))
	for i, g := range draining {
		messages[i] = g.Messages(spec.Name, counts)
	}
	return messages
}
