package topology

import (
	"cmp"
	"errors"
	"fmt"
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
//
// Only the objects whose names belong to the set count; others are ignored.
// A partial or hand-edited topology still gives a spec whenever the levels,
// the resolution, the queue type and the dead-letter strategy can be told
// from what exists, so that the Diff against the spec's Plan shows exactly
// what is missing or different:
//   - the radix is the one the names of the TTL queues and done exchanges
//     spell ("<name>.level.kk" is radix 2, "<name>.r16.kk.v" radix 16);
//   - the levels are 1 + the highest level of a TTL queue or done exchange
//     (a level beyond [MaxLevels] cannot belong to any set and is ignored);
//   - the resolution is x-message-ttl / (v·radix^k) of the TTL queues that
//     have one (x-message-ttl / 2^k in radix 2);
//   - the queue type is the x-queue-type of the level and unroutable queues,
//     classic when absent;
//   - the dead-letter strategy is the level queues' x-dead-letter-strategy,
//     at-most-once (the broker's default) for a quorum queue without one and
//     for classic queues;
//   - a route is a binding of the out exchange whose key is a prefix
//     followed by exactly levels "*" words, the prefix "#" meaning the empty
//     key; other bindings of out, and routes [Validate] refuses, are left out
//     and show as bindings to delete.
//
// It fails with an [*InferError] when no level object exists, when the
// level objects are of different radixes, when no level queue has a TTL, or
// when the queues disagree on what they should share.
func Infer(name string, actual Topology) (Spec, error) {
	names := Names(name)
	var levelQueues []levelQueue
	var unroutable []Queue
	highest := map[int]int{}      // radix → highest level
	byRadix := map[int][]string{} // radix → names of its level objects
	var radixes []int             // distinct, in order of appearance
	seenLevelObject := func(o objectName, name string) {
		if _, seen := byRadix[o.radix]; !seen {
			radixes = append(radixes, o.radix)
			highest[o.radix] = -1
		}
		byRadix[o.radix] = append(byRadix[o.radix], name)
		highest[o.radix] = max(highest[o.radix], o.level)
	}
	seenQueue := map[string]bool{}
	for _, q := range actual.Queues {
		if seenQueue[q.Name] {
			continue
		}
		seenQueue[q.Name] = true
		switch o := names.parse(q.Name); {
		case o.kind == kindLevel && o.level < MaxLevels:
			levelQueues = append(levelQueues, levelQueue{o, q})
			seenLevelObject(o, q.Name)
		case o.kind == kindUnroutable:
			unroutable = append(unroutable, q)
		}
	}
	for _, e := range actual.Exchanges {
		if o := names.parse(e.Name); o.kind == kindDone && o.level < MaxLevels {
			seenLevelObject(o, e.Name)
		}
	}
	switch {
	case len(radixes) == 0:
		return Spec{}, &InferError{Name: name, Reasons: []string{fmt.Sprintf(
			"no level queue (%s …) nor done exchange (%s …) exists, so the number of levels is unknown",
			names.Level(0), names.Done(0))}}
	case len(radixes) > 1:
		slices.Sort(radixes)
		groups := make([]string, len(radixes))
		for i, radix := range radixes {
			groups[i] = fmt.Sprintf("%s of radix %d", listNames(byRadix[radix]), radix)
		}
		return Spec{}, &InferError{Name: name, Reasons: []string{
			"the level queues and done exchanges disagree on the radix: " + strings.Join(groups, "; ")}}
	}
	radix := radixes[0]
	levels := highest[radix] + 1
	slices.SortFunc(levelQueues, func(a, b levelQueue) int {
		return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(a.digit, b.digit))
	})

	var reasons []string
	resolution, problems := inferResolution(names, radix, levelQueues)
	reasons = append(reasons, problems...)
	queueType, problems := inferQueueType(levelQueues, unroutable)
	reasons = append(reasons, problems...)
	strategy, problems := inferStrategy(queueType, levelQueues)
	reasons = append(reasons, problems...)
	if len(reasons) > 0 {
		return Spec{}, &InferError{Name: name, Reasons: reasons}
	}

	spec := Spec{
		Name:               name,
		VHost:              actual.VHost,
		Levels:             levels,
		Radix:              radix,
		Resolution:         resolution,
		QueueType:          queueType,
		DeadLetterStrategy: strategy,
		Routes:             inferRoutes(names, levels, actual.Bindings),
	}
	resolved, err := Resolve(spec)
	var invalid ValidationErrors
	if errors.As(err, &invalid) {
		// A route Validate refuses is drift to delete, not a reason to refuse
		// the import: leave it out and try again.
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
		return Spec{}, &InferError{Name: name, Reasons: []string{"the inferred spec is invalid: " + err.Error()}}
	}
	return resolved, nil
}

type levelQueue struct {
	objectName
	queue Queue
}

// inferResolution reads the tick from the TTL queues' TTLs: the queue of
// digit v at level k waits Resolution·v·radix^k (Resolution·2^k in radix 2).
func inferResolution(names Names, radix int, levelQueues []levelQueue) (time.Duration, []string) {
	if len(levelQueues) == 0 {
		return 0, []string{fmt.Sprintf(
			"no level queue (%s …) exists, so the resolution cannot be read from an x-message-ttl", names.Queue(radix, 0, 1))}
	}
	l := layout{names: names, radix: radix}
	var reasons, usable []string
	var resolutions []int64 // distinct, in level order
	var without []string
	for _, lq := range levelQueues {
		ttl := lq.queue.Arguments.MessageTTL
		if ttl <= 0 {
			without = append(without, lq.queue.Name)
			continue
		}
		factor := l.ttlTicks(stage{lq.level, lq.digit})
		if ttl%factor != 0 {
			reasons = append(reasons, fmt.Sprintf("%s has x-message-ttl %d, not a multiple of %s = %d",
				lq.queue.Name, ttl, ttlFactorText(radix, lq.level, lq.digit), factor))
			continue
		}
		ms := ttl / factor
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

// inferQueueType reads x-queue-type from the level and unroutable queues; a
// queue without it is classic, the broker's default.
func inferQueueType(levelQueues []levelQueue, unroutable []Queue) (QueueType, []string) {
	queues := make([]Queue, 0, len(levelQueues)+len(unroutable))
	for _, lq := range levelQueues {
		queues = append(queues, lq.queue)
	}
	queues = append(queues, unroutable...)
	var reasons []string
	var types []QueueType // distinct, in queue order
	byType := map[QueueType][]string{}
	for _, q := range queues {
		queueType := q.Arguments.QueueType
		if queueType == "" {
			queueType = QueueTypeClassic
		}
		if !slices.Contains(QueueTypes, queueType) {
			reasons = append(reasons, fmt.Sprintf("%s has x-queue-type %s; a delay set's queues are %s",
				q.Name, queueType, joinValues(QueueTypes)))
			continue
		}
		if _, seen := byType[queueType]; !seen {
			types = append(types, queueType)
		}
		byType[queueType] = append(byType[queueType], q.Name)
	}
	if len(types) > 1 {
		groups := make([]string, len(types))
		for i, queueType := range types {
			groups[i] = fmt.Sprintf("%s %s", listNames(byType[queueType]), queueType)
		}
		reasons = append(reasons, "the queues disagree on x-queue-type: "+strings.Join(groups, "; "))
	}
	if len(reasons) > 0 || len(types) == 0 {
		// No type without a queue: inferResolution has said so already.
		return "", reasons
	}
	return types[0], nil
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
	var reasons []string
	var strategies []DeadLetterStrategy // distinct, in level order
	byStrategy := map[DeadLetterStrategy][]string{}
	for _, lq := range levelQueues {
		strategy := lq.queue.Arguments.DeadLetterStrategy
		if strategy == "" {
			strategy = AtMostOnce
		}
		if !slices.Contains(DeadLetterStrategies, strategy) {
			reasons = append(reasons, fmt.Sprintf("%s has x-dead-letter-strategy %s; a delay set's queues use %s",
				lq.queue.Name, strategy, joinValues(DeadLetterStrategies)))
			continue
		}
		if _, seen := byStrategy[strategy]; !seen {
			strategies = append(strategies, strategy)
		}
		byStrategy[strategy] = append(byStrategy[strategy], lq.queue.Name)
	}
	if len(strategies) > 1 {
		groups := make([]string, len(strategies))
		for i, strategy := range strategies {
			groups[i] = fmt.Sprintf("%s %s", listNames(byStrategy[strategy]), strategy)
		}
		reasons = append(reasons, "the level queues disagree on x-dead-letter-strategy: "+strings.Join(groups, "; "))
	}
	if len(reasons) > 0 {
		return "", reasons
	}
	// A quorum type comes from at least one queue; when that is only the
	// unroutable queue, inferResolution has refused already.
	if len(strategies) == 0 {
		return "", nil
	}
	return strategies[0], nil
}

// inferRoutes reads the routes from the out exchange's bindings, whose keys
// are "<route key>.*^levels", or "#.*^levels" for the empty route key.
func inferRoutes(names Names, levels int, bindings []Binding) []Route {
	ticks := strings.Repeat(".*", levels)
	var routes []Route
	seen := map[Route]bool{}
	for _, b := range bindings {
		if b.Source != names.Out() || len(b.RoutingKey) <= len(ticks) || !strings.HasSuffix(b.RoutingKey, ticks) {
			continue
		}
		route := Route{Destination: b.Destination, DestinationType: b.DestinationType, Key: strings.TrimSuffix(b.RoutingKey, ticks)}
		if route.DestinationType == "" {
			route.DestinationType = DestinationQueue
		}
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
