package brokertest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// DefaultNode is the node that leads every queue whose placement a test
// did not set (SetPlacement): a single node's name, as a local broker's.
const DefaultNode = "rabbit@localhost"

// The names of Broker's methods, as Call.Method records them.
const (
	MethodReadSetOf          = "ReadSetOf"
	MethodReadSetOfAnyLayout = "ReadSetOfAnyLayout"
	MethodReadSetNamed       = "ReadSetNamed"
	MethodApply              = "Apply"
	MethodHeldMessages       = "HeldMessages"
	MethodCountedMessages    = "CountedMessages"
	MethodReadPlacements     = "ReadPlacements"
	MethodPlacements         = "Placements"
	MethodVHostPolicies      = "VHostPolicies"
)

// Call is one call of a Broker's method, as the test asserts on it. Only
// the fields the method takes are set.
type Call struct {
	Method string // one of the Method… constants
	VHost  string
	// Set and Layout: the reads' set name and layout.
	Set    string
	Layout topology.Layout
	// Known is the topology ReadSetNamed was given.
	Known topology.Topology
	// Queues: the queues HeldMessages, CountedMessages, ReadPlacements and
	// Placements were asked about, as given.
	Queues []string
	// Changes and Options: what Apply was given.
	Changes []topology.Change
	Options broker.ApplyOptions
}

// Messages scripts what the checks of one queue find, call after call:
// the i-th answer of a sequence is that of the i-th check of the queue,
// and its last answer that of every check after it; an empty sequence
// answers 0. Counted and Held are apart because the broker's statistics
// lag behind what an exact check sees.
type Messages struct {
	// Counted is what the statistics count: each CountedMessages call that
	// names the queue takes the next answer.
	Counted []int64
	// Held is what an exact check finds: each HeldMessages call that names
	// the queue, and each check Apply makes before deleting it (without
	// ForceDeleteQueues), takes the next answer.
	Held []int64
	// Uncounted, when not empty, makes the exact checks unable to count the
	// queue, as the client cannot count a quorum queue it may not peek at
	// and has no trusted statistics of: HeldMessages counts it as holding
	// one message and returns a *broker.UncountedError with this reason
	// beside the counts, and Apply refuses to delete it with that error.
	Uncounted string
	// UncountedByStatistics is Uncounted for CountedMessages: the broker
	// gives no statistics of the queue (none collected, or a node that does
	// not lead it answers).
	UncountedByStatistics string
}

// script is a queue's Messages and how many answers each sequence gave.
type script struct {
	Messages
	counted, held int
}

// next is the answer of a sequence at its i-th call: the last one past its
// end, 0 for an empty one.
func next(answers []int64, i *int) int64 {
	if len(answers) == 0 {
		return 0
	}
	answer := answers[min(*i, len(answers)-1)]
	*i++
	return answer
}

// vhostQueue names a queue of a vhost.
type vhostQueue struct{ vhost, queue string }

// Broker is an in-memory broker with the methods of *broker.Client that a
// set needs, for unit tests of the code that uses the client. The zero
// value is not ready: use New. It is safe for concurrent use.
//
// It differs from a broker on purpose where the difference serves tests:
// messages are not routed, they are what the test scripts for each queue
// (Script), and a queue's script ends with the queue's deletion.
type Broker struct {
	// Version is the broker's RabbitMQ version, which *broker.UncountedError
	// names; New sets "4.0.5".
	Version string

	mu         sync.Mutex
	vhosts     map[string]*topology.Topology
	scripts    map[vhostQueue]*script
	placements map[vhostQueue]broker.Placement
	seen       map[vhostQueue]broker.Placement // as the last read of a set found them
	policies   map[string]policies
	errs       map[string]error
	calls      []Call
	before     func(Call)
}

// New is a Broker with the vhosts given, empty.
func New(vhosts ...string) *Broker {
	b := &Broker{
		Version: "4.0.5",
		vhosts:  map[string]*topology.Topology{}, scripts: map[vhostQueue]*script{},
		placements: map[vhostQueue]broker.Placement{}, seen: map[vhostQueue]broker.Placement{},
		errs: map[string]error{}, policies: map[string]policies{},
	}
	for _, v := range vhosts {
		b.vhosts[v] = &topology.Topology{VHost: v}
	}
	return b
}

// AddVHost adds an empty vhost, unless it exists.
func (b *Broker) AddVHost(vhost string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.vhost(vhost, true)
}

// DeleteVHost deletes a vhost with everything in it.
func (b *Broker) DeleteVHost(vhost string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.vhosts, vhost)
	for key := range b.scripts {
		if key.vhost == vhost {
			delete(b.scripts, key)
		}
	}
}

// Declare adds the objects of t to its vhost (t.VHost), which it creates
// if need be, without recording a call: the broker's state before the
// test. An object of the same name (a binding equal) is replaced.
func (b *Broker) Declare(t topology.Topology) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.vhost(t.VHost, true)
	for _, e := range t.Exchanges {
		removeExchange(v, e.Name, false)
		v.Exchanges = append(v.Exchanges, cloneExchange(e))
	}
	for _, q := range t.Queues {
		removeQueue(v, q.Name, false)
		v.Queues = append(v.Queues, cloneQueue(q))
	}
	for _, binding := range t.Bindings {
		if !slices.ContainsFunc(v.Bindings, sameBinding(binding)) {
			v.Bindings = append(v.Bindings, binding)
		}
	}
}

// Topology is everything vhost holds now, sorted as a read sorts it, and
// whether the vhost exists.
func (b *Broker) Topology(vhost string) (topology.Topology, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.vhost(vhost, false)
	if v == nil {
		return topology.Topology{}, false
	}
	return sorted(*v, func(string) bool { return true }), true
}

// SetMessages makes the statistics and the exact checks of a queue both
// count n, from now on.
func (b *Broker) SetMessages(vhost, queue string, n int64) {
	b.Script(vhost, queue, Messages{Counted: []int64{n}, Held: []int64{n}})
}

// Script sets what the checks of a queue find from now on (see Messages),
// replacing what was scripted before. The queue need not exist yet; its
// deletion ends the script.
func (b *Broker) Script(vhost, queue string, m Messages) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m.Counted, m.Held = slices.Clone(m.Counted), slices.Clone(m.Held)
	b.scripts[vhostQueue{vhost, queue}] = &script{Messages: m}
}

// SetPlacement sets where a queue runs, as ReadPlacements and the reads
// of sets find it. Without it a queue runs on DefaultNode, a quorum
// queue's only member.
func (b *Broker) SetPlacement(vhost, queue string, p broker.Placement) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.placements[vhostQueue{vhost, queue}] = p
}

// policies are what VHostPolicies answers for a vhost.
type policies struct {
	broker.VHostPolicies
	unreadable bool
}

// SetPolicies sets the policies and operator policies of a vhost, as
// VHostPolicies reads them; readable false makes them unreadable, as to a
// user who may not read them. A vhost without has none, readable.
func (b *Broker) SetPolicies(vhost string, p broker.VHostPolicies, readable bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.policies[vhost] = policies{VHostPolicies: p, unreadable: !readable}
}

// VHostPolicies answers the policies SetPolicies set for vhost, as
// (*broker.Client).VHostPolicies reads them: ok is false where they are
// unreadable.
func (b *Broker) VHostPolicies(_ context.Context, vhost string) (broker.VHostPolicies, bool, error) {
	err := b.record(Call{Method: MethodVHostPolicies, VHost: vhost})
	defer b.mu.Unlock()
	if err != nil {
		return broker.VHostPolicies{}, false, err
	}
	p := b.policies[vhost]
	if p.unreadable {
		return broker.VHostPolicies{}, false, nil
	}
	return p.VHostPolicies, true, nil
}

// SetError makes every call of method (a Method… constant) fail with err
// from now on, without doing anything; a nil err undoes it. Placements,
// which returns no error, ignores it.
func (b *Broker) SetError(method string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		delete(b.errs, method)
	} else {
		b.errs[method] = err
	}
}

// BeforeCall has f called with each call, once it is recorded and before
// the broker answers it, outside the broker's lock: f may change the
// broker (Script, Declare), as messages or another client would meanwhile.
func (b *Broker) BeforeCall(f func(Call)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.before = f
}

// Calls are the calls made so far, in order.
func (b *Broker) Calls() []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// CallsOf are the calls of one method (a Method… constant) made so far,
// in order.
func (b *Broker) CallsOf(method string) []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	var calls []Call
	for _, c := range b.calls {
		if c.Method == method {
			calls = append(calls, c)
		}
	}
	return calls
}

// ResetCalls forgets the calls made so far.
func (b *Broker) ResetCalls() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = nil
}

// record records c, runs the BeforeCall function, and then holds the
// broker's lock, which the caller releases; it returns the error SetError
// set for c's method.
func (b *Broker) record(c Call) error {
	c.Queues = slices.Clone(c.Queues)
	c.Changes = slices.Clone(c.Changes)
	b.mu.Lock()
	b.calls = append(b.calls, c)
	before := b.before
	b.mu.Unlock()
	if before != nil {
		before(c)
	}
	b.mu.Lock()
	return b.errs[c.Method]
}

// vhost is the topology of a vhost; nil when it does not exist, unless
// create.
func (b *Broker) vhost(name string, create bool) *topology.Topology {
	v := b.vhosts[name]
	if v == nil && create {
		v = &topology.Topology{VHost: name}
		b.vhosts[name] = v
	}
	return v
}

// ReadSetOf reads the objects of vhost that layout.ObjectNamePattern(name)
// matches, and the bindings whose source is one of those exchanges, as
// (*broker.Client).ReadSetOf does.
func (b *Broker) ReadSetOf(_ context.Context, vhost, name string, layout topology.Layout) (topology.Topology, error) {
	err := b.record(Call{Method: MethodReadSetOf, VHost: vhost, Set: name, Layout: layout})
	defer b.mu.Unlock()
	if err != nil {
		return topology.Topology{}, err
	}
	return b.readMatching(vhost, layout.ObjectNamePattern(name))
}

// ReadSetOfAnyLayout reads the objects of the set name in every layout
// (topology.AnyLayoutObjectNamePattern), as (*broker.Client).ReadSetOfAnyLayout does.
func (b *Broker) ReadSetOfAnyLayout(_ context.Context, vhost, name string) (topology.Topology, error) {
	err := b.record(Call{Method: MethodReadSetOfAnyLayout, VHost: vhost, Set: name})
	defer b.mu.Unlock()
	if err != nil {
		return topology.Topology{}, err
	}
	return b.readMatching(vhost, topology.AnyLayoutObjectNamePattern(name))
}

// readMatching is a read of the objects of vhost whose names match pattern.
func (b *Broker) readMatching(vhost, pattern string) (topology.Topology, error) {
	ofSet, err := regexp.Compile(pattern)
	if err != nil {
		return topology.Topology{}, fmt.Errorf("invalid name pattern %q: %w", pattern, err)
	}
	v := b.vhost(vhost, false)
	if v == nil {
		return topology.Topology{}, fmt.Errorf("listing queues: %w: %q", broker.ErrVHostNotFound, vhost)
	}
	return b.found(sorted(*v, ofSet.MatchString)), nil
}

// ReadSetNamed reads, as (*broker.Client).ReadSetNamed does, the objects
// known names, then round after round those named like the set
// (layout.ObjectNamePattern) that what it found refers to: a binding's
// destination, an exchange's alternate exchange, a queue's dead-letter
// exchange; with the bindings whose source is one of the exchanges found.
// An object of the set that nothing found refers to is not read. opts
// change nothing here.
func (b *Broker) ReadSetNamed(_ context.Context, vhost, name string, layout topology.Layout, known topology.Topology, opts broker.ReadOptions) (topology.Topology, error) {
	_ = opts
	err := b.record(Call{Method: MethodReadSetNamed, VHost: vhost, Set: name, Layout: layout, Known: known})
	defer b.mu.Unlock()
	if err != nil {
		return topology.Topology{}, err
	}
	ofSet, err := regexp.Compile(layout.ObjectNamePattern(name))
	if err != nil {
		return topology.Topology{}, fmt.Errorf("reading set %q: invalid name pattern: %w", name, err)
	}
	if len(known.Exchanges)+len(known.Queues) == 0 {
		return topology.Topology{VHost: vhost}, nil
	}
	v := b.vhost(vhost, false)
	if v == nil {
		return topology.Topology{}, fmt.Errorf("reading set %q: %w: %q", name, broker.ErrVHostNotFound, vhost)
	}
	read := map[string]bool{} // "e:" or "q:" and a name
	var pending []string
	add := func(kind, name string, ofSetOnly bool) {
		if key := kind + ":" + name; name != "" && !read[key] && (!ofSetOnly || ofSet.MatchString(name)) {
			read[key] = true
			pending = append(pending, key)
		}
	}
	for _, e := range known.Exchanges {
		add("e", e.Name, false)
	}
	for _, q := range known.Queues {
		add("q", q.Name, false)
	}
	found := map[string]bool{}
	for len(pending) > 0 {
		key := pending[0]
		pending = pending[1:]
		kind, objectName, _ := strings.Cut(key, ":")
		if kind == "q" {
			if i := slices.IndexFunc(v.Queues, func(q topology.Queue) bool { return q.Name == objectName }); i >= 0 {
				found[key] = true
				add("e", v.Queues[i].Arguments.DeadLetterExchange, true)
			}
			continue
		}
		i := slices.IndexFunc(v.Exchanges, func(e topology.Exchange) bool { return e.Name == objectName })
		if i < 0 {
			continue
		}
		found[key] = true
		add("e", v.Exchanges[i].Arguments.AlternateExchange, true)
		for _, binding := range v.Bindings {
			if binding.Source != objectName {
				continue
			}
			if binding.DestinationType == topology.DestinationExchange {
				add("e", binding.Destination, true)
			} else {
				add("q", binding.Destination, true)
			}
		}
	}
	t := sorted(*v, func(string) bool { return false })
	for _, e := range v.Exchanges {
		if found["e:"+e.Name] {
			t.Exchanges = append(t.Exchanges, cloneExchange(e))
		}
	}
	for _, q := range v.Queues {
		if found["q:"+q.Name] {
			t.Queues = append(t.Queues, cloneQueue(q))
		}
	}
	for _, binding := range v.Bindings {
		if found["e:"+binding.Source] {
			t.Bindings = append(t.Bindings, binding)
		}
	}
	return b.found(sorted(t, func(string) bool { return true })), nil
}

// found notes where the queues of what a read found run, for Placements,
// and returns it.
func (b *Broker) found(t topology.Topology) topology.Topology {
	for _, q := range t.Queues {
		b.seen[vhostQueue{t.VHost, q.Name}] = b.placementOf(t.VHost, q)
	}
	return t
}

// placementOf is where a queue runs: as SetPlacement set, else on
// DefaultNode.
func (b *Broker) placementOf(vhost string, q topology.Queue) broker.Placement {
	if p, ok := b.placements[vhostQueue{vhost, q.Name}]; ok {
		return broker.Placement{Leader: p.Leader, Members: slices.Clone(p.Members), Online: slices.Clone(p.Online)}
	}
	p := broker.Placement{Leader: DefaultNode}
	if q.Arguments.QueueType == topology.QueueTypeQuorum {
		p.Members, p.Online = []string{DefaultNode}, []string{DefaultNode}
	}
	return p
}

// Placements says where each named queue of vhost was when a read of a
// set last found it, as (*broker.Client).Placements does: a queue no read
// found is absent.
func (b *Broker) Placements(vhost string, queues []string) map[string]broker.Placement {
	_ = b.record(Call{Method: MethodPlacements, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	found := make(map[string]broker.Placement, len(queues))
	for _, queue := range queues {
		if p, ok := b.seen[vhostQueue{vhost, queue}]; ok {
			found[queue] = p
		}
	}
	return found
}

// ReadPlacements says where each named queue of vhost that exists runs
// now, as (*broker.Client).ReadPlacements does: a queue that does not
// exist, or whose vhost does not, is absent.
func (b *Broker) ReadPlacements(_ context.Context, vhost string, queues []string) (map[string]broker.Placement, error) {
	err := b.record(Call{Method: MethodReadPlacements, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	found := make(map[string]broker.Placement, len(queues))
	if v := b.vhost(vhost, false); v != nil {
		for _, name := range queues {
			if q, ok := queueNamed(v, name); ok {
				found[name] = b.placementOf(vhost, q)
			}
		}
	}
	return found, nil
}

// HeldMessages answers, as (*broker.Client).HeldMessages does, the queues
// that hold messages by the exact checks' script (Messages.Held), each
// named queue that exists taking its next answer: only those holding
// something are in the map. An uncounted queue (Messages.Uncounted)
// counts as holding one message, and its *broker.UncountedError comes
// back beside the counts, joined with the others' (broker.IsUncounted
// holds). A vhost that does not exist is broker.ErrVHostNotFound.
func (b *Broker) HeldMessages(_ context.Context, vhost string, queues []string) (map[string]int64, error) {
	err := b.record(Call{Method: MethodHeldMessages, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return b.count(vhost, queues, func(s *script) (int64, string) { return next(s.Held, &s.held), s.Uncounted })
}

// CountedMessages is HeldMessages by the statistics' script
// (Messages.Counted, Messages.UncountedByStatistics), as
// (*broker.Client).CountedMessages counts by the statistics.
func (b *Broker) CountedMessages(_ context.Context, vhost string, queues []string) (map[string]int64, error) {
	err := b.record(Call{Method: MethodCountedMessages, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return b.count(vhost, queues, func(s *script) (int64, string) {
		return next(s.Counted, &s.counted), s.UncountedByStatistics
	})
}

// count counts each named queue of vhost that exists once, sorted, by
// answer: its count, or why it is uncounted.
func (b *Broker) count(vhost string, queues []string, answer func(*script) (int64, string)) (map[string]int64, error) {
	names := slices.Compact(slices.Sorted(slices.Values(queues)))
	v := b.vhost(vhost, false)
	if v == nil && len(names) > 0 {
		return nil, fmt.Errorf("reading queues: %w: %q", broker.ErrVHostNotFound, vhost)
	}
	held := map[string]int64{}
	var uncounted []error
	for _, name := range names {
		if _, ok := queueNamed(v, name); !ok {
			continue
		}
		n, reason := answer(b.script(vhost, name))
		if reason != "" {
			uncounted = append(uncounted, b.uncounted(vhost, name, reason))
			n = 1
		}
		if n > 0 {
			held[name] = n
		}
	}
	return held, errors.Join(uncounted...)
}

// script is the script of a queue, an empty one if none was set.
func (b *Broker) script(vhost, queue string) *script {
	key := vhostQueue{vhost, queue}
	if b.scripts[key] == nil {
		b.scripts[key] = &script{}
	}
	return b.scripts[key]
}

func (b *Broker) uncounted(vhost, queue, reason string) *broker.UncountedError {
	return &broker.UncountedError{VHost: vhost, Queue: queue, Version: b.Version, Reason: reason}
}

// Apply makes changes in vhost, in order, as (*broker.Client).Apply does:
// it runs the changes in batches of consecutive changes of the same kind
// (and Opens), each change of a batch made whatever became of the others,
// and after a batch with failures it stops, and returns each failure, in
// change order, as a *broker.ChangeError. Without opts.ForceDeleteQueues
// the deletion of a queue that holds messages by its exact check's next
// answer (Messages.Held) fails with a *broker.QueueNotEmptyError, and that
// of an uncounted one (Messages.Uncounted) with its
// *broker.UncountedError; the queue stays. Declaring what exists with the
// same arguments changes nothing, with other ones fails as the broker
// does (400, inequivalent arg); a binding needs both its ends; deleting
// what is gone succeeds. Deleting a queue or exchange deletes the bindings
// into (and from) it, and ends a queue's script. In a vhost that does not
// exist every declaration fails with broker.ErrVHostNotFound.
func (b *Broker) Apply(_ context.Context, vhost string, changes []topology.Change, opts broker.ApplyOptions) error {
	err := b.record(Call{Method: MethodApply, VHost: vhost, Changes: changes, Options: opts})
	defer b.mu.Unlock()
	if err != nil {
		return err
	}
	for start := 0; start < len(changes); {
		end := start + 1
		for end < len(changes) && changes[end].Kind == changes[start].Kind && changes[end].Opens == changes[start].Opens {
			end++
		}
		var failures []error
		for _, change := range changes[start:end] {
			if err := b.applyChange(vhost, change, opts.ForceDeleteQueues); err != nil {
				failures = append(failures, &broker.ChangeError{Change: change, Err: err})
			}
		}
		if len(failures) > 0 {
			return errors.Join(failures...)
		}
		start = end
	}
	return nil
}

// applyChange makes one change.
func (b *Broker) applyChange(vhost string, c topology.Change, force bool) error {
	v := b.vhost(vhost, false)
	deletion := c.Kind == topology.DeleteExchange || c.Kind == topology.DeleteQueue || c.Kind == topology.DeleteBinding
	switch {
	case v == nil && deletion:
		return nil // the broker answers 404, which a deletion takes for gone
	case v == nil:
		return fmt.Errorf("%w: %q", broker.ErrVHostNotFound, vhost)
	case c.Kind == topology.CreateExchange && c.Exchange != nil:
		return declare(&v.Exchanges, cloneExchange(*c.Exchange), func(e topology.Exchange) string { return e.Name }, sameExchange, vhost)
	case c.Kind == topology.CreateQueue && c.Queue != nil:
		return declare(&v.Queues, cloneQueue(*c.Queue), func(q topology.Queue) string { return q.Name }, sameQueue, vhost)
	case c.Kind == topology.CreateBinding && c.Binding != nil:
		return bind(v, *c.Binding)
	case c.Kind == topology.DeleteBinding && c.Binding != nil:
		v.Bindings = slices.DeleteFunc(v.Bindings, sameBinding(*c.Binding))
		return nil
	case c.Kind == topology.DeleteQueue && c.Queue != nil:
		return b.deleteQueue(v, c.Queue.Name, force)
	case c.Kind == topology.DeleteExchange && c.Exchange != nil:
		removeExchange(v, c.Exchange.Name, true)
		return nil
	}
	return fmt.Errorf("a %s change without its object", c.Kind)
}

// deleteQueue deletes a queue, unless it holds messages by its exact check
// and force is false.
func (b *Broker) deleteQueue(v *topology.Topology, name string, force bool) error {
	if _, ok := queueNamed(v, name); !ok {
		return nil
	}
	if !force {
		s := b.script(v.VHost, name)
		held := next(s.Held, &s.held)
		switch {
		case s.Uncounted != "":
			return b.uncounted(v.VHost, name, s.Uncounted)
		case held > 0:
			return &broker.QueueNotEmptyError{Queue: name, Messages: held}
		}
	}
	removeQueue(v, name, true)
	delete(b.scripts, vhostQueue{v.VHost, name})
	return nil
}

// declare adds object to objects unless one of its name exists: the same
// (equal) changes nothing, another fails as the broker refuses it.
func declare[T any](objects *[]T, object T, name func(T) string, equal func(a, b T) bool, vhost string) error {
	i := slices.IndexFunc(*objects, func(o T) bool { return name(o) == name(object) })
	switch {
	case i < 0:
		*objects = append(*objects, object)
		return nil
	case equal((*objects)[i], object):
		return nil
	}
	return &broker.APIError{Method: http.MethodPut, Path: "/api/…/" + vhost + "/" + name(object),
		StatusCode: http.StatusBadRequest, Code: "bad_request",
		Reason: "inequivalent arg: " + name(object) + " exists with other arguments"}
}

// bind adds a binding whose ends exist.
func bind(v *topology.Topology, binding topology.Binding) error {
	sourceFound := hasExchange(v, binding.Source)
	destinationFound := false
	if binding.DestinationType == topology.DestinationExchange {
		destinationFound = hasExchange(v, binding.Destination)
	} else {
		_, destinationFound = queueNamed(v, binding.Destination)
	}
	if !sourceFound || !destinationFound {
		return &broker.APIError{Method: http.MethodPost, Path: "/api/bindings/" + v.VHost,
			StatusCode: http.StatusNotFound, Code: "Object Not Found", Reason: "Not Found"}
	}
	if !slices.ContainsFunc(v.Bindings, sameBinding(binding)) {
		v.Bindings = append(v.Bindings, binding)
	}
	return nil
}

func hasExchange(v *topology.Topology, name string) bool {
	return slices.ContainsFunc(v.Exchanges, func(e topology.Exchange) bool { return e.Name == name })
}

func queueNamed(v *topology.Topology, name string) (topology.Queue, bool) {
	if v == nil {
		return topology.Queue{}, false
	}
	i := slices.IndexFunc(v.Queues, func(q topology.Queue) bool { return q.Name == name })
	if i < 0 {
		return topology.Queue{}, false
	}
	return v.Queues[i], true
}

// removeExchange removes an exchange and, with its bindings, those from it
// and into it.
func removeExchange(v *topology.Topology, name string, withBindings bool) {
	v.Exchanges = slices.DeleteFunc(v.Exchanges, func(e topology.Exchange) bool { return e.Name == name })
	if withBindings {
		v.Bindings = slices.DeleteFunc(v.Bindings, func(b topology.Binding) bool {
			return b.Source == name || b.DestinationType == topology.DestinationExchange && b.Destination == name
		})
	}
}

// removeQueue removes a queue and, with its bindings, those into it.
func removeQueue(v *topology.Topology, name string, withBindings bool) {
	v.Queues = slices.DeleteFunc(v.Queues, func(q topology.Queue) bool { return q.Name == name })
	if withBindings {
		v.Bindings = slices.DeleteFunc(v.Bindings, func(b topology.Binding) bool {
			return b.DestinationType != topology.DestinationExchange && b.Destination == name
		})
	}
}

// sameBinding matches the bindings equal to b, an unset destination type
// read as queue.
func sameBinding(b topology.Binding) func(topology.Binding) bool {
	return func(o topology.Binding) bool { return compareBindings(o, b) == 0 }
}

// sameExchange and sameQueue tell whether a declaration of b changes
// nothing of a, as the broker takes it: the same type and arguments.
func sameExchange(a, b topology.Exchange) bool {
	return a.Type == b.Type && a.Arguments.AlternateExchange == b.Arguments.AlternateExchange &&
		maps.Equal(a.Arguments.Other, b.Arguments.Other)
}

func sameQueue(a, b topology.Queue) bool {
	x, y := a.Arguments, b.Arguments
	same := maps.Equal(x.Other, y.Other)
	x.Other, y.Other = nil, nil
	return same && reflect.DeepEqual(x, y)
}

// sorted is a copy of the objects of t whose names match, and the bindings
// whose source is one of those exchanges, sorted as a read of the broker
// sorts them.
func sorted(t topology.Topology, match func(string) bool) topology.Topology {
	found := topology.Topology{VHost: t.VHost}
	sources := map[string]bool{}
	for _, e := range t.Exchanges {
		if match(e.Name) {
			found.Exchanges = append(found.Exchanges, cloneExchange(e))
			sources[e.Name] = true
		}
	}
	for _, q := range t.Queues {
		if match(q.Name) {
			found.Queues = append(found.Queues, cloneQueue(q))
		}
	}
	for _, binding := range t.Bindings {
		if sources[binding.Source] {
			binding.DestinationType = cmp.Or(binding.DestinationType, topology.DestinationQueue)
			found.Bindings = append(found.Bindings, binding)
		}
	}
	slices.SortFunc(found.Exchanges, func(a, b topology.Exchange) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(found.Queues, func(a, b topology.Queue) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(found.Bindings, compareBindings)
	return found
}

// compareBindings orders bindings as a read of the broker does.
func compareBindings(a, b topology.Binding) int {
	return cmp.Or(
		strings.Compare(a.Source, b.Source),
		strings.Compare(string(cmp.Or(a.DestinationType, topology.DestinationQueue)), string(cmp.Or(b.DestinationType, topology.DestinationQueue))),
		strings.Compare(a.Destination, b.Destination),
		strings.Compare(a.RoutingKey, b.RoutingKey),
	)
}

func cloneExchange(e topology.Exchange) topology.Exchange {
	e.Arguments.Other = maps.Clone(e.Arguments.Other)
	return e
}

func cloneQueue(q topology.Queue) topology.Queue {
	q.Arguments.Other = maps.Clone(q.Arguments.Other)
	return q
}
