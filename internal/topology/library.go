package topology

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Layouts. A set's objects and keys follow one of three layouts: the
// default one, this package's own (ingest, TTL queues by radix and
// generation, done exchanges, out, parking lot, the key before the delay
// digits), or the delay infrastructure that one of two libraries declares
// for itself: the NServiceBus RabbitMQ transport (its "v2" delays) and
// Celery through kombu (native delayed delivery). Those two share one
// design, and this file is the one place that knows it: 28 topic
// exchanges, one per bit of a delay in seconds, each with a quorum (or, in
// Celery, classic) TTL queue of the same name that dead-letters into the
// level below; the delay written as 28 bits before the destination; and
// exchange-to-exchange bindings that pass a message down the levels whose
// bit is 0. Their names, levels and resolution are the libraries', so that
// what a library declares at start-up matches what the set declares, byte
// for byte.

// Layout names the layout of a set's objects and keys.
type Layout string

const (
	// LayoutDefault is this package's own layout. A resolved spec spells
	// it as the empty Layout, so that a set made before layouts existed
	// resolves as it always did.
	LayoutDefault Layout = "default"
	// LayoutNServiceBus is the delay infrastructure of the NServiceBus
	// RabbitMQ transport, version 2: nsb.v2.delay-level-00 … 27 and
	// nsb.v2.delay-delivery.
	LayoutNServiceBus Layout = "nservicebus"
	// LayoutCelery is Celery's native delayed delivery, as kombu declares
	// it: celery_delayed_0 … 27 and celery_delayed_delivery.
	LayoutCelery Layout = "celery"
)

// Layouts lists the allowed layouts, the default first.
var Layouts = []Layout{LayoutDefault, LayoutNServiceBus, LayoutCelery}

// OrDefault spells the empty Layout as LayoutDefault, for showing a
// resolved spec's layout.
func (l Layout) OrDefault() Layout {
	if l == "" {
		return LayoutDefault
	}
	return l
}

// ObjectNamePattern is a regular expression that matches the names of the
// exchanges and queues of the set name in layout l, and nothing else; the
// libraries' layouts have fixed names, whatever the set's name. It suits
// the management API's use_regex filters.
func (l Layout) ObjectNamePattern(name string) string {
	if lib, ok := libraryOf(l); ok {
		return lib.objectNamePattern()
	}
	return Names(name).ObjectNamePattern()
}

// The shape every library layout shares.
const (
	// libraryLevels is the number of bits of a delay, and of levels.
	libraryLevels = 28
	// libraryResolution is the tick: delays are whole seconds.
	libraryResolution = time.Second
)

// library is the delay layout of one library.
type library struct {
	layout Layout
	// name is the library's, for messages: "NServiceBus".
	name string
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
		layout: LayoutNServiceBus, name: "NServiceBus",
		levelPrefix: "nsb.v2.delay-level-", levelWidth: 2, delivery: "nsb.v2.delay-delivery",
		queueTypes: []QueueType{QueueTypeQuorum}, roundUp: true, entryAtHighestBit: true,
	}
	celeryLibrary = library{
		layout: LayoutCelery, name: "Celery",
		levelPrefix: "celery_delayed_", levelWidth: 1, delivery: "celery_delayed_delivery",
		queueTypes: []QueueType{QueueTypeQuorum, QueueTypeClassic},
	}
)

// libraryOf is the library whose layout l is; false for the default
// layout, spelled either way, and for a value no layout has.
func libraryOf(l Layout) (*library, bool) {
	switch l {
	case LayoutNServiceBus:
		return &nserviceBusLibrary, true
	case LayoutCelery:
		return &celeryLibrary, true
	}
	return nil, false
}

// checkLayout returns the library of layout l, nil for the default layout,
// or the problem with a value no layout has.
func checkLayout(l Layout) (*library, *FieldError) {
	if lib, ok := libraryOf(l); ok {
		return lib, nil
	}
	if l != "" && l != LayoutDefault {
		return nil, &FieldError{Field: "layout", Route: -1, Message: fmt.Sprintf(
			"must be one of %s, got %q", quoteAll(Layouts), l)}
	}
	return nil, nil
}

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

// label names one of the layout's objects in a reason: "nservicebus level
// 05", "the celery delivery exchange".
func (lib *library) label(name string) string {
	if k, ok := lib.parseLevel(name); ok {
		return fmt.Sprintf("%s level %s", lib.layout, strings.TrimPrefix(lib.level(k), lib.levelPrefix))
	}
	return fmt.Sprintf("the %s delivery exchange", lib.layout)
}

// libraryObjectLabel labels name when it is an object of a library's
// layout.
func libraryObjectLabel(name string) (string, bool) {
	for _, l := range Layouts {
		if lib, ok := libraryOf(l); ok && lib.owns(name) {
			return lib.label(name), true
		}
	}
	return "", false
}

// objectNamePattern matches the layout's level and delivery names.
func (lib *library) objectNamePattern() string {
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

// validate checks the fields of s that the layout fixes or limits.
func (lib *library) validate(v *specValidator, s Spec) {
	v.fixed(s.Levels != 0 && s.Levels != libraryLevels, "levels",
		"is fixed at %d in the %s layout, one level per bit of a delay in seconds; leave it unset, got %d",
		libraryLevels, lib.layout, s.Levels)
	v.fixed(s.MaxDelay != 0 && s.MaxDelay != lib.maxDelay(), "max_delay",
		"is fixed at %s (2^%d − 1 seconds) in the %s layout; leave it unset, got %s",
		FormatDuration(lib.maxDelay()), libraryLevels, lib.layout, s.MaxDelay)
	v.fixed(s.Resolution != 0 && s.Resolution != libraryResolution, "resolution",
		"is fixed at %s in the %s layout: %s counts delays in whole seconds; leave it unset, got %s",
		libraryResolution, lib.layout, lib.name, s.Resolution)
	v.fixed(s.Radix != 0 && s.Radix != DefaultRadix, "radix",
		"is fixed at %d in the %s layout: %s writes delays in binary; leave it unset, got %d",
		DefaultRadix, lib.layout, lib.name, s.Radix)

	typeKnown, strategyKnown := v.knownQueueKind(s.QueueType, s.DeadLetterStrategy)
	queueType := s.QueueType
	allowed := slices.Contains(lib.queueTypes, queueType)
	v.fixed(typeKnown && queueType != "" && !allowed, "queue_type",
		"must be %s in the %s layout: %s declares its delay queues so; got %q",
		quoteAll(lib.queueTypes), lib.layout, lib.name, queueType)
	if !allowed {
		queueType = lib.queueTypes[0] // unset, or refused above: check the strategy against the default
	}
	switch {
	case !strategyKnown || s.DeadLetterStrategy == "":
	case queueType == QueueTypeClassic && s.DeadLetterStrategy == AtLeastOnce:
		v.add("dead_letter_strategy", -1, "%q needs queue_type %q: %s declares classic queues without x-dead-letter-strategy, and they dead-letter at most once",
			AtLeastOnce, QueueTypeQuorum, lib.name)
	case queueType == QueueTypeQuorum && s.DeadLetterStrategy == AtMostOnce:
		v.add("dead_letter_strategy", -1, "must be %q in the %s layout: %s declares its quorum queues with x-dead-letter-strategy %s; got %q",
			AtLeastOnce, lib.layout, lib.name, AtLeastOnce, s.DeadLetterStrategy)
	}
}

// validateGeneration refuses a generation: the layout's objects have the
// names the library gives them, so no new chain can be declared beside
// them.
func (lib *library) validateGeneration(v *specValidator, generation, format int) {
	if generation != 0 || format != 0 {
		v.add("generation", -1, "must be 0 in the %s layout, got generation %d with the exchanges of generation %d: its objects have the names %s gives them, so a change cannot declare a new generation beside them",
			lib.layout, generation, format, lib.name)
	}
}

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

// encode writes the routing key of a message for key delayed by delay:
// the 28 bits, most significant first, then the key.
func (lib *library) encode(key string, delay time.Duration) (string, error) {
	ticks, err := lib.ticks(delay)
	if err != nil {
		return "", err
	}
	if problem := lib.messageKeyProblem(key); problem != "" {
		return "", &FieldError{Field: "key", Route: -1, Message: problem}
	}
	b := make([]byte, 0, 2*libraryLevels+len(key))
	b = appendDigits(b, ticks, libraryLevels, 2)
	b = append(b, '.')
	return string(append(b, key...)), nil
}

// messageKeyProblem says why key cannot follow the delay bits of a
// message, or "" when it can.
func (lib *library) messageKeyProblem(key string) string {
	if key == "" {
		return fmt.Sprintf("must not be empty in the %s layout: the delivery exchange routes a message by the key after its delay bits", lib.layout)
	}
	return lib.keyLengthProblem(key)
}

// decode splits a routing key made by encode into the key and the delay.
func (lib *library) decode(routingKey string) (string, time.Duration, error) {
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
func (lib *library) infer(name string, actual Topology) (Spec, error) {
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
			return Spec{}, &InferError{Name: name, Reasons: reasons}
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
		route := Route{Destination: b.Destination, DestinationType: b.DestinationType, Key: key}
		if route.DestinationType == "" {
			route.DestinationType = DestinationQueue
		}
		if !slices.Contains(routes, route) {
			routes = append(routes, route)
		}
	}
	spec.Routes = routes
	return resolveInferred(spec)
}

// holds tells whether actual has any exchange or queue of the layout.
func (lib *library) holds(actual Topology) bool {
	for _, e := range actual.Exchanges {
		if lib.owns(e.Name) {
			return true
		}
	}
	for _, q := range actual.Queues {
		if lib.owns(q.Name) {
			return true
		}
	}
	return false
}

// LibraryBindings are the bindings of actual that a set of the spec s
// leaves to its library: in a library's layout, every binding from the
// delivery exchange to a destination outside the layout that desired does
// not list. The libraries bind destinations from the delivery exchange
// themselves — NServiceBus before every delayed send, a Celery worker its
// task queues at start-up — so such a binding is one a library may rely on,
// and deleting it would drop the delayed messages on their way to that
// destination until the library binds it again. Nothing on the broker tells
// a library's binding from one a removed route left, which is the same
// binding when the library binds that destination too: both are left. A
// binding from the delivery exchange back into the layout's own objects is
// no library's (they bind only their destinations, and it would loop), and
// stays drift. The default layout has none: its out exchange's bindings are
// the set's alone. Each binding is listed once, with its destination type
// spelled out.
func LibraryBindings(s Spec, desired, actual Topology) []Binding {
	lib, ok := libraryOf(s.Layout)
	if !ok {
		return nil
	}
	listed := indexTopology(desired).hasBinding
	var left []Binding
	seen := map[Binding]bool{}
	for _, b := range actual.Bindings {
		b = canonicalBinding(b)
		if b.Source == lib.delivery && !lib.owns(b.Destination) && !listed[b] && !seen[b] {
			seen[b] = true
			left = append(left, b)
		}
	}
	return left
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
		if !leave[canonicalBinding(b)] {
			kept = append(kept, b)
		}
	}
	actual.Bindings = kept
	return actual
}

// EntryExchange is the exchange a publisher sends a message delayed by
// delay to, in the set of the resolved spec s: the ingest exchange of the
// set's key format in the default layout, whatever the delay; in the
// nservicebus layout the level exchange of the rounded delay's highest set
// bit (nsb.v2.delay-level-00 for none), as NServiceBus publishes; in the
// celery layout the top level's, celery_delayed_27, as Celery publishes.
// Errors are a *[FieldError] about a delay a library layout cannot hold.
func (s Spec) EntryExchange(delay time.Duration) (string, error) {
	lib, ok := libraryOf(s.Layout)
	if !ok {
		return Names(s.Name).Generation(s.FormatGeneration).Ingest(), nil
	}
	ticks, err := lib.ticks(delay)
	if err != nil {
		return "", err
	}
	return lib.entry(ticks), nil
}

// IngestExchange is the exchange a publisher may send a message of any
// delay to, in the set of the resolved spec s: the ingest exchange of the
// set's key format in the default layout; in a library's layout the top
// level's exchange (nsb.v2.delay-level-27, celery_delayed_27), which reads
// every bit. NServiceBus itself enters lower, at the highest set bit
// ([Spec.EntryExchange]); both are right.
func (s Spec) IngestExchange() string {
	if lib, ok := libraryOf(s.Layout); ok {
		return lib.level(libraryLevels - 1)
	}
	return Names(s.Name).Generation(s.FormatGeneration).Ingest()
}

// OutExchange is the exchange messages leave the set of the resolved spec s
// through, which the routes bind from: out in the default layout, the
// delivery exchange in a library's.
func (s Spec) OutExchange() string {
	if lib, ok := libraryOf(s.Layout); ok {
		return lib.delivery
	}
	return Names(s.Name).Generation(s.FormatGeneration).Out()
}

// UnroutableQueue is the parking lot of the set of the resolved spec s, or
// "" in a library's layout, which has none: a malformed key is dropped.
func (s Spec) UnroutableQueue() string {
	if _, ok := libraryOf(s.Layout); ok {
		return ""
	}
	return Names(s.Name).Unroutable()
}

// AnyLayoutObjectNamePattern matches the names of the objects of the set
// name in every layout: the default layout's named for it and every
// library's. Reading what it matches and inferring tells an imported set's
// layout ([Infer]) in one read, before the layout is known.
func AnyLayoutObjectNamePattern(name string) string {
	alternatives := make([]string, len(Layouts))
	for i, l := range Layouts {
		alternatives[i] = "(" + l.ObjectNamePattern(name) + ")"
	}
	return strings.Join(alternatives, "|")
}
