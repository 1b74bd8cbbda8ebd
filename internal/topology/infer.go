package topology

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// InferError says why the objects found for the set Name explain no spec.
// Reasons lists every problem found, each naming the objects involved.
type InferError struct {
	Name    string
	Reasons []string
}

func (e *InferError) Error() string {
	return fmt.Sprintf("cannot infer delay set %q from its objects: %s", e.Name, strings.Join(e.Reasons, "; "))
}

// Infer returns the spec of the set name that explains actual, in the
// canonical form of [Resolve], for importing a set that already exists.
// Only objects named for the set count. A partial or hand-edited topology
// still gives a spec whenever its radix, levels, resolution, queue kind and
// routes can be told from what exists, so that the Diff against its plan
// shows exactly what is missing or different; DESIGN.md ("Inference") says
// where each field is read. It fails with an [*InferError] when no level
// object exists or the level objects disagree. A library's layout is told
// by its objects' names: see [InferLayout].
func Infer(name string, actual Topology) (Spec, error) {
	spec, _, err := InferGenerations(name, actual)
	return spec, err
}

// InferLayout is [InferGenerations] of a set whose layout is known, such
// as one a refresh reads back. In a library's layout everything but the
// queue type (Celery's, which its level queues' x-queue-type tells) and
// the routes is fixed, so any part of its objects, or none, gives a spec
// whose plan's Diff shows what is missing or declared otherwise; its
// routes are the delivery exchange's bindings on "#.<key>", or "#" for
// the empty key; the levels' queues must not disagree on their type. Such
// a set has no draining generations.
func InferLayout(name string, layout Layout, actual Topology) (spec Spec, draining []Generation, err error) {
	l, problem := layoutNamed(layout)
	if problem != nil {
		return Spec{}, nil, &InferError{Name: name, Reasons: []string{problem.Error()}}
	}
	return l.infer(name, actual)
}

// InferGenerations is [Infer] for a set with several generations: the spec
// describes the current generation, the highest-numbered one found, and
// draining lists the older ones, oldest first, each inferred from its own
// objects. A generation's format is that of the exchanges bound to it, so
// a set cut off in the middle of a change still gets the exchanges it was
// being given (DESIGN.md, "Inference").
func InferGenerations(name string, actual Topology) (spec Spec, draining []Generation, err error) {
	layout, err := layoutHeldBy(name, actual)
	if err != nil {
		return Spec{}, nil, err
	}
	return InferLayout(name, layout, actual)
}

// infer is InferGenerations of a set of the default layout,
// in four steps:
//
//  1. sort the set's TTL queues and done exchanges into chains by
//     generation, and note its ingest and out exchanges (readChains);
//  2. drop the chains without a queue (dropQueueless);
//  3. read the format each chain is bound to (boundFormats);
//  4. infer each chain's generation, oldest first (inferChains): the last
//     is current, the others drain, and the spec is the current one's with
//     the routes of its format's out exchange (currentSpec).
func (defaultLayout) infer(name string, actual Topology) (spec Spec, draining []Generation, err error) {
	names := Names(name)
	chains := readChains(names, actual)
	chains.dropQueueless()
	if len(chains.byGeneration) == 0 {
		return Spec{}, nil, &InferError{Name: name, Reasons: []string{fmt.Sprintf(
			"no level queue (%s …) nor done exchange (%s …) exists, so the number of levels is unknown",
			names.Level(0), names.Done(0))}}
	}
	generations, reasons := chains.infer(names, chains.boundFormats(actual.Bindings))
	if len(reasons) > 0 {
		return Spec{}, nil, &InferError{Name: name, Reasons: reasons}
	}
	current := generations[len(generations)-1]
	draining = generations[:len(generations)-1]
	if len(draining) == 0 {
		draining = nil
	}
	resolved, err := resolveInferred(currentSpec(names, actual, current))
	if err != nil {
		return Spec{}, nil, err
	}
	return resolved, draining, nil
}

// setChains are the chains of TTL queues and done exchanges of a
// default-layout set, by generation, and what its exchanges are.
type setChains struct {
	byGeneration    map[int]*chainObjects
	queueGeneration map[string]int // a TTL queue → its generation
	doneGeneration  map[string]int // a done exchange → its generation
	formatExchanges map[string]int // ingest and out exchanges → their generation
}

// readChains is step 1 of defaultLayout.infer: the objects of actual named
// for the set, each once, sorted into chains.
func readChains(names Names, actual Topology) *setChains {
	c := &setChains{byGeneration: map[int]*chainObjects{}, queueGeneration: map[string]int{},
		doneGeneration: map[string]int{}, formatExchanges: map[string]int{}}
	seenQueue := map[string]bool{}
	for _, q := range actual.Queues {
		if seenQueue[q.Name] {
			continue
		}
		seenQueue[q.Name] = true
		if o := names.parse(q.Name); o.kind == kindLevel && o.level < MaxLevels {
			c.chain(o.generation).add(o, q.Name, &q)
			c.queueGeneration[q.Name] = o.generation
		}
	}
	for _, e := range actual.Exchanges {
		switch o := names.parse(e.Name); {
		case o.kind == kindDone && o.level < MaxLevels:
			c.chain(o.generation).add(o, e.Name, nil)
			c.doneGeneration[e.Name] = o.generation
		case o.kind == kindIngest || o.kind == kindOut:
			c.formatExchanges[e.Name] = o.generation
		}
	}
	return c
}

// chain is the chain of a generation, new when it has none yet.
func (c *setChains) chain(generation int) *chainObjects {
	if c.byGeneration[generation] == nil {
		c.byGeneration[generation] = &chainObjects{highest: map[int]int{}, byRadix: map[int][]string{}}
	}
	return c.byGeneration[generation]
}

// dropQueueless is step 2 of defaultLayout.infer. A chain of done exchanges
// without a single queue holds no message and says nothing of its queues:
// what an apply cut off before it declared them leaves. It is no
// generation; Diff deletes or completes it. When no chain has a queue, the
// chains stay, and infer says what is missing.
func (c *setChains) dropQueueless() {
	for _, chain := range c.byGeneration {
		if len(chain.levelQueues) > 0 {
			maps.DeleteFunc(c.byGeneration, func(_ int, ch *chainObjects) bool { return len(ch.levelQueues) == 0 })
			return
		}
	}
}

// boundFormats is step 3 of defaultLayout.infer: by generation, the highest
// format whose exchanges are bound to its chain, an ingest bound to its
// queues or an out its done exchanges are bound to.
func (c *setChains) boundFormats(bindings []Binding) map[int]int {
	bound := map[int]int{}
	for _, b := range bindings {
		format, fromIngest := c.formatExchanges[b.Source]
		generation, toQueue := c.queueGeneration[b.Destination]
		if !fromIngest || !toQueue || b.DestinationType == DestinationExchange {
			format, fromIngest = c.formatExchanges[b.Destination]
			generation, toQueue = c.doneGeneration[b.Source]
			if !fromIngest || !toQueue || b.DestinationType != DestinationExchange {
				continue
			}
		}
		if known, ok := bound[generation]; !ok || format > known {
			bound[generation] = format
		}
	}
	return bound
}

// infer is step 4 of defaultLayout.infer: the generation of each chain,
// oldest first, and the problems that keep them from being read. An older
// chain whose queues disagree is read from those that agree
// (inferAgreeing). A generation's format is the one bound to it, or when
// none is, that of the generation before it when their key formats match,
// and otherwise its own.
func (c *setChains) infer(names Names, boundFormat map[int]int) ([]Generation, []string) {
	numbers := slices.Sorted(maps.Keys(c.byGeneration))
	var reasons []string
	generations := make([]Generation, len(numbers))
	for i, number := range numbers {
		g, problems := c.byGeneration[number].infer(names, number)
		if len(problems) > 0 && i < len(numbers)-1 {
			g, problems = c.byGeneration[number].inferAgreeing(names, number)
		}
		reasons = append(reasons, problems...)
		g.Format = number
		if format, bound := boundFormat[number]; bound && format <= number {
			g.Format = format
		} else if i > 0 && generations[i-1].KeyFormat() == g.KeyFormat() {
			g.Format = generations[i-1].Format
		}
		generations[i] = g
	}
	return generations, reasons
}

// currentSpec is the spec of a set whose current generation is current,
// its routes read from the bindings of that generation's out exchange;
// resolveInferred resolves it.
func currentSpec(names Names, actual Topology, current Generation) Spec {
	return Spec{
		Name:                   string(names),
		VHost:                  actual.VHost,
		Levels:                 current.Levels,
		Radix:                  current.Radix,
		Resolution:             current.Resolution,
		QueueType:              current.QueueType,
		DeadLetterStrategy:     current.DeadLetterStrategy,
		QueueLeaderLocator:     current.QueueLeaderLocator,
		QuorumInitialGroupSize: current.QuorumInitialGroupSize,
		Routes:                 inferRoutes(names.Generation(current.Format).Out(), current.Levels, actual.Bindings),
		Generation:             current.Number,
		FormatGeneration:       current.Format,
	}
}

// resolveInferred resolves a spec read from a topology. A route Validate
// refuses is drift to delete, not a reason to refuse the import: it is
// left out.
func resolveInferred(spec Spec) (Spec, error) {
	resolved, err := Resolve(spec)
	var invalid ValidationErrors
	if errors.As(err, &invalid) {
		refused := map[int]bool{}
		for _, problem := range invalid {
			if problem.Route >= 0 {
				refused[problem.Route] = true
			}
		}
		if len(refused) > 0 {
			var kept []Route
			for i, r := range spec.Routes {
				if !refused[i] {
					kept = append(kept, r)
				}
			}
			spec.Routes = kept
			resolved, err = Resolve(spec)
		}
	}
	if err != nil {
		return Spec{}, &InferError{Name: spec.Name, Reasons: []string{"the inferred spec is invalid: " + err.Error()}}
	}
	return resolved, nil
}

// chainObjects are the TTL queues and done exchanges of one generation.
type chainObjects struct {
	levelQueues []levelQueue
	highest     map[int]int      // radix → highest level
	byRadix     map[int][]string // radix → names of its level objects
	radixes     []int            // distinct, in order of appearance
}

// add records a TTL queue (q set) or a done exchange.
func (c *chainObjects) add(o objectName, name string, q *Queue) {
	if _, seen := c.byRadix[o.radix]; !seen {
		c.radixes = append(c.radixes, o.radix)
		c.highest[o.radix] = -1
	}
	c.byRadix[o.radix] = append(c.byRadix[o.radix], name)
	c.highest[o.radix] = max(c.highest[o.radix], o.level)
	if q != nil {
		c.levelQueues = append(c.levelQueues, levelQueue{o, *q})
	}
}

// infer reads a generation's radix, levels, resolution, queue type and
// strategy from its objects.
func (c *chainObjects) infer(names Names, number int) (Generation, []string) {
	if len(c.radixes) > 1 {
		slices.Sort(c.radixes)
		groups := make([]string, len(c.radixes))
		for i, radix := range c.radixes {
			groups[i] = fmt.Sprintf("%s of radix %d", listNames(c.byRadix[radix]), radix)
		}
		return Generation{}, []string{"the level queues and done exchanges disagree on the radix: " + strings.Join(groups, "; ")}
	}
	radix := c.radixes[0]
	slices.SortFunc(c.levelQueues, func(a, b levelQueue) int {
		return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(a.digit, b.digit))
	})
	var reasons []string
	resolution, problems := inferResolution(names.Generation(number), radix, c.levelQueues)
	reasons = append(reasons, problems...)
	queueType, problems := inferQueueType(c.levelQueues)
	reasons = append(reasons, problems...)
	strategy, problems := inferStrategy(queueType, c.levelQueues)
	reasons = append(reasons, problems...)
	locator, problems := inferLeaderLocator(c.levelQueues)
	reasons = append(reasons, problems...)
	groupSize, problems := inferGroupSize(c.levelQueues)
	reasons = append(reasons, problems...)
	return Generation{
		Number: number, Levels: c.highest[radix] + 1, Radix: radix, Resolution: resolution,
		QueueType: queueType, DeadLetterStrategy: strategy, QueueLeaderLocator: locator, QuorumInitialGroupSize: groupSize,
	}, reasons
}

// inferAgreeing is infer for an older generation whose queues disagree:
// one of them drifted (was declared again behind the provider's back). A
// draining generation is never declared again, only drained and deleted,
// so it is read from the largest group of its queues that agree on their
// resolution, type, strategy, leader locator and group size (on a tie, the
// group of its lowest queue); its drifted queues drain as they are (see
// [KeepDrainingQueues]).
func (c *chainObjects) inferAgreeing(names Names, number int) (Generation, []string) {
	if len(c.radixes) != 1 {
		return c.infer(names, number)
	}
	radix := c.radixes[0]
	type signature struct {
		resolution int64 // ms; -1 when the TTL gives none
		queueType  QueueType
		strategy   DeadLetterStrategy
		locator    LeaderLocator
		groupSize  int
	}
	groups := map[signature][]levelQueue{}
	var order []signature // in level order of their first queue
	for _, lq := range c.levelQueues {
		sig := signature{resolution: -1, queueType: lq.queueType(), strategy: lq.strategy(), locator: lq.queue.Arguments.LeaderLocator,
			groupSize: lq.queue.Arguments.QuorumInitialGroupSize}
		if resolution, ok := lq.resolution(radix); ok {
			sig.resolution = resolution
		}
		if _, seen := groups[sig]; !seen {
			order = append(order, sig)
		}
		groups[sig] = append(groups[sig], lq)
	}
	largest := order[0]
	for _, sig := range order[1:] {
		if len(groups[sig]) > len(groups[largest]) {
			largest = sig
		}
	}
	agreeing := *c
	agreeing.levelQueues = groups[largest]
	return agreeing.infer(names, number)
}

type levelQueue struct {
	objectName
	queue Queue
}

// ttlTicks is the queue's TTL in ticks: v·radix^k for digit v at level k.
func (lq levelQueue) ttlTicks(radix int) int64 {
	return radixChain{radix: radix}.ttlTicks(stage{lq.level, lq.digit})
}

// resolution is the tick, in ms, that the queue's x-message-ttl gives;
// false when it has none or one that is no whole number of ticks.
func (lq levelQueue) resolution(radix int) (int64, bool) {
	ttl, ticks := lq.queue.Arguments.MessageTTL, lq.ttlTicks(radix)
	if ttl <= 0 || ttl%ticks != 0 {
		return 0, false
	}
	return ttl / ticks, true
}

// queueType is the queue's x-queue-type as the broker reads it: classic
// when it has none.
func (lq levelQueue) queueType() QueueType {
	return cmp.Or(lq.queue.Arguments.QueueType, QueueTypeClassic)
}

// strategy is the queue's x-dead-letter-strategy as the broker applies it:
// at-most-once when it has none, and on a classic queue whatever it says.
func (lq levelQueue) strategy() DeadLetterStrategy {
	if lq.queueType() == QueueTypeClassic {
		return AtMostOnce
	}
	return cmp.Or(lq.queue.Arguments.DeadLetterStrategy, AtMostOnce)
}

// inferResolution reads the tick from the TTL queues' TTLs: the queue of
// digit v at level k waits Resolution·v·radix^k (Resolution·2^k in radix 2).
func inferResolution(names GenerationNames, radix int, levelQueues []levelQueue) (time.Duration, []string) {
	if len(levelQueues) == 0 {
		return 0, []string{fmt.Sprintf(
			"no level queue (%s …) exists, so the resolution cannot be read from an x-message-ttl", names.Queue(radix, 0, 1))}
	}
	var reasons, usable []string
	var resolutions []int64 // distinct, in level order
	var without []string
	for _, lq := range levelQueues {
		ttl := lq.queue.Arguments.MessageTTL
		if ttl <= 0 {
			without = append(without, lq.queue.Name)
			continue
		}
		ms, ok := lq.resolution(radix)
		if !ok {
			reasons = append(reasons, fmt.Sprintf("%s has x-message-ttl %d, not a multiple of %s = %d",
				lq.queue.Name, ttl, ttlFactorText(radix, lq.level, lq.digit), lq.ttlTicks(radix)))
			continue
		}
		usable = append(usable, fmt.Sprintf("%s x-message-ttl %d (resolution %v)",
			lq.queue.Name, ttl, time.Duration(ms)*time.Millisecond))
		if !slices.Contains(resolutions, ms) {
			resolutions = append(resolutions, ms)
		}
	}
	switch {
	case len(resolutions) > 1:
		reasons = append(reasons, "the level queues disagree on the resolution: "+strings.Join(usable, ", "))
	case len(resolutions) == 0 && len(reasons) == 0:
		reasons = append(reasons, fmt.Sprintf(
			"no level queue has an x-message-ttl (%s), so the resolution is unknown", strings.Join(without, ", ")))
	}
	if len(reasons) > 0 {
		return 0, reasons
	}
	return time.Duration(resolutions[0]) * time.Millisecond, nil
}

// sharedArgument is an argument that every level queue of a generation
// declares alike.
type sharedArgument[T comparable] struct {
	name string
	// value is a queue's, as the broker applies it.
	value   func(levelQueue) T
	allowed []T
	// valid, when set, tells the allowed values instead of allowed.
	valid func(T) bool
	// expected ends the reason for a value not allowed: "a delay set's queues are …".
	expected string
}

// infer reads the argument from the level queues: the one value they
// share (the zero value when there are none), or the reasons why not.
func (a sharedArgument[T]) infer(levelQueues []levelQueue) (T, []string) {
	var reasons []string
	var values []T // distinct, in level order
	byValue := map[T][]string{}
	for _, lq := range levelQueues {
		value := a.value(lq)
		if !a.allows(value) {
			reasons = append(reasons, fmt.Sprintf("%s has %s %v; %s", lq.queue.Name, a.name, value, a.expected))
			continue
		}
		if _, seen := byValue[value]; !seen {
			values = append(values, value)
		}
		byValue[value] = append(byValue[value], lq.queue.Name)
	}
	if len(values) > 1 {
		groups := make([]string, len(values))
		for i, value := range values {
			groups[i] = fmt.Sprintf("%s %s", listNames(byValue[value]), shownValue(value))
		}
		reasons = append(reasons, fmt.Sprintf("the level queues disagree on %s: %s", a.name, strings.Join(groups, "; ")))
	}
	if len(reasons) > 0 || len(values) == 0 {
		// No value without a queue: inferResolution has said so already.
		var none T
		return none, reasons
	}
	return values[0], nil
}

// allows tells whether a queue may have value v.
func (a sharedArgument[T]) allows(v T) bool {
	if a.valid != nil {
		return a.valid(v)
	}
	return slices.Contains(a.allowed, v)
}

// shownValue spells an argument's value in a reason: "none" when absent.
func shownValue[T comparable](v T) string {
	var none T
	if v == none {
		return "none"
	}
	return fmt.Sprint(v)
}

// inferQueueType reads x-queue-type from the level queues; a queue without
// it is classic, the broker's default. The unroutable queue does not count:
// a set's parking lot outlives the changes of its queue type, and one of
// another type shows as drift.
func inferQueueType(levelQueues []levelQueue) (QueueType, []string) {
	return sharedArgument[QueueType]{name: ArgQueueType, value: levelQueue.queueType, allowed: QueueTypes,
		expected: "a delay set's queues are " + joinValues(QueueTypes)}.infer(levelQueues)
}

// inferStrategy reads x-dead-letter-strategy from quorum level queues.
//
// A quorum queue with at-least-once but without x-overflow = reject-publish
// dead-letters at most once in fact; it is still inferred as at-least-once,
// because that argument states what its owner asked for: the plan then
// shows the missing x-overflow as a replacement, which makes the strategy
// real, rather than a replacement that would silently drop the strategy.
func inferStrategy(queueType QueueType, levelQueues []levelQueue) (DeadLetterStrategy, []string) {
	if queueType != QueueTypeQuorum {
		// Classic queues only dead-letter at most once; an argument saying
		// otherwise shows as drift.
		return AtMostOnce, nil
	}
	// Quorum queues: their own, or at-most-once.
	return sharedArgument[DeadLetterStrategy]{name: ArgDeadLetterStrategy, value: levelQueue.strategy, allowed: DeadLetterStrategies,
		expected: "a delay set's queues use " + joinValues(DeadLetterStrategies)}.infer(levelQueues)
}

// inferLeaderLocator reads x-queue-leader-locator from the level queues:
// none (the queues of a set made before the argument existed) or one that
// all of them share.
func inferLeaderLocator(levelQueues []levelQueue) (LeaderLocator, []string) {
	return sharedArgument[LeaderLocator]{name: ArgLeaderLocator,
		value:    func(lq levelQueue) LeaderLocator { return lq.queue.Arguments.LeaderLocator },
		allowed:  append([]LeaderLocator{""}, LeaderLocators...),
		expected: "a delay set's queues use " + joinValues(LeaderLocators) + " or none"}.infer(levelQueues)
}

// inferRoutes reads the routes from the out exchange's bindings, whose keys
// are "<route key>.*^levels", or "#.*^levels" for the empty route key.
func inferRoutes(out string, levels int, bindings []Binding) []Route {
	ticks := strings.Repeat(".*", levels)
	var routes []Route
	seen := map[Route]bool{}
	for _, b := range bindings {
		if b.Source != out || len(b.RoutingKey) <= len(ticks) || !strings.HasSuffix(b.RoutingKey, ticks) {
			continue
		}
		route := Route{Destination: b.Destination, DestinationType: b.DestinationType, Key: strings.TrimSuffix(b.RoutingKey, ticks)}.canonical()
		if route.Key == "#" {
			route.Key = ""
		}
		if !seen[route] {
			seen[route] = true
			routes = append(routes, route)
		}
	}
	return routes
}

// listNames lists queue names with the verb that agrees with them.
func listNames(names []string) string {
	if len(names) == 1 {
		return names[0] + " is"
	}
	return strings.Join(names, ", ") + " are"
}

func joinValues[T ~string](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = string(v)
	}
	return strings.Join(parts, " or ")
}
