package topology

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The delay layouts of two libraries: the NServiceBus RabbitMQ transport
// (its "v2" delays) and Celery through kombu (native delayed delivery).
// Those two share one design, and this file is the one place that knows
// it: 28 topic exchanges, one per bit of a delay in seconds, each with a
// quorum (or, in Celery, classic) TTL queue of the same name that
// dead-letters into the level below; the delay written as 28 bits before
// the destination; and exchange-to-exchange bindings that pass a message
// down the levels whose bit is 0. Their names, levels and resolution are
// the libraries', so that what a library declares at start-up matches what
// the set declares, byte for byte.

// The shape every library layout shares.
const (
	// libraryLevels is the number of bits of a delay, and of levels.
	libraryLevels = 28
	// libraryResolution is the tick: delays are whole seconds.
	libraryResolution = time.Second
)

// library is the delay layout of one library: a [setLayout] whose every
// difference from the other library's is a field below, so that another
// library of this design is one more value, listed in layouts.
type library struct {
	layout Layout
	// product is the library's name, for messages: "NServiceBus".
	product string
	// levelPrefix and levelWidth name level k's exchange and queue: the
	// prefix, then k in decimal, zero-padded to levelWidth digits.
	levelPrefix string
	levelWidth  int
	// delivery is the exchange level 0 passes messages to, which the
	// routes bind from.
	delivery string
	// queueTypes are the queue types the library declares, its default first.
	queueTypes []QueueType
	// roundUp tells that a publisher rounds a delay up to whole seconds
	// (NServiceBus); otherwise it truncates it (Celery).
	roundUp bool
	// entryAtHighestBit tells that a publisher sends a message to the
	// level exchange of its delay's highest set bit (level 0 for no delay),
	// as NServiceBus does; otherwise to the top level's exchange, as Celery
	// does.
	entryAtHighestBit bool
}

var (
	nserviceBusLibrary = library{
		layout: LayoutNServiceBus, product: "NServiceBus",
		levelPrefix: "nsb.v2.delay-level-", levelWidth: 2, delivery: "nsb.v2.delay-delivery",
		queueTypes: []QueueType{QueueTypeQuorum}, roundUp: true, entryAtHighestBit: true,
	}
	celeryLibrary = library{
		layout: LayoutCelery, product: "Celery",
		levelPrefix: "celery_delayed_", levelWidth: 1, delivery: "celery_delayed_delivery",
		queueTypes: []QueueType{QueueTypeQuorum, QueueTypeClassic},
	}
)

// level is the name of level k's exchange and of its queue.
func (lib *library) level(k int) string {
	digits := strconv.Itoa(k)
	if pad := lib.levelWidth - len(digits); pad > 0 {
		digits = strings.Repeat("0", pad) + digits
	}
	return lib.levelPrefix + digits
}

// next is the exchange that level k's queue dead-letters into and that
// level k's exchange passes a message on to when its bit is 0: level k−1's,
// or the delivery exchange after level 0.
func (lib *library) next(k int) string {
	if k == 0 {
		return lib.delivery
	}
	return lib.level(k - 1)
}

// parseLevel tells which level name is the exchange and queue of.
func (lib *library) parseLevel(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, lib.levelPrefix)
	if !ok || len(digits) == 0 || len(digits) > 2 {
		return 0, false
	}
	k, err := strconv.Atoi(digits)
	// Only the library's own spelling: "celery_delayed_05" is no level.
	if err != nil || k < 0 || k >= libraryLevels || lib.level(k) != name {
		return 0, false
	}
	return k, true
}

// owns tells whether name is one of the layout's exchanges or queues.
func (lib *library) owns(name string) bool {
	_, isLevel := lib.parseLevel(name)
	return isLevel || name == lib.delivery
}

// stageLabel names one of the layout's level exchanges and queues or its
// delivery exchange in a reason: "nservicebus level 05", "the celery
// delivery exchange".
func (lib *library) stageLabel(name string) (string, bool) {
	if k, ok := lib.parseLevel(name); ok {
		return fmt.Sprintf("%s level %s", lib.layout, strings.TrimPrefix(lib.level(k), lib.levelPrefix)), true
	}
	if name == lib.delivery {
		return fmt.Sprintf("the %s delivery exchange", lib.layout), true
	}
	return "", false
}

func (lib *library) name() Layout { return lib.layout }

// objectNamePattern matches the layout's level and delivery names, whatever
// the set's name.
func (lib *library) objectNamePattern(string) string {
	levels := make([]string, libraryLevels)
	for k := range levels {
		levels[k] = strings.TrimPrefix(lib.level(k), lib.levelPrefix)
	}
	return "^(" + regexp.QuoteMeta(lib.levelPrefix) + "(" + strings.Join(levels, "|") + ")|" +
		regexp.QuoteMeta(lib.delivery) + ")$"
}

// maxTicks is the longest delay in seconds, 2^28 − 1.
func (lib *library) maxTicks() uint64 { return maxTicks(libraryLevels, 2) }

// maxDelay is the longest delay, 2^28 − 1 seconds (about 8.5 years).
func (lib *library) maxDelay() time.Duration {
	return maxDelayFor(libraryLevels, 2, libraryResolution)
}

// levelKey is the binding key that level k's exchange matches on the bit
// of its level: the 27−k higher bits, any, then bit, then the lower bits
// and the destination, any.
func levelKey(k int, bit string) string {
	return strings.Repeat(anyWord+".", libraryLevels-1-k) + bit + "." + anyWords
}

// plan lists the objects of the resolved spec s: the level exchanges,
// then the delivery exchange; the level queues; then for each level its
// binding to its queue (bit 1) and to the next exchange (bit 0); then the
// routes. Levels go from 0 up, as in the default layout.
func (lib *library) plan(s Spec) Topology {
	top := Topology{
		VHost:     s.VHost,
		Exchanges: make([]Exchange, 0, libraryLevels+1),
		Queues:    make([]Queue, 0, libraryLevels),
		Bindings:  make([]Binding, 0, 2*libraryLevels+len(s.Routes)),
	}
	for k := range libraryLevels {
		top.Exchanges = append(top.Exchanges, Exchange{Name: lib.level(k), Type: ExchangeTopic})
	}
	top.Exchanges = append(top.Exchanges, Exchange{Name: lib.delivery, Type: ExchangeTopic})
	for k := range libraryLevels {
		args := QueueArguments{
			MessageTTL:         libraryResolution.Milliseconds() << k,
			DeadLetterExchange: lib.next(k),
			QueueType:          s.QueueType,
			// Both libraries set it, on classic queues too.
			Overflow: overflowRejectPublish,
		}
		if s.QueueType == QueueTypeQuorum {
			args.DeadLetterStrategy = AtLeastOnce
		}
		top.Queues = append(top.Queues, Queue{Name: lib.level(k), Arguments: args})
	}
	for k := range libraryLevels {
		top.Bindings = append(top.Bindings,
			Binding{Source: lib.level(k), Destination: lib.level(k), DestinationType: DestinationQueue, RoutingKey: levelKey(k, digitOne)},
			Binding{Source: lib.level(k), Destination: lib.next(k), DestinationType: DestinationExchange, RoutingKey: levelKey(k, digitZero)},
		)
	}
	for _, r := range s.Routes {
		top.Bindings = append(top.Bindings, Binding{
			Source: lib.delivery, Destination: r.Destination, DestinationType: r.DestinationType,
			RoutingKey: lib.routeKey(r.Key),
		})
	}
	return top
}

// routeKey is the delivery exchange's binding key for a route: "#." and
// the key, as both libraries bind their destinations, or "#" for the
// empty key, every message.
func (lib *library) routeKey(key string) string {
	if key == "" {
		return anyWords
	}
	return anyWords + "." + key
}

// routeOf reads a delivery exchange's binding key as a route key.
func (lib *library) routeOf(bindingKey string) (string, bool) {
	if bindingKey == anyWords {
		return "", true
	}
	return strings.CutPrefix(bindingKey, anyWords+".")
}

// fixedField is a field that the layout fixes, set to another value.
type fixedField struct {
	field      string
	fixed, got string
	// why follows the layout's name in Validate's problem: what makes it fixed.
	why string
}

// fixedFields lists the fields among levels, max_delay, resolution and
// radix (in the order of Validate's problems) that are set, to another
// value than the layout fixes; zero is unset. Validate and a key format
// refuse each in their own words.
func (lib *library) fixedFields(levels int, maxDelay, resolution time.Duration, radix int) []fixedField {
	var fields []fixedField
	if levels != 0 && levels != libraryLevels {
		fields = append(fields, fixedField{"levels", strconv.Itoa(libraryLevels), strconv.Itoa(levels),
			", one level per bit of a delay in seconds"})
	}
	if maxDelay != 0 && maxDelay != lib.maxDelay() {
		fields = append(fields, fixedField{"max_delay",
			fmt.Sprintf("%s (2^%d − 1 seconds)", FormatDuration(lib.maxDelay()), libraryLevels), maxDelay.String(), ""})
	}
	if resolution != 0 && resolution != libraryResolution {
		fields = append(fields, fixedField{"resolution", libraryResolution.String(), resolution.String(),
			": " + lib.product + " counts delays in whole seconds"})
	}
	if radix != 0 && radix != DefaultRadix {
		fields = append(fields, fixedField{"radix", strconv.Itoa(DefaultRadix), strconv.Itoa(radix),
			": " + lib.product + " writes delays in binary"})
	}
	return fields
}

// fixFormat spells out the fields of f that the layout fixes, refusing the
// first one set to another value.
func (lib *library) fixFormat(f KeyFormat) (KeyFormat, *FieldError) {
	if fields := lib.fixedFields(f.Levels, 0, f.Resolution, f.Radix); len(fields) > 0 {
		return f, &FieldError{Field: fields[0].field, Route: -1, Message: fmt.Sprintf(
			"must be %s (or unset) in the %s layout, got %s", fields[0].fixed, lib.layout, fields[0].got)}
	}
	f.Levels, f.Radix, f.Resolution = libraryLevels, DefaultRadix, libraryResolution
	return f, nil
}

// checkFields checks the fields of s that the layout fixes or limits, and
// the routes.
func (lib *library) checkFields(v *specValidator, s Spec) {
	for _, f := range lib.fixedFields(s.Levels, s.MaxDelay, s.Resolution, s.Radix) {
		v.add(f.field, -1, "is fixed at %s in the %s layout%s; leave it unset, got %s", f.fixed, lib.layout, f.why, f.got)
	}

	typeKnown, strategyKnown := v.knownQueueKind(s.QueueType, s.DeadLetterStrategy)
	queueType := s.QueueType
	allowed := slices.Contains(lib.queueTypes, queueType)
	v.fixed(typeKnown && queueType != "" && !allowed, "queue_type",
		"must be %s in the %s layout: %s declares its delay queues so; got %q",
		quoteAll(lib.queueTypes), lib.layout, lib.product, queueType)
	if !allowed {
		queueType = lib.queueTypes[0] // unset, or refused above: check the strategy against the default
	}
	switch {
	case !strategyKnown || s.DeadLetterStrategy == "":
	case queueType == QueueTypeClassic && s.DeadLetterStrategy == AtLeastOnce:
		v.add("dead_letter_strategy", -1, "%q needs queue_type %q: %s declares classic queues without x-dead-letter-strategy, and they dead-letter at most once",
			AtLeastOnce, QueueTypeQuorum, lib.product)
	case queueType == QueueTypeQuorum && s.DeadLetterStrategy == AtMostOnce:
		v.add("dead_letter_strategy", -1, "must be %q in the %s layout: %s declares its quorum queues with x-dead-letter-strategy %s; got %q",
			AtLeastOnce, lib.layout, lib.product, AtLeastOnce, s.DeadLetterStrategy)
	}
	if v.leaderLocator(s.QueueLeaderLocator) && s.QueueLeaderLocator != "" {
		v.add("queue_leader_locator", -1, "must be unset in the %s layout: %s declares its queues without x-queue-leader-locator, and a queue declared with other arguments than the library's fails the library's own declaration; to spread them over a cluster, give the broker a policy with queue-leader-locator %q for them; got %q",
			lib.layout, lib.product, LeaderLocatorBalanced, s.QueueLeaderLocator)
	}
	lib.refuseGroupSize(v, s.QuorumInitialGroupSize)
	v.routes(s.Routes, lib.owns, func(route int, key string) { lib.checkRouteKey(v, route, key) })
}

// checkGeneration refuses a generation: the layout's objects have the
// names the library gives them, so no new chain can be declared beside
// them.
func (lib *library) checkGeneration(v *specValidator, s Spec) {
	if s.Generation != 0 || s.FormatGeneration != 0 {
		v.add("generation", -1, "must be 0 in the %s layout, got generation %d with the exchanges of generation %d: its objects have the names %s gives them, so a change cannot declare a new generation beside them",
			lib.layout, s.Generation, s.FormatGeneration, lib.product)
	}
}

func (lib *library) declaredByLibrary() bool { return true }

// checkRouteKey checks a route's key: a binding pattern on the delivery
// exchange, after "#.", so wildcards are allowed (a Celery queue may bind
// "tasks.#"), but empty words are not, and a message for it must fit.
func (lib *library) checkRouteKey(v *specValidator, route int, key string) {
	if problem := emptyWordProblem(key); problem != "" {
		v.add("route.key", route, "%s", problem)
	}
	// "#.#.x" routes what "#.x" does, but is not the binding a library
	// makes: kombu binds a routing key that starts with "#" as it is.
	if first, _, _ := strings.Cut(key, "."); first == anyWords {
		v.add("route.key", route, "must not start with %q in the %s layout: the route binds %q, and a library binds a key "+
			"that starts with %q as it is; give what follows it (%q binds %q), or no key for %q; got %q",
			anyWords, lib.layout, anyWords+".<key>", anyWords, "x", anyWords+".x", anyWords, key)
	}
	if problem := lib.keyLengthProblem(key); problem != "" {
		v.add("route.key", route, "%s", problem)
	}
}

// keyLengthProblem says why key leaves no room for the delay bits in a
// routing key, or "" when it fits.
func (lib *library) keyLengthProblem(key string) string {
	if longest := maxKeyLength(libraryLevels, 2); len(key) > longest {
		return fmt.Sprintf("must be at most %d bytes in the %s layout: a message's routing key is its %d delay bits, then the key, and must fit AMQP's %d bytes; got %d",
			longest, lib.layout, libraryLevels, MaxNameLength, len(key))
	}
	return ""
}

// resolve spells out what the layout fixes and the defaults of the rest.
func (lib *library) resolve(s Spec) Spec {
	s.Layout = lib.layout
	s.Levels, s.MaxDelay, s.Radix, s.Resolution = libraryLevels, 0, DefaultRadix, libraryResolution
	if s.QueueType == "" {
		s.QueueType = lib.queueTypes[0]
	}
	if s.DeadLetterStrategy == "" {
		s.DeadLetterStrategy = defaultDeadLetterStrategy(s.QueueType)
	}
	return s
}

// ticks is a delay in whole seconds, as the library's publisher counts
// it: rounded up (NServiceBus) or truncated (Celery).
func (lib *library) ticks(delay time.Duration) (uint64, *FieldError) {
	if delay < 0 {
		return 0, &FieldError{Field: "delay", Route: -1, Message: fmt.Sprintf("must not be negative, got %s", delay)}
	}
	ticks := uint64(delay / libraryResolution)
	if lib.roundUp && delay%libraryResolution != 0 {
		ticks++
	}
	if ticks > lib.maxTicks() {
		return 0, &FieldError{Field: "delay", Route: -1, Message: fmt.Sprintf(
			"%s is longer than %s, the longest delay of the %s layout (%d bits of %s)",
			delay, FormatDuration(lib.maxDelay()), lib.layout, libraryLevels, libraryResolution)}
	}
	return ticks, nil
}

// entryExchange is the level exchange the library's publisher sends a
// message delayed by delay to.
func (lib *library) entryExchange(_ Spec, delay time.Duration) (string, error) {
	ticks, err := lib.ticks(delay)
	if err != nil {
		return "", err
	}
	return lib.entry(ticks), nil
}

// ends are the top level's exchange, which reads every bit, and the
// delivery exchange; the layout has no parking lot.
func (lib *library) ends(Spec) setEnds {
	return setEnds{ingest: lib.level(libraryLevels - 1), out: lib.delivery}
}

// entry is the exchange a publisher sends a message of ticks seconds to.
func (lib *library) entry(ticks uint64) string {
	if !lib.entryAtHighestBit {
		return lib.level(libraryLevels - 1)
	}
	highest := 0
	for k := range libraryLevels {
		if ticks>>k&1 == 1 {
			highest = k
		}
	}
	return lib.level(highest)
}

// encodeKey writes the routing key of a message for key delayed by delay:
// the 28 bits, most significant first, then the key.
func (lib *library) encodeKey(f KeyFormat, key string, delay time.Duration) (string, error) {
	ticks, err := lib.ticks(delay)
	if err != nil {
		return "", err
	}
	if problem := lib.keyProblem(f, key); problem != "" {
		return "", &FieldError{Field: "key", Route: -1, Message: problem}
	}
	b := make([]byte, 0, 2*libraryLevels+len(key))
	b = appendDigits(b, ticks, libraryLevels, 2)
	b = append(b, '.')
	return string(append(b, key...)), nil
}

// keyProblem says why key cannot follow the delay bits of a message, or
// "" when it can.
func (lib *library) keyProblem(_ KeyFormat, key string) string {
	if key == "" {
		return fmt.Sprintf("must not be empty in the %s layout: the delivery exchange routes a message by the key after its delay bits", lib.layout)
	}
	return lib.keyLengthProblem(key)
}

// decodeKey splits a routing key made by encodeKey into the key and the
// delay.
func (lib *library) decodeKey(_ KeyFormat, routingKey string) (string, time.Duration, error) {
	if len(routingKey) > MaxNameLength {
		return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
			"must be at most %d bytes, got %d", MaxNameLength, len(routingKey))}
	}
	var ticks uint64
	rest := routingKey
	for position := range libraryLevels {
		word, after, found := strings.Cut(rest, ".")
		if !found {
			return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
				"has %d words; in the %s layout a routing key is %d delay bits, then the key", position+1, lib.layout, libraryLevels)}
		}
		digit, ok := digitValue(word, 2)
		if !ok {
			return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
				"word %q, bit %d from the start, must be %q or %q: in the %s layout the first %d words are the delay in binary",
				word, position+1, digitZero, digitOne, lib.layout, libraryLevels)}
		}
		ticks = ticks<<1 | uint64(digit)
		rest = after
	}
	if rest == "" {
		return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
			"has an empty key after its %d delay bits: the delivery exchange of the %s layout routes by it", libraryLevels, lib.layout)}
	}
	return rest, time.Duration(ticks) * libraryResolution, nil
}

// infer explains actual as a set name of the layout. Everything but the
// queue type (Celery's may be classic) and the routes is fixed, so any
// part of the layout, or none, gives a spec, and the Diff against its plan
// shows what is missing or declared otherwise.
func (lib *library) infer(name string, actual Topology) (Spec, []Generation, error) {
	var levelQueues []levelQueue
	seen := map[string]bool{}
	for _, q := range actual.Queues {
		if k, ok := lib.parseLevel(q.Name); ok && !seen[q.Name] {
			seen[q.Name] = true
			levelQueues = append(levelQueues, levelQueue{objectName{kind: kindLevel, radix: 2, level: k, digit: 1}, q})
		}
	}
	spec := Spec{Name: name, VHost: actual.VHost, Layout: lib.layout}
	if len(lib.queueTypes) > 1 && len(levelQueues) > 0 {
		queueType, reasons := inferQueueType(levelQueues)
		if len(reasons) > 0 {
			return Spec{}, nil, &InferError{Name: name, Reasons: reasons}
		}
		if slices.Contains(lib.queueTypes, queueType) {
			spec.QueueType = queueType
		}
	}
	var routes []Route
	for _, b := range actual.Bindings {
		key, ok := lib.routeOf(b.RoutingKey)
		if b.Source != lib.delivery || !ok {
			continue
		}
		route := Route{Destination: b.Destination, DestinationType: b.DestinationType, Key: key}.canonical()
		if !slices.Contains(routes, route) {
			routes = append(routes, route)
		}
	}
	spec.Routes = routes
	spec, err := resolveInferred(spec)
	return spec, nil, err
}

// KeepLibraryBindings adds to desired the bindings of actual that the set
// leaves to its library ([LibraryBindings]), so that the [Diff] of an
// update deletes none of them, and re-creates them after it replaces the
// delivery exchange (a deleted exchange takes its bindings along).
func KeepLibraryBindings(s Spec, desired, actual Topology) Topology {
	left := LibraryBindings(s, desired, actual)
	if len(left) == 0 {
		return desired
	}
	desired.Bindings = append(slices.Clone(desired.Bindings), left...)
	return desired
}

// WithoutLibraryBindings is actual without the bindings that the set leaves
// to its library ([LibraryBindings]): what a refresh shows of the set, so
// that they are never drift, and what a destroy (an empty desired) deletes
// one by one before the delivery exchange, whose deletion takes the rest
// along.
func WithoutLibraryBindings(s Spec, desired, actual Topology) Topology {
	left := LibraryBindings(s, desired, actual)
	if len(left) == 0 {
		return actual
	}
	leave := make(map[Binding]bool, len(left))
	for _, b := range left {
		leave[b] = true
	}
	kept := make([]Binding, 0, len(actual.Bindings)-len(left))
	for _, b := range actual.Bindings {
		if !leave[b.Canonical()] {
			kept = append(kept, b)
		}
	}
	actual.Bindings = kept
	return actual
}
