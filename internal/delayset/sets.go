package delayset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Broker is what a set needs of the broker; *broker.Client is one.
type Broker interface {
	Counter
	ReadSetOf(ctx context.Context, vhost, name string, layout topology.Layout) (topology.Topology, error)
	ReadSetOfAnyLayout(ctx context.Context, vhost, name string) (topology.Topology, error)
	ReadSetNamed(ctx context.Context, vhost, name string, layout topology.Layout, known topology.Topology, opts broker.ReadOptions) (topology.Topology, error)
	Apply(ctx context.Context, vhost string, changes []topology.Change, opts broker.ApplyOptions) error
	ReadPlacements(ctx context.Context, vhost string, queues []string) (map[string]broker.Placement, error)
	Placements(vhost string, queues []string) map[string]broker.Placement
}

var _ Broker = (*broker.Client)(nil)

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

// Remembered is what the state remembers of a set between runs.
type Remembered struct {
	// Spec is the set's resolved spec, its current generation's. Its name,
	// vhost and layout are always set; the rest only when Unresolved is
	// false.
	Spec topology.Spec
	// Unresolved says that Spec could not be resolved (a state written by
	// a provider that planned it otherwise): its set is then read by
	// listing rather than by the names its plan would give.
	Unresolved bool
	// Draining is the generations that drain, oldest first.
	Draining []topology.Generation
	// Shown is the objects the last refresh or apply showed; it may be
	// empty. Its queues' types keep the parking lot's (see desired).
	Shown topology.Topology
	// SwitchedAt is when the last generation switch happened, zero when
	// none is noted: until broker.StatisticsLag has passed since, the
	// statistics of the generation switched from may count nothing while
	// it holds messages (Settled).
	SwitchedAt time.Time
	// DriftedHolding is the TTL queues of the current generation whose
	// arguments drifted and that hold messages, as a refresh found them:
	// the next plan repairs them through a new generation.
	DriftedHolding []string
}

// Warning is something a user should hear of that failed nothing.
type Warning struct{ Summary, Detail string }

// Result is what the state should remember after a step, and what
// happened.
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

// Stage is how far a step got when it failed.
type Stage int

const (
	// Reading: nothing was changed.
	Reading Stage = iota
	// Applying: part of the change may have been made.
	Applying
	// Draining: the change is made; the draining generations were being
	// waited for or deleted.
	Draining
)

// StageError is a failure of a step, with how far the step got.
type StageError struct {
	Stage Stage
	Err   error
}

func (e *StageError) Error() string { return e.Err.Error() }
func (e *StageError) Unwrap() error { return e.Err }

func failed(stage Stage, err error) error {
	if err == nil {
		return nil
	}
	return &StageError{Stage: stage, Err: err}
}

// ExistsError refuses to create a set whose objects exist already.
type ExistsError struct {
	// Found is the objects of the set the broker holds.
	Found topology.Topology
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%d exchanges and %d queues of the set exist already", len(e.Found.Exchanges), len(e.Found.Queues))
}

// desired is what the set of spec is to hold, the one way every step works
// it out: spec's generation and the draining ones, with the parking lot of
// the queue type it has in seen, since declaring it again would drop the
// messages it parks (topology.KeepParkingLot). seen is what the broker
// holds, or, for a plan, which reads no broker, what the last read showed;
// nothing for a new set.
func desired(spec topology.Spec, draining []topology.Generation, seen topology.Topology) (topology.Topology, error) {
	planned, err := topology.PlanGenerations(spec, draining)
	if err != nil {
		return topology.Topology{}, err
	}
	return topology.KeepParkingLot(spec.Name, planned, topology.ParkingLotType(spec.Name, seen)), nil
}

// Desired is desired for a plan: what the set of spec with the draining
// generations is to hold, the parking lot as seen shows it.
func Desired(spec topology.Spec, draining []topology.Generation, seen topology.Topology) (topology.Topology, error) {
	return desired(spec, draining, seen)
}

// known is the planned topology of a remembered set's current and draining
// generations, or false when it cannot be planned.
func known(prior Remembered) (topology.Topology, bool) {
	if prior.Unresolved {
		return topology.Topology{}, false
	}
	set, err := desired(prior.Spec, prior.Draining, prior.Shown)
	return set, err == nil
}

// readKnown reads a remembered set whose objects it knows: those of its
// current and draining generations, by name (broker.Client.ReadSetNamed),
// so that a refresh costs the broker the same however many other objects
// the vhost holds. A set that cannot be planned is read by the
// name-filtered listing instead. opts.ShareBindings is for a refresh, whose
// reads of many sets share listings of their bindings.
func (s Sets) readKnown(ctx context.Context, prior Remembered, opts broker.ReadOptions) (topology.Topology, error) {
	spec := prior.Spec
	if set, ok := known(prior); ok {
		return s.Broker.ReadSetNamed(ctx, spec.VHost, spec.Name, spec.Layout, set, opts)
	}
	return s.Broker.ReadSetOf(ctx, spec.VHost, spec.Name, spec.Layout)
}

// plansAllOf tells whether planned holds every exchange, queue and binding
// shown holds.
func plansAllOf(planned, shown topology.Topology) bool {
	names := map[string]bool{}
	for _, x := range planned.Exchanges {
		names["exchange "+x.Name] = true
	}
	for _, q := range planned.Queues {
		names["queue "+q.Name] = true
	}
	for _, b := range planned.Bindings {
		names[b.String()] = true
	}
	for _, x := range shown.Exchanges {
		if !names["exchange "+x.Name] {
			return false
		}
	}
	for _, q := range shown.Queues {
		if !names["queue "+q.Name] {
			return false
		}
	}
	for _, b := range shown.Bindings {
		if !names[b.String()] {
			return false
		}
	}
	return true
}

// Create declares the set of spec, a resolved spec, refusing (ExistsError)
// when objects of it exist already. After a failure part-way the result
// still tells the set, so that no object the broker made is forgotten.
func (s Sets) Create(ctx context.Context, spec topology.Spec) (Result, error) {
	set, err := desired(spec, nil, topology.Topology{})
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	actual, err := s.Broker.ReadSetNamed(ctx, spec.VHost, spec.Name, spec.Layout, set, broker.ReadOptions{})
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	if len(actual.Exchanges)+len(actual.Queues) > 0 {
		return Result{}, &ExistsError{Found: actual}
	}
	result := Result{Remembered: Remembered{Spec: spec, Shown: set}, Set: set}
	if err := s.guardedApply(ctx, spec, topology.Diff(set, actual), false); err != nil {
		return result, failed(Applying, err)
	}
	s.readPlacements(ctx, spec, set, &result)
	return result, nil
}

// readPlacements reads where the queues of set run after a change.
func (s Sets) readPlacements(ctx context.Context, spec topology.Spec, set topology.Topology, result *Result) {
	result.Placements, result.PlacementError = s.Broker.ReadPlacements(ctx, spec.VHost, set.QueueNames())
}

// Update makes the broker's set that of spec, a resolved spec whose
// generation the plan chose: it keeps the generations that drain (Keep),
// applies the change, waits up to opts.Wait for the draining generations
// to empty (Empty) and deletes those that did.
func (s Sets) Update(ctx context.Context, spec topology.Spec, prior Remembered, opts UpdateOptions) (Result, error) {
	// Every object named like the set, so that no generation the state
	// has lost track of escapes the update.
	actual, err := s.Broker.ReadSetOf(ctx, spec.VHost, spec.Name, spec.Layout)
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	draining, err := s.keepDraining(ctx, spec, actual, prior)
	changed := false
	if err == nil {
		changed, err = s.applyGenerations(ctx, spec, draining, actual, opts.Force)
	}
	if err != nil {
		return Result{}, failed(Applying, err)
	}
	switched := prior.SwitchedAt
	if changed && len(draining) > 0 {
		// Taken for a switch, which it is unless only routes or drift
		// changed beside a draining generation, or finishes one an apply
		// cut off began: either way the last generation to drain may have
		// taken messages until now.
		switched = s.clock().Now()
	}
	still, counts, warnings, err := s.deleteEmptied(ctx, spec, draining, opts.Wait, switched)
	if err != nil {
		return Result{}, failed(Draining, err)
	}
	result := Result{
		Remembered: Remembered{Spec: spec, Draining: still, SwitchedAt: switched}, // drift repaired: the next refresh looks again
		Counts:     counts,
		Warnings:   warnings,
	}
	// applyGenerations has planned the same without error: a failure here
	// is only no placement to show.
	if after, planErr := topology.PlanGenerations(spec, still); planErr != nil {
		result.PlacementError = planErr
	} else {
		result.Set, result.Shown = after, after
		s.readPlacements(ctx, spec, after, &result)
	}
	return result, nil
}

// keepDraining lists the generations of actual other than spec's that the
// update keeps (Keep). The broker says which they are; when its objects
// explain no set (a queue of the current generation drifted), what the
// state remembers does.
func (s Sets) keepDraining(ctx context.Context, spec topology.Spec, actual topology.Topology, prior Remembered) ([]topology.Generation, error) {
	current, draining, err := topology.InferGenerations(spec.Name, actual)
	if err != nil {
		if prior.Unresolved || prior.Spec.Name == "" {
			return nil, nil // no prior set to keep anything of: Diff makes the set
		}
		current, draining = prior.Spec, prior.Draining
	}
	return Keep(ctx, s.Broker, spec, current, draining)
}

// applyGenerations makes actual the set of spec with the draining
// generations kept, and tells whether it changed anything.
func (s Sets) applyGenerations(ctx context.Context, spec topology.Spec, draining []topology.Generation, actual topology.Topology, force bool) (bool, error) {
	set, err := desired(spec, draining, actual)
	if err != nil {
		return false, err
	}
	set = topology.KeepDrainingQueues(spec.Name, set, actual, draining)
	// The delivery bindings a library made for itself are its own: deleting
	// one would drop the delayed messages on their way to its destination.
	set = topology.KeepLibraryBindings(spec, set, actual)
	changes := topology.Diff(set, actual)
	return len(changes) > 0, s.guardedApply(ctx, spec, changes, force)
}

// deleteEmptied waits up to wait for the draining generations to empty
// (Empty; switched is when the last one stopped taking messages), deletes
// those that did, and returns the generations that still drain and the
// messages their queues hold. A message that reaches a generation between
// the count and the deletion keeps it, with a warning: it drains on, and a
// later apply deletes it.
func (s Sets) deleteEmptied(ctx context.Context, spec topology.Spec, draining []topology.Generation, wait time.Duration, switched time.Time) (
	still []topology.Generation, counts map[string]int64, warnings []Warning, err error,
) {
	counts, empty, err := Empty(ctx, s.Broker, s.clock(), spec, draining, wait, switched)
	if err != nil || len(empty) == 0 {
		return draining, counts, nil, err
	}
	still = slices.DeleteFunc(slices.Clone(draining), func(g topology.Generation) bool { return slices.Contains(empty, g) })
	actual, err := s.Broker.ReadSetOf(ctx, spec.VHost, spec.Name, spec.Layout)
	if err == nil {
		_, err = s.applyGenerations(ctx, spec, still, actual, false)
	}
	var refused *HoldsMessagesError
	var notEmpty *broker.QueueNotEmptyError
	var uncounted *broker.UncountedError
	if errors.As(err, &refused) || errors.As(err, &notEmpty) || errors.As(err, &uncounted) {
		warnings = append(warnings, Warning{"A Generation Still Drains", fmt.Sprintf("A generation the counts found empty took a message "+
			"before it was deleted, so it was kept: it drains on, and the next apply that finds it empty deletes it. "+
			"Nothing needs doing; its messages leave on time. The broker said: %v", err)})
		still, err = draining, nil
	}
	if err != nil {
		return nil, nil, warnings, err
	}
	counts, err = Refreshed(ctx, s.Broker, spec, still, Settled(s.clock().Now(), switched))
	return still, counts, warnings, err
}

// Refresh reads the set prior remembers and tells what the state should
// remember of it now; found is false when the set is gone (its vhost, or
// every object of it).
func (s Sets) Refresh(ctx context.Context, prior Remembered) (Result, bool, error) {
	actual, err := s.readKnown(ctx, prior, broker.ReadOptions{ShareBindings: true})
	if found, err := setFound(actual, err); !found {
		return Result{}, false, err
	}
	result, err := s.refreshed(ctx, prior, actual)
	return result, err == nil, err
}

// Import reads the set of name in vhost, of layout or, when it is "", of
// the layout its objects tell, and infers its spec from its objects; found
// is false when no object of it exists. Objects that explain no set fail
// with an ImportError.
func (s Sets) Import(ctx context.Context, vhost, name string, layout topology.Layout) (Result, bool, error) {
	var actual topology.Topology
	var err error
	if layout == "" {
		actual, err = s.Broker.ReadSetOfAnyLayout(ctx, vhost, name)
	} else {
		actual, err = s.Broker.ReadSetOf(ctx, vhost, name, layout)
	}
	if found, err := setFound(actual, err); !found {
		return Result{}, false, err
	}
	if layout == "" {
		told, err := topology.Infer(name, actual)
		if err != nil {
			return Result{}, false, &ImportError{Err: err, LayoutsMixed: true}
		}
		layout = told.Layout.OrDefault()
		if actual, err = s.Broker.ReadSetOf(ctx, vhost, name, layout); err != nil {
			return Result{}, false, failed(Reading, err)
		}
	}
	inferred, _, err := topology.InferLayout(name, layout, actual)
	if err != nil {
		return Result{}, false, &ImportError{Err: err}
	}
	inferred.Name, inferred.VHost, inferred.Layout = name, vhost, layout.OrDefault()
	inferred.MaxDelay = 0 // the levels tell it
	spec, err := topology.Resolve(inferred)
	if err != nil {
		return Result{}, false, &ImportError{Err: err}
	}
	result, err := s.refreshed(ctx, Remembered{Spec: spec}, actual)
	return result, err == nil, err
}

// ImportError is an import of objects that explain no set.
type ImportError struct {
	Err error
	// LayoutsMixed: the objects of no one layout could be told apart (the
	// import may name the layout).
	LayoutsMixed bool
}

func (e *ImportError) Error() string { return e.Err.Error() }
func (e *ImportError) Unwrap() error { return e.Err }

// setFound judges the first read of a set: a vhost that is gone, or no
// object of the set left, means the set is gone; any other error fails.
func setFound(actual topology.Topology, err error) (bool, error) {
	switch {
	case errors.Is(err, broker.ErrVHostNotFound):
		return false, nil
	case err != nil:
		return false, failed(Reading, err)
	}
	return len(actual.Exchanges)+len(actual.Queues) > 0, nil
}

// refreshed is what the state should remember of prior's set, given
// actual, the broker's objects of it: the generation the broker holds
// (followBroker), the draining generations with their messages
// (Refreshed), the objects in the plan's order, where the queues are, and
// the drifted queues that hold messages.
func (s Sets) refreshed(ctx context.Context, prior Remembered, actual topology.Topology) (Result, error) {
	spec, set, draining, err := followBroker(prior, actual)
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	counts, err := Refreshed(ctx, s.Broker, spec, draining, Settled(s.clock().Now(), prior.SwitchedAt))
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	drifted, err := s.driftedHolding(ctx, spec, set, actual)
	if err != nil {
		return Result{}, failed(Reading, err)
	}
	// Listed in the plan's order so that an unchanged set reads back exactly
	// as planned; the draining generations show in Draining instead. The
	// delivery bindings a library made for itself do not show at all: the set
	// leaves them to the library, so they are never drift.
	current := topology.Align(topology.WithoutLibraryBindings(spec, set, topology.CurrentObjects(spec, actual)), set)
	return Result{
		Remembered: Remembered{Spec: spec, Draining: draining, Shown: current, SwitchedAt: prior.SwitchedAt, DriftedHolding: drifted},
		Set:        current,
		Counts:     counts,
		Placements: s.Broker.Placements(spec.VHost, actual.QueueNames()),
	}, nil
}

// followBroker plans prior's set against actual, the broker's objects of
// it: its spec, what it is to hold, and the generations that drain, as the
// broker tells them. When the broker holds a generation prior does not
// know (an apply was cut off in the middle of a change), the set follows it
// (topology.FollowBroker), so the next plan starts from it. When the
// objects explain no set, that is drift, which the next plan shows: prior's
// generations stand, the draining ones too.
func followBroker(prior Remembered, actual topology.Topology) (topology.Spec, topology.Topology, []topology.Generation, error) {
	spec := prior.Spec
	set, err := desired(spec, nil, actual)
	if err != nil {
		return spec, set, nil, err
	}
	inferred, draining, explained := inferredLayout(spec, actual)
	if !explained {
		return spec, set, prior.Draining, nil
	}
	followed := topology.FollowBroker(spec, inferred)
	if followed.Generation == spec.Generation && followed.FormatGeneration == spec.FormatGeneration {
		return spec, set, draining, nil
	}
	followed.MaxDelay = 0 // the levels tell it
	if spec, err = topology.Resolve(followed); err != nil {
		return spec, set, draining, err
	}
	set, err = desired(spec, nil, actual)
	return spec, set, draining, err
}

// inferredLayout is the spec and draining generations actual's objects
// explain, if they explain a set of spec's layout (no error: drift is for
// the next plan to show).
func inferredLayout(spec topology.Spec, actual topology.Topology) (topology.Spec, []topology.Generation, bool) {
	inferred, draining, err := topology.InferLayout(spec.Name, spec.Layout, actual)
	return inferred, draining, err == nil
}

// driftedHolding lists the TTL queues of spec's generation whose arguments
// drifted from set (topology.DriftedQueues) and that hold messages by the
// guard. It asks the broker only about drifted queues.
func (s Sets) driftedHolding(ctx context.Context, spec topology.Spec, set, actual topology.Topology) ([]string, error) {
	drifted := topology.DriftedQueues(spec, set, actual)
	counts, uncounted, err := exactCounts(ctx, s.Broker, spec.VHost, drifted)
	if err != nil {
		return nil, err
	}
	var holding []string
	for _, queue := range drifted {
		if holdsMessages(queue, counts, uncounted) {
			holding = append(holding, queue)
		}
	}
	return holding, nil
}

// Destroy deletes the set prior remembers: the objects its plan names, by
// name, without reading them first (a delete of what is gone succeeds, and
// the guard checks each queue either way). A set whose last refresh showed
// more than its plan (a stray level, a drifted binding) or that plans no
// set is read, so that none of that is left behind or, holding messages,
// stripped of the exchanges it dead-letters to. A vhost that is gone took
// the set with it.
func (s Sets) Destroy(ctx context.Context, prior Remembered, force bool) error {
	doomed, ok := known(prior)
	if !ok || !plansAllOf(doomed, prior.Shown) {
		var err error
		doomed, err = s.readKnown(ctx, prior, broker.ReadOptions{})
		if errors.Is(err, broker.ErrVHostNotFound) {
			return nil
		}
		if err != nil {
			return failed(Reading, err)
		}
	}
	// Teardown deletes no binding to an object outside the set on its own:
	// the delivery exchange's bindings, the routes' and a library's, stay
	// while the queues are checked and deleted, so a message leaving level 0
	// meanwhile still reaches its destination, and go with the exchange.
	err := s.guardedApply(ctx, prior.Spec, topology.Teardown(doomed), force)
	if errors.Is(err, broker.ErrVHostNotFound) {
		return nil
	}
	return failed(Applying, err)
}
