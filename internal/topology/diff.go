package topology

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Diff returns the changes that turn actual into desired, in an order that
// never loses a message needlessly and never leaves a binding out: new
// objects and paths first (the ingest's bindings last), a moving binding
// deleted right after its successor is created, then deletions (a parking
// lot last, while it can still park what expires), and last the
// replacement of every object whose type or arguments differ. Equal inputs
// give equal outputs; the same objects in any order give no change. Each
// step is a method of diff; DESIGN.md ("Diff's order") lists them.
func Diff(desired, actual Topology) []Change {
	d := newDiff(desired, actual)
	d.createMissingObjects()
	d.createMissingBindings()
	d.deleteUnwantedBindings()
	d.deleteUnwantedQueues()
	d.deleteUnwantedExchanges()
	d.replace()
	return d.changes
}

// diff is one Diff under way: the two topologies indexed, the replacements
// step 7 makes, and the changes so far, in their order.
type diff struct {
	want, have topologyIndex
	wantRadix  int // the desired topology's (see unwantedReason)
	// replacements are numbered in the order step 7 performs them:
	// exchanges, then queues, each in desired's order.
	replacements                    []replacement
	replacedExchange, replacedQueue map[string]int // name → its replacement
	// parkingBindings holds back, by parking lot that goes, the deletions
	// of its bindings, for step 5 to make just before it.
	parkingBindings map[string][]Change
	changes         []Change
}

// replacement is an object whose type or arguments differ: step 7 deletes
// it, creates it again, then creates bindings.
type replacement struct {
	exchange, previousExchange *Exchange
	queue, previousQueue       *Queue
	differences                []argumentChange
	bindings                   []Binding // desired bindings to create after it
}

// route is a binding's source and key: a binding that moves keeps them.
type route struct{ source, key string }

func newDiff(desired, actual Topology) *diff {
	d := &diff{
		want: indexTopology(desired), have: indexTopology(actual),
		replacedExchange: map[string]int{}, replacedQueue: map[string]int{}, parkingBindings: map[string][]Change{},
	}
	d.wantRadix = topologyRadix(d.want)
	d.findReplacements()
	return d
}

// findReplacements lists the objects both topologies have whose type or
// arguments differ (step 7).
func (d *diff) findReplacements() {
	for _, e := range d.want.exchanges {
		if old, ok := d.have.exchangeByName[e.Name]; ok {
			if differences := exchangeDifferences(old, e); len(differences) > 0 {
				d.replacedExchange[e.Name] = len(d.replacements)
				d.replacements = append(d.replacements, replacement{exchange: &e, previousExchange: &old, differences: differences})
			}
		}
	}
	for _, q := range d.want.queues {
		if old, ok := d.have.queueByName[q.Name]; ok {
			if differences := queueDifferences(old.Arguments, q.Arguments); len(differences) > 0 {
				d.replacedQueue[q.Name] = len(d.replacements)
				d.replacements = append(d.replacements, replacement{queue: &q, previousQueue: &old, differences: differences})
			}
		}
	}
}

// lastReplaced is the replacement after which binding b can be created,
// or -1 when neither of its ends is replaced.
func (d *diff) lastReplaced(b Binding) int {
	last := -1
	if i, ok := d.replacedExchange[b.Source]; ok {
		last = i
	}
	destinations := d.replacedQueue
	if b.DestinationType == DestinationExchange {
		destinations = d.replacedExchange
	}
	if i, ok := destinations[b.Destination]; ok && i > last {
		last = i
	}
	return last
}

// createMissingObjects is steps 1 and 2: the exchanges, then the queues,
// that desired has and actual lacks.
func (d *diff) createMissingObjects() {
	for _, e := range d.want.exchanges {
		if _, ok := d.have.exchangeByName[e.Name]; !ok {
			d.changes = append(d.changes, Change{Kind: CreateExchange, Exchange: &e, Reason: missingReason(e.Name, "exchange")})
		}
	}
	for _, q := range d.want.queues {
		if _, ok := d.have.queueByName[q.Name]; !ok {
			d.changes = append(d.changes, Change{Kind: CreateQueue, Queue: &q, Reason: missingReason(q.Name, "queue")})
		}
	}
}

// createMissingBindings is step 3: the bindings actual lacks, those from
// entry exchanges last; a binding to or from a replaced object waits for
// its replacement (step 7).
func (d *diff) createMissingBindings() {
	inner := innerExchanges(d.want)
	var fromEntries []Change
	for _, b := range d.want.bindings {
		if i := d.lastReplaced(b); i >= 0 {
			d.replacements[i].bindings = append(d.replacements[i].bindings, b)
		} else if !d.have.hasBinding[b] {
			change := Change{Kind: CreateBinding, Binding: &b, Reason: "the binding is missing"}
			if inner[b.Source] {
				d.changes = append(d.changes, change)
			} else {
				change.Opens = true
				fromEntries = append(fromEntries, change)
			}
		}
	}
	d.changes = append(d.changes, fromEntries...)
}

// innerExchanges are the exchanges of t that a binding leads to, a queue
// dead-letters into or an exchange has for alternate. The others are entry
// exchanges (an ingest): their bindings come last, once every path they
// open exists downstream, so that a message a new binding lets in never
// finds a chain without its bindings.
func innerExchanges(t topologyIndex) map[string]bool {
	inner := map[string]bool{}
	for _, e := range t.exchanges {
		inner[e.Arguments.AlternateExchange] = true
	}
	for _, b := range t.bindings {
		if b.DestinationType == DestinationExchange {
			inner[b.Destination] = true
		}
	}
	for _, q := range t.queues {
		inner[q.Arguments.DeadLetterExchange] = true
	}
	return inner
}

// deleteUnwantedBindings is step 4, and the moves of step 3: each binding
// desired does not have is deleted, right after its successor when it
// moves; a parking lot's is held back for step 5.
func (d *diff) deleteUnwantedBindings() {
	successor := map[route]Binding{} // a created binding's, for the deletions that follow it
	for _, c := range d.changes {
		if c.Kind == CreateBinding {
			successor[route{c.Binding.Source, c.Binding.RoutingKey}] = *c.Binding
		}
	}
	moved := map[route][]Change{}
	for _, b := range d.have.bindings {
		if d.want.hasBinding[b] {
			continue
		}
		change := Change{Kind: DeleteBinding, Binding: &b, Reason: unwantedBindingReason(b, d.want, d.wantRadix)}
		if isParkingLotBinding(b) && d.deletedQueue(b.Destination) {
			d.parkingBindings[b.Destination] = append(d.parkingBindings[b.Destination], change)
			continue
		}
		r := route{b.Source, b.RoutingKey}
		if next, ok := successor[r]; ok {
			change.Reason = fmt.Sprintf("moves to %s %s", next.DestinationType, next.Destination)
			moved[r] = append(moved[r], change)
			continue
		}
		d.changes = append(d.changes, change)
	}
	if len(moved) > 0 {
		d.changes = followedByMoves(d.changes, moved)
	}
}

// deletedQueue tells whether actual has the queue name and desired has not.
func (d *diff) deletedQueue(name string) bool {
	_, had := d.have.queueByName[name]
	_, wanted := d.want.queueByName[name]
	return had && !wanted
}

// followedByMoves is changes with the deletions of the bindings that move,
// moved by (source, key), each right after the creation of its successor.
func followedByMoves(changes []Change, moved map[route][]Change) []Change {
	return slices.Collect(func(yield func(Change) bool) {
		for _, c := range changes {
			yield(c)
			if c.Kind == CreateBinding {
				r := route{c.Binding.Source, c.Binding.RoutingKey}
				for _, deletion := range moved[r] {
					yield(deletion)
				}
				delete(moved, r)
			}
		}
	})
}

// deleteUnwantedQueues is step 5: the queues desired does not have, each
// parking lot last, just after the deletions of its bindings.
func (d *diff) deleteUnwantedQueues() {
	var parkingLots []Change
	for _, q := range d.have.queues {
		if _, ok := d.want.queueByName[q.Name]; !ok {
			change := Change{Kind: DeleteQueue, Queue: &q, Reason: unwantedReason(q.Name, d.wantRadix)}
			if bindings, ok := d.parkingBindings[q.Name]; ok {
				parkingLots = append(parkingLots, append(bindings, change)...)
				continue
			}
			d.changes = append(d.changes, change)
		}
	}
	d.changes = append(d.changes, parkingLots...)
}

// deleteUnwantedExchanges is step 6: the exchanges desired does not have.
func (d *diff) deleteUnwantedExchanges() {
	for _, e := range d.have.exchanges {
		if _, ok := d.want.exchangeByName[e.Name]; !ok {
			d.changes = append(d.changes, Change{Kind: DeleteExchange, Exchange: &e, Reason: unwantedReason(e.Name, d.wantRadix)})
		}
	}
}

// replace is step 7: each replacement deleted, created again, and followed
// by the desired bindings that waited for it.
func (d *diff) replace() {
	for _, r := range d.replacements {
		var deleted string
		if r.exchange != nil {
			deleted = r.exchange.Name
			d.changes = append(d.changes,
				Change{Kind: DeleteExchange, Exchange: r.previousExchange, Reason: replacementReason(r.differences, "exchange")},
				Change{Kind: CreateExchange, Exchange: r.exchange, Reason: recreationReason(r.differences)})
		} else {
			deleted = r.queue.Name
			d.changes = append(d.changes,
				Change{Kind: DeleteQueue, Queue: r.previousQueue, Reason: replacementReason(r.differences, "queue")},
				Change{Kind: CreateQueue, Queue: r.queue, Reason: recreationReason(r.differences)})
		}
		for _, b := range r.bindings {
			reason := "the binding is missing"
			if d.have.hasBinding[b] {
				reason = "re-creating " + deleted + " dropped this binding"
			}
			d.changes = append(d.changes, Change{Kind: CreateBinding, Binding: &b, Reason: reason})
		}
	}
}

// isParkingLotBinding tells whether b binds a set's unroutable exchange to
// the queue of the same name.
func isParkingLotBinding(b Binding) bool {
	suffix := Names("").Unroutable()
	return b.DestinationType == DestinationQueue && b.Source == b.Destination &&
		strings.HasSuffix(b.Source, suffix) && len(b.Source) > len(suffix)
}

// topologyIndex holds a topology's objects once each, in their first order,
// with lookups by identity.
type topologyIndex struct {
	exchanges      []Exchange
	queues         []Queue
	bindings       []Binding
	exchangeByName map[string]Exchange
	queueByName    map[string]Queue
	hasBinding     map[Binding]bool
}

func indexTopology(t Topology) topologyIndex {
	index := topologyIndex{
		exchangeByName: map[string]Exchange{},
		queueByName:    map[string]Queue{},
		hasBinding:     map[Binding]bool{},
	}
	for _, e := range t.Exchanges {
		if _, seen := index.exchangeByName[e.Name]; !seen {
			index.exchangeByName[e.Name] = e
			index.exchanges = append(index.exchanges, e)
		}
	}
	for _, q := range t.Queues {
		if _, seen := index.queueByName[q.Name]; !seen {
			index.queueByName[q.Name] = q
			index.queues = append(index.queues, q)
		}
	}
	for _, b := range t.Bindings {
		b = b.Canonical()
		if !index.hasBinding[b] {
			index.hasBinding[b] = true
			index.bindings = append(index.bindings, b)
		}
	}
	return index
}

// argumentChange is one difference between an actual and a desired object,
// values already spelled for a reason.
type argumentChange struct {
	argument, from, to string
}

// absent spells an argument that is not set.
const absent = "(none)"

func stringValue(s string) string {
	if s == "" {
		return absent
	}
	return s
}

func ttlValue(ms int64) string {
	if ms == 0 {
		return absent
	}
	return strconv.FormatInt(ms, 10)
}

func exchangeDifferences(actual, desired Exchange) []argumentChange {
	var differences []argumentChange
	if actual.Type != desired.Type {
		differences = append(differences, argumentChange{"type", stringValue(actual.Type), stringValue(desired.Type)})
	}
	if actual.Arguments.AlternateExchange != desired.Arguments.AlternateExchange {
		differences = append(differences, argumentChange{ArgAlternateExchange,
			stringValue(actual.Arguments.AlternateExchange), stringValue(desired.Arguments.AlternateExchange)})
	}
	return append(differences, otherDifferences(actual.Arguments.Other, desired.Arguments.Other)...)
}

func queueDifferences(actual, desired QueueArguments) []argumentChange {
	var differences []argumentChange
	if actual.MessageTTL != desired.MessageTTL {
		differences = append(differences, argumentChange{ArgMessageTTL, ttlValue(actual.MessageTTL), ttlValue(desired.MessageTTL)})
	}
	if actual.QuorumInitialGroupSize != desired.QuorumInitialGroupSize {
		differences = append(differences, argumentChange{ArgQuorumInitialGroupSize,
			groupSizeValue(actual.QuorumInitialGroupSize), groupSizeValue(desired.QuorumInitialGroupSize)})
	}
	for _, field := range []struct{ argument, actual, desired string }{
		{ArgDeadLetterExchange, actual.DeadLetterExchange, desired.DeadLetterExchange},
		{ArgQueueType, string(actual.QueueType), string(desired.QueueType)},
		{ArgDeadLetterStrategy, string(actual.DeadLetterStrategy), string(desired.DeadLetterStrategy)},
		{ArgOverflow, actual.Overflow, desired.Overflow},
		{ArgLeaderLocator, string(actual.LeaderLocator), string(desired.LeaderLocator)},
	} {
		if field.actual != field.desired {
			differences = append(differences, argumentChange{field.argument, stringValue(field.actual), stringValue(field.desired)})
		}
	}
	return append(differences, otherDifferences(actual.Other, desired.Other)...)
}

// otherDifferences compares two maps of untyped arguments by value, a nil
// map equal to an empty one, in the order of the argument names.
func otherDifferences(actual, desired map[string]string) []argumentChange {
	var differences []argumentChange
	names := slices.Collect(maps.Keys(actual))
	for name := range desired {
		if _, ok := actual[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		from, inActual := actual[name]
		to, inDesired := desired[name]
		if inActual && inDesired && from == to {
			continue
		}
		if !inActual {
			from = absent
		}
		if !inDesired {
			to = absent
		}
		differences = append(differences, argumentChange{name, from, to})
	}
	return differences
}

// replacementReason says which arguments differ, old → new, and why that
// takes a replacement.
func replacementReason(differences []argumentChange, object string) string {
	typeChanges, argumentChanges := false, false
	parts := make([]string, len(differences))
	for i, d := range differences {
		parts[i] = d.argument + " " + d.from + " → " + d.to
		if d.argument == "type" {
			typeChanges = true
		} else {
			argumentChanges = true
		}
	}
	var cannot string
	switch {
	case typeChanges && argumentChanges:
		cannot = "exchange type and arguments cannot change in place"
	case typeChanges:
		cannot = "exchange type cannot change in place"
	default:
		cannot = object + " arguments cannot change in place"
	}
	return strings.Join(parts, ", ") + ": " + cannot
}

// recreationReason names the values the object is re-created with.
func recreationReason(differences []argumentChange) string {
	parts := make([]string, len(differences))
	for i, d := range differences {
		parts[i] = d.argument + " " + d.to
	}
	return "re-created with " + strings.Join(parts, ", ")
}

// topologyRadix is the radix of the first TTL queue of t, or 0 when it has
// none (a planned set with levels always has one).
func topologyRadix(t topologyIndex) int {
	for _, q := range t.queues {
		if o, ok := levelObject(q.Name); ok {
			return o.radix
		}
	}
	return 0
}

func missingReason(name, object string) string {
	if label, ok := stageLabel(name); ok {
		return label + " is missing"
	}
	return "the " + object + " is missing"
}

// unwantedReason says why an object goes; wantRadix is the desired
// topology's radix, which replaces every TTL queue and done exchange of
// another radix.
func unwantedReason(name string, wantRadix int) string {
	label, ok := stageLabel(name)
	if !ok {
		return "no longer part of the set"
	}
	if o, ok := levelObject(name); ok && wantRadix != 0 && o.radix != wantRadix {
		return fmt.Sprintf("%s goes: the set changes from radix %d to radix %d, which replaces its delay queues", label, o.radix, wantRadix)
	}
	return label + " is no longer in the set"
}

// unwantedBindingReason blames a level that goes away when the binding
// leads to or from it, the binding itself otherwise.
func unwantedBindingReason(b Binding, want topologyIndex, wantRadix int) string {
	for _, end := range []string{b.Destination, b.Source} {
		_, wantedQueue := want.queueByName[end]
		_, wantedExchange := want.exchangeByName[end]
		if _, ok := stageLabel(end); ok && !wantedQueue && !wantedExchange {
			return unwantedReason(end, wantRadix)
		}
	}
	return "the set has no such binding"
}
