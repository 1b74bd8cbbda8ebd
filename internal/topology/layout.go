package topology

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Layouts. A set's objects and keys follow one of three layouts: the
// default one, this package's own (ingest, TTL queues by radix and
// generation, done exchanges, out, parking lot, the key before the delay
// digits: radix.go), or the delay infrastructure that one of two libraries
// declares for itself, the NServiceBus RabbitMQ transport (its "v2"
// delays) and Celery through kombu (native delayed delivery: library.go).
//
// This file says what a layout is: [setLayout], which each layout
// implements, and the one list of them. Validate, Resolve, Plan, the key
// formats, Infer and the generations ask the set's layout rather than ask
// which layout it is. A new layout is a file that implements setLayout and
// a line in layouts.

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

// setLayout is a layout: what a set's objects are called, their TTLs and
// bindings (its plan), how a routing key writes a delay, which fields of a
// spec it fixes, and how a spec is read back from the broker. Methods on a
// Spec take a resolved one unless they say otherwise; methods on a
// KeyFormat take one that checkFormat accepts.
type setLayout interface {
	// name is the layout's name; the default layout's is LayoutDefault.
	name() Layout

	// checkGeneration adds the problems of s's generation numbers, which
	// come before the vhost's in Validate's order.
	checkGeneration(v *specValidator, s Spec)
	// checkFields adds the problems of s's fields after the layout:
	// levels, max_delay, resolution, radix, queue type, strategy, routes.
	checkFields(v *specValidator, s Spec)
	// resolve spells out what a valid s leaves to the layout's defaults
	// and what the layout fixes; the routes are left as they are.
	resolve(s Spec) Spec
	// declaredByLibrary tells whether the layout's objects are a
	// library's: names fixed whatever the set's, which the library itself
	// declares and binds its destinations to at start-up. Such a set has
	// no generations: a change replaces the objects that differ.
	declaredByLibrary() bool

	// plan lists the set's exchanges, queues and bindings (see [Plan]).
	plan(s Spec) Topology
	// objectNamePattern matches the names of the objects of set name (see
	// [Layout.ObjectNamePattern]).
	objectNamePattern(name string) string
	// stageLabel names, in a reason, an object that holds or passes on
	// messages during their delay in any set of the layout, from its name
	// alone: a TTL queue, a done or level exchange, a delivery exchange.
	stageLabel(name string) (string, bool)
	// entryExchange is [Spec.EntryExchange].
	entryExchange(s Spec, delay time.Duration) (string, error)
	// ends are the objects messages enter and leave a set through.
	ends(s Spec) setEnds

	// fixFormat spells out the fields of a key format that the layout
	// fixes, refusing one set to another value.
	fixFormat(f KeyFormat) (KeyFormat, *FieldError)
	// encodeKey and decodeKey are [KeyFormat.Encode] and
	// [KeyFormat.Decode] in the layout.
	encodeKey(f KeyFormat, key string, delay time.Duration) (string, error)
	decodeKey(f KeyFormat, routingKey string) (key string, delay time.Duration, err error)
	// keyProblem says what, beyond [CheckKey]'s problems, makes key
	// unusable before or after the delay in a routing key of format f (no
	// room for the delay; in a library's layout, an empty key), or "".
	keyProblem(f KeyFormat, key string) string

	// infer is [InferLayout] in the layout.
	infer(name string, actual Topology) (Spec, []Generation, error)
	// owner is the set of the layout whose object the name object is, ""
	// for none, and whether it is a level object: a TTL queue or a done or
	// level exchange (see [Discover]).
	owner(object string) (set string, level bool)
}

// setEnds are [Spec.IngestExchange], [Spec.OutExchange] and
// [Spec.UnroutableQueue].
type setEnds struct{ ingest, out, unroutable string }

// layouts lists every layout, the default first: an unknown name is
// checked as the default, and the default's objects, named for the set,
// tell an imported set's layout before any library's.
var layouts = []setLayout{defaultLayout{}, &nserviceBusLibrary, &celeryLibrary}

// Layouts lists the allowed layouts, the default first.
var Layouts = func() []Layout {
	names := make([]Layout, len(layouts))
	for i, l := range layouts {
		names[i] = l.name()
	}
	return names
}()

// layoutNamed is the layout named l, the empty name being the default;
// for a name no layout has, the default with the problem.
func layoutNamed(l Layout) (setLayout, *FieldError) {
	if l == "" {
		return layouts[0], nil
	}
	for _, layout := range layouts {
		if layout.name() == l {
			return layout, nil
		}
	}
	return layouts[0], &FieldError{Field: "layout", Route: -1, Message: fmt.Sprintf(
		"must be one of %s, got %q", quoteAll(Layouts), l)}
}

// DeclaredByLibrary tells whether the objects of layout l are a library's:
// their names are fixed whatever the set's, so a vhost holds one set of
// the layout, and the library declares them and binds its destinations
// itself. False for a name no layout has.
func (l Layout) DeclaredByLibrary() bool {
	layout, err := layoutNamed(l)
	return err == nil && layout.declaredByLibrary()
}

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
	layout, _ := layoutNamed(l)
	return layout.objectNamePattern(name)
}

// AnyLayoutObjectNamePattern matches the names of the objects of the set
// name in every layout: the default layout's named for it and every
// library's. Reading what it matches and inferring tells an imported set's
// layout ([Infer]) in one read, before the layout is known.
func AnyLayoutObjectNamePattern(name string) string {
	alternatives := make([]string, len(layouts))
	for i, l := range layouts {
		alternatives[i] = "(" + l.objectNamePattern(name) + ")"
	}
	return strings.Join(alternatives, "|")
}

// stageLabel is the label of name in the layout whose delay stage it is
// (Diff knows no set name, nor its layout).
func stageLabel(name string) (string, bool) {
	for _, l := range layouts {
		if label, ok := l.stageLabel(name); ok {
			return label, true
		}
	}
	return "", false
}

// holds tells whether actual has an exchange or queue of the set name in
// layout l (any of a library's, whose names are the set's whatever its name).
func holds(l setLayout, name string, actual Topology) bool {
	owned := func(object string) bool {
		set, _ := l.owner(object)
		return set != "" && (set == name || l.declaredByLibrary())
	}
	return slices.ContainsFunc(actual.Exchanges, func(x Exchange) bool { return owned(x.Name) }) ||
		slices.ContainsFunc(actual.Queues, func(q Queue) bool { return owned(q.Name) })
}

// layoutHeldBy tells which layout's objects actual holds for the set name:
// the default layout's when any object is named for the set, otherwise the
// one library's whose objects are there; the default layout when none are.
func layoutHeldBy(name string, actual Topology) (Layout, error) {
	if holds(layouts[0], name, actual) {
		return "", nil
	}
	var found []Layout
	for _, l := range layouts[1:] {
		if holds(l, name, actual) {
			found = append(found, l.name())
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", &InferError{Name: name, Reasons: []string{fmt.Sprintf(
		"the objects are those of two layouts, %s; the layout to import must be named", joinValues(found))}}
}

// EntryExchange is the exchange a publisher sends a message delayed by
// delay to, in the set of the resolved spec s: the ingest exchange of the
// set's key format in the default layout, whatever the delay; in the
// nservicebus layout the level exchange of the rounded delay's highest set
// bit (nsb.v2.delay-level-00 for none), as NServiceBus publishes; in the
// celery layout the top level's, celery_delayed_27, as Celery publishes.
// Errors are a *[FieldError] about a delay a library layout cannot hold.
func (s Spec) EntryExchange(delay time.Duration) (string, error) {
	l, _ := layoutNamed(s.Layout)
	return l.entryExchange(s, delay)
}

// IngestExchange is the exchange a publisher may send a message of any
// delay to, in the set of the resolved spec s: the ingest exchange of the
// set's key format in the default layout; in a library's layout the top
// level's exchange (nsb.v2.delay-level-27, celery_delayed_27), which reads
// every bit. NServiceBus itself enters lower, at the highest set bit
// ([Spec.EntryExchange]); both are right.
func (s Spec) IngestExchange() string {
	l, _ := layoutNamed(s.Layout)
	return l.ends(s).ingest
}

// OutExchange is the exchange messages leave the set of the resolved spec s
// through, which the routes bind from: out in the default layout, the
// delivery exchange in a library's.
func (s Spec) OutExchange() string {
	l, _ := layoutNamed(s.Layout)
	return l.ends(s).out
}

// UnroutableQueue is the parking lot of the set of the resolved spec s, or
// "" in a library's layout, which has none: a malformed key is dropped.
func (s Spec) UnroutableQueue() string {
	l, _ := layoutNamed(s.Layout)
	return l.ends(s).unroutable
}

// LibraryBindings are the bindings of actual that a set of the spec s
// leaves to its library: in a library's layout, every binding from the
// delivery exchange to a destination outside the layout that desired does
// not list, each once and canonical. The libraries bind their destinations
// themselves, so deleting such a binding would drop delayed messages until
// the library binds it again (DESIGN.md, "The bindings a library makes"). The
// default layout has none.
func LibraryBindings(s Spec, desired, actual Topology) []Binding {
	l, _ := layoutNamed(s.Layout)
	if !l.declaredByLibrary() {
		return nil
	}
	delivery, listed := l.ends(s).out, indexTopology(desired).hasBinding
	var left []Binding
	seen := map[Binding]bool{}
	for _, b := range actual.Bindings {
		b = b.Canonical()
		if set, _ := l.owner(b.Destination); b.Source == delivery && set == "" && !listed[b] && !seen[b] {
			seen[b] = true
			left = append(left, b)
		}
	}
	return left
}
