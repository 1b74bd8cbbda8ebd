package brokertest

import (
	"slices"
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
	MethodReadObjectsNamed   = "ReadObjectsNamed"
	MethodReadObjects        = "ReadObjectsMatching"
	MethodApply              = "Apply"
	MethodHeldMessages       = "HeldMessages"
	MethodExactMessages      = "ExactMessages"
	MethodCountedMessages    = "CountedMessages"
	MethodReadPlacements     = "ReadPlacements"
	MethodPlacements         = "Placements"
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
	// Inexact, when not empty, makes ExactMessages unable to count the
	// queue without waiting for its statistics (as Uncounted, for it
	// alone); the other checks count it.
	Inexact string
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
	declared   map[vhostQueue]broker.LogMark
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
		declared: map[vhostQueue]broker.LogMark{}, errs: map[string]error{},
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

// DeclaredMarks are the log marks of the named quorum queues of vhost that
// Apply created or RememberDeclared was told of, as
// (*broker.Client).DeclaredMarks gives them: a creation leaves the mark
// {Term: 1, Index: 3}, as on a broker.
func (b *Broker) DeclaredMarks(vhost string, queues []string) map[string]broker.LogMark {
	b.mu.Lock()
	defer b.mu.Unlock()
	found := map[string]broker.LogMark{}
	for _, queue := range queues {
		if mark, ok := b.declared[vhostQueue{vhost, queue}]; ok {
			found[queue] = mark
		}
	}
	return found
}

// RememberDeclared notes marks for DeclaredMarks.
func (b *Broker) RememberDeclared(vhost string, marks map[string]broker.LogMark) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for queue, mark := range marks {
		b.declared[vhostQueue{vhost, queue}] = mark
	}
}
