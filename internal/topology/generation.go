package topology

import (
	"fmt"
	"slices"
	"time"
)

// Generations. The broker fixes a queue's arguments when it declares it, so
// a change of queue type, strategy, radix or resolution declares a new chain
// of TTL queues and done exchanges beside the old one, which drains through
// its own bindings and is deleted once empty. A new key format brings its
// own ingest and out exchanges, because topic bindings cannot tell one
// format's keys from another's (DESIGN.md, "Generations and key formats").

// Generation is one chain of a set's TTL queues and done exchanges, with
// the key format and queue kind it was declared with.
type Generation struct {
	Number int
	// Format is the generation whose ingest and out exchanges this chain
	// uses: the first of its key format.
	Format             int
	Levels             int
	Radix              int
	Resolution         time.Duration
	QueueType          QueueType
	DeadLetterStrategy DeadLetterStrategy
	QueueLeaderLocator LeaderLocator
	// QuorumInitialGroupSize is its queues' x-quorum-initial-group-size, 0
	// for none.
	QuorumInitialGroupSize int
}

// CurrentGeneration is the generation that a resolved spec describes.
func (s Spec) CurrentGeneration() Generation {
	return Generation{
		Number: s.Generation, Format: s.FormatGeneration, Levels: s.Levels, Radix: s.Radix, Resolution: s.Resolution,
		QueueType: s.QueueType, DeadLetterStrategy: s.DeadLetterStrategy, QueueLeaderLocator: s.QueueLeaderLocator,
		QuorumInitialGroupSize: s.QuorumInitialGroupSize,
	}
}

// KeyFormat is the format of the keys the generation reads.
func (g Generation) KeyFormat() KeyFormat {
	return KeyFormat{Levels: g.Levels, Radix: g.Radix, Resolution: g.Resolution}
}

// sameQueues tells whether two generations' queues are declared alike,
// apart from how many levels they have.
func (g Generation) sameQueues(other Generation) bool {
	return g.Radix == other.Radix && g.Resolution == other.Resolution &&
		g.QueueType == other.QueueType && g.DeadLetterStrategy == other.DeadLetterStrategy &&
		g.QueueLeaderLocator == other.QueueLeaderLocator && g.QuorumInitialGroupSize == other.QuorumInitialGroupSize
}

// NextGeneration numbers desired, a spec for the set whose current
// generation actual describes (resolved, with its generation numbers) and
// whose older generations are draining. Desired keeps actual's generation
// when its queues are declared alike: levels and routes change in place, as
// they always have. Otherwise it is the next number after every generation
// that exists, with actual's ingest and out exchanges when the key format
// stays the same, and its own otherwise.
//
// A change of layout is no generation: the objects of one layout are not
// the other's, so the set must be replaced; it is refused. A library's
// layout has no generations: its changes replace the objects that differ.
func NextGeneration(desired, actual Spec, draining []Generation) (Spec, error) {
	desired, err := Resolve(desired)
	if err != nil {
		return Spec{}, err
	}
	if from, to := actual.Layout.OrDefault(), desired.Layout.OrDefault(); from != to {
		return Spec{}, &FieldError{Field: "layout", Route: -1, Message: fmt.Sprintf(
			"cannot change from %q to %q in place: the layouts' objects have other names, so the set must be replaced", from, to)}
	}
	// A library's objects have the names it gives them: a change replaces
	// what differs, since no new chain can be declared beside them.
	if layout, _ := layoutNamed(desired.Layout); layout.declaredByLibrary() {
		return desired, nil
	}
	want, have := desired.CurrentGeneration(), actual.CurrentGeneration()
	sharesExchanges := false // with a draining generation, which must keep its key format
	for _, g := range draining {
		sharesExchanges = sharesExchanges || g.Format == have.Format
	}
	if want.sameQueues(have) && (want.KeyFormat() == have.KeyFormat() || !sharesExchanges) {
		desired.Generation, desired.FormatGeneration = have.Number, have.Format
		return desired, nil
	}
	return NewGeneration(desired, actual, draining)
}

// PlanGenerations is [Plan] of s followed by the objects that keep each
// draining generation working until it is empty: its TTL queues and done
// exchanges with their bindings and, when its key format is not s's, the
// ingest and out exchanges of its format, with the ingest's bindings to the
// newest generation of that format and out's bindings to s's routes.
// draining must be in ascending order of their numbers, all below s's.
func PlanGenerations(s Spec, draining []Generation) (Topology, error) {
	top, err := Plan(s)
	if err != nil {
		return Topology{}, err
	}
	s, _ = Resolve(s) // Plan has resolved it without error
	names := Names(s.Name)
	resolved := make([]Generation, len(draining))
	newestOfFormat := map[int]int{} // format → its newest draining generation
	formatOf := map[int]KeyFormat{}
	for i, g := range draining {
		if resolved[i], err = resolveDraining(s, g); err != nil {
			return Topology{}, err
		}
		if i > 0 && g.Number <= draining[i-1].Number {
			return Topology{}, fmt.Errorf("draining generations of set %q are not in ascending order: %d after %d", s.Name, g.Number, draining[i-1].Number)
		}
		if g.Format != s.FormatGeneration {
			if newest, seen := newestOfFormat[g.Format]; seen && resolved[i].KeyFormat() != formatOf[newest] {
				return Topology{}, fmt.Errorf("draining generations %d and %d of set %q share exchanges but not their key format", newest, g.Number, s.Name)
			}
			newestOfFormat[g.Format] = g.Number
			formatOf[g.Number] = resolved[i].KeyFormat()
		}
	}
	alternate := ExchangeArguments{AlternateExchange: names.Unroutable()}
	for _, g := range resolved {
		l := radixChain{names: names, radix: g.Radix, levels: g.Levels}
		objects := newPlanNames(l, g.Number, g.Format)
		if newestOfFormat[g.Format] == g.Number && g.Format != s.FormatGeneration {
			top.Exchanges = append(top.Exchanges,
				Exchange{Name: objects.ingest, Type: ExchangeTopic, Arguments: alternate},
				Exchange{Name: objects.out, Type: ExchangeTopic, Arguments: alternate})
			top.Bindings = l.appendDelayBindings(top.Bindings, objects.queues, objects.out, objects.ingest, g.Levels)
			top.Bindings = appendRouteBindings(top.Bindings, objects.out, s.Routes, g.Levels)
		}
		for _, done := range objects.done {
			top.Exchanges = append(top.Exchanges, Exchange{Name: done, Type: ExchangeTopic, Arguments: alternate})
		}
		top.Queues = append(top.Queues, chainQueues(l, objects, g)...)
		for k, done := range objects.done {
			top.Bindings = l.appendDelayBindings(top.Bindings, objects.queues, objects.out, done, k)
		}
	}
	return top, nil
}

// resolveDraining resolves a draining generation of s: older than s's,
// with a valid layout and queue kind, names that fit, and the key format of
// every generation that shares its exchanges.
func resolveDraining(s Spec, g Generation) (Generation, error) {
	var problem string
	switch {
	case g.Number < 0 || g.Number >= s.Generation:
		problem = fmt.Sprintf("is not older than the current generation %d", s.Generation)
	case g.Format < 0 || g.Format > g.Number:
		problem = fmt.Sprintf("has the exchanges of generation %d, not of one from 0 to its own number", g.Format)
	case g.Levels == 0:
		problem = "has no levels"
	default:
		resolved, err := Resolve(Spec{Name: s.Name, VHost: s.VHost, Levels: g.Levels, Radix: g.Radix, Resolution: g.Resolution,
			QueueType: g.QueueType, DeadLetterStrategy: g.DeadLetterStrategy, QueueLeaderLocator: g.QueueLeaderLocator,
			QuorumInitialGroupSize: g.QuorumInitialGroupSize, Generation: g.Number, FormatGeneration: g.Format})
		if err != nil {
			problem = "is invalid: " + err.Error()
			break
		}
		drained := resolved.CurrentGeneration()
		if g.Format == s.FormatGeneration && drained.KeyFormat() != s.CurrentGeneration().KeyFormat() {
			problem = fmt.Sprintf("shares the exchanges of generation %d but not its key format", s.Generation)
			break
		}
		return drained, nil
	}
	return Generation{}, fmt.Errorf("draining generation %d of set %q %s", g.Number, s.Name, problem)
}

// CurrentObjects is the part of actual that s's generation uses, and every
// object that belongs to no generation (the parking lot, bindings to routes):
// actual without the TTL queues and done exchanges of other generations, the
// ingest and out exchanges of other key formats, and the bindings from or to
// any of them. Those belong to draining generations, which a resource shows
// apart from its current objects.
func CurrentObjects(s Spec, actual Topology) Topology {
	names := Names(s.Name)
	other := func(name string) bool {
		switch o := names.parse(name); o.kind {
		case kindLevel, kindDone:
			return o.generation != s.Generation
		case kindIngest, kindOut:
			return o.generation != s.FormatGeneration
		}
		return false
	}
	current := Topology{VHost: actual.VHost}
	for _, e := range actual.Exchanges {
		if !other(e.Name) {
			current.Exchanges = append(current.Exchanges, e)
		}
	}
	for _, q := range actual.Queues {
		if !other(q.Name) {
			current.Queues = append(current.Queues, q)
		}
	}
	for _, b := range actual.Bindings {
		if !other(b.Source) && !other(b.Destination) {
			current.Bindings = append(current.Bindings, b)
		}
	}
	return current
}

// Queues are the names of the generation's TTL queues in set name, by
// level, then digit.
func (g Generation) Queues(name string) []string {
	chain := Names(name).Generation(g.Number)
	l := radixChain{radix: radixOrDefault(g.Radix), levels: g.Levels}
	stages := l.stages()
	queues := make([]string, len(stages))
	for i, st := range stages {
		queues[i] = chain.Queue(l.radix, st.level, st.digit)
	}
	return queues
}

// KeepParkingLot gives the parking lot of desired (the set's
// <name>.unroutable queue) the queue type it has in actual, when actual has
// one: the parking lot outlives changes of the set's queue type, since
// declaring it again would drop the messages it parks. A new set's parking
// lot takes the set's queue type.
func KeepParkingLot(name string, desired Topology, parkingLotType QueueType) Topology {
	if parkingLotType == "" {
		return desired
	}
	parkingLot := Names(name).Unroutable()
	desired.Queues = slices.Clone(desired.Queues)
	for i, q := range desired.Queues {
		if q.Name == parkingLot {
			desired.Queues[i].Arguments.QueueType = parkingLotType
		}
	}
	return desired
}

// ParkingLotType is the queue type of the parking lot in t, or "" when t
// has none.
func ParkingLotType(name string, t Topology) QueueType {
	for _, q := range t.Queues {
		if q.Name == Names(name).Unroutable() {
			if q.Arguments.QueueType == "" {
				return QueueTypeClassic
			}
			return q.Arguments.QueueType
		}
	}
	return ""
}

// Messages is how many messages g's queues in set name hold by held (queue
// name → messages; a queue absent from it holds none).
func (g Generation) Messages(name string, held map[string]int64) int64 {
	total := int64(0)
	for _, q := range g.Queues(name) {
		total += held[q]
	}
	return total
}

// FollowBroker is state, the spec a set was last applied with, moved to the
// generation the broker holds, current (as [InferGenerations] reads it).
// An apply cut off after it declared part of a new generation leaves the
// broker a generation newer than the state; the next change must start from
// that generation's queues and key format, not the state's, or it would
// start yet another generation beside a half-made one. Routes, name and
// vhost stay the state's: they are the configuration's to change.
func FollowBroker(state, current Spec) Spec {
	if current.Generation == state.Generation && current.FormatGeneration == state.FormatGeneration {
		return state
	}
	state.Levels, state.MaxDelay, state.Radix, state.Resolution = current.Levels, 0, current.Radix, current.Resolution
	state.QueueType, state.DeadLetterStrategy = current.QueueType, current.DeadLetterStrategy
	state.QueueLeaderLocator, state.QuorumInitialGroupSize = current.QueueLeaderLocator, current.QuorumInitialGroupSize
	state.Generation, state.FormatGeneration = current.Generation, current.FormatGeneration
	return state
}

// KeepDraining lists the generations an update to spec keeps beside spec's
// own, oldest first, given the broker's current generation and the older
// ones that drain (as [InferGenerations] reads them) and the messages their
// queues hold: each that holds a message, and the broker's current one when
// spec starts a new generation, since it drains from now on. spec is
// either the broker's current generation or newer than every one
// ([NextGeneration] on a state that [FollowBroker] has moved).
func KeepDraining(spec, current Spec, draining []Generation, held map[string]int64) []Generation {
	candidates := slices.Clone(draining)
	switching := current.Generation != spec.Generation
	if switching {
		candidates = append(candidates, current.CurrentGeneration())
	}
	var keep []Generation
	for i, g := range candidates {
		if g.Messages(spec.Name, held) > 0 || (switching && i == len(candidates)-1) {
			keep = append(keep, g)
		}
	}
	return keep
}

// Holding is the generations that hold a message by held, in their order.
func Holding(name string, generations []Generation, held map[string]int64) []Generation {
	var holding []Generation
	for _, g := range generations {
		if g.Messages(name, held) > 0 {
			holding = append(holding, g)
		}
	}
	return holding
}

// NewGeneration numbers desired as a new generation after actual's and
// every draining one, whatever desired changes: with actual's ingest and
// out exchanges when the key format stays, its own otherwise. A set
// repairs a drifted queue that holds messages this way ([DriftedQueues]).
func NewGeneration(desired, actual Spec, draining []Generation) (Spec, error) {
	desired, err := Resolve(desired)
	if err != nil {
		return Spec{}, err
	}
	want, have := desired.CurrentGeneration(), actual.CurrentGeneration()
	next := have.Number + 1
	for _, g := range draining {
		next = max(next, g.Number+1)
	}
	desired.Generation, desired.FormatGeneration = next, next
	if want.KeyFormat() == have.KeyFormat() {
		desired.FormatGeneration = have.Format
	}
	if err := Validate(desired); err != nil {
		return Spec{}, err
	}
	return desired, nil
}

// DriftedQueues names the TTL queues of s's generation that actual has with
// other arguments than desired, s's plan: the broker cannot change them in
// place, so Diff deletes and declares them again, which it may only do to
// an empty queue. One that holds messages is repaired by a new generation
// instead ([NewGeneration]), beside which it drains as it is. s is
// resolved; the caller has planned desired from it already.
func DriftedQueues(s Spec, desired, actual Topology) []string {
	// Diff deletes a queue that desired has only to declare it again.
	wanted := map[string]bool{}
	for _, q := range desired.Queues {
		wanted[q.Name] = true
	}
	replaced := map[string]bool{}
	for _, change := range Diff(desired, actual) {
		if change.Kind == DeleteQueue && wanted[change.Queue.Name] {
			replaced[change.Queue.Name] = true
		}
	}
	var drifted []string
	for _, name := range s.CurrentGeneration().Queues(s.Name) {
		if replaced[name] {
			drifted = append(drifted, name)
		}
	}
	return drifted
}

// KeepDrainingQueues gives every queue of the draining generations in
// desired the arguments it has in actual: a draining generation is never
// declared again, only deleted once empty, so a queue of it that drifted
// drains as it is.
func KeepDrainingQueues(name string, desired, actual Topology, draining []Generation) Topology {
	have := map[string]QueueArguments{}
	for _, q := range actual.Queues {
		have[q.Name] = q.Arguments
	}
	drains := map[string]bool{}
	for _, g := range draining {
		for _, q := range g.Queues(name) {
			drains[q] = true
		}
	}
	desired.Queues = slices.Clone(desired.Queues)
	for i, q := range desired.Queues {
		if arguments, ok := have[q.Name]; ok && drains[q.Name] {
			desired.Queues[i].Arguments = arguments
		}
	}
	return desired
}
