package topology

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// QueueType is the RabbitMQ queue type of a set's queues (x-queue-type).
type QueueType string

const (
	QueueTypeQuorum  QueueType = "quorum"
	QueueTypeClassic QueueType = "classic"
)

// QueueTypes lists the allowed queue types, default first.
var QueueTypes = []QueueType{QueueTypeQuorum, QueueTypeClassic}

// DeadLetterStrategy is how a quorum queue dead-letters expired messages
// (x-dead-letter-strategy). Classic queues only know at-most-once.
type DeadLetterStrategy string

const (
	AtLeastOnce DeadLetterStrategy = "at-least-once"
	AtMostOnce  DeadLetterStrategy = "at-most-once"
)

// DeadLetterStrategies lists the allowed strategies, the quorum default first.
var DeadLetterStrategies = []DeadLetterStrategy{AtLeastOnce, AtMostOnce}

// LeaderLocator is how the broker picks the node of a new queue — a quorum
// queue's leader, a classic queue's only node (x-queue-leader-locator). On
// one node every locator picks that node.
type LeaderLocator string

const (
	// LeaderLocatorBalanced picks the node that leads the fewest queues
	// (or a random one in a cluster of many queues): a set's queues spread
	// over the cluster's nodes.
	LeaderLocatorBalanced LeaderLocator = "balanced"
	// LeaderLocatorClientLocal picks the node that declares the queue: the
	// one whose management API the provider talks to.
	LeaderLocatorClientLocal LeaderLocator = "client-local"
)

// LeaderLocators lists the allowed locators, the default of a new set first.
var LeaderLocators = []LeaderLocator{LeaderLocatorBalanced, LeaderLocatorClientLocal}

// DestinationType says whether a binding or route ends in a queue or an exchange.
type DestinationType string

const (
	DestinationQueue    DestinationType = "queue"
	DestinationExchange DestinationType = "exchange"
)

// OrQueue reads an unset destination type as queue, what it means
// everywhere (and to the broker).
func (t DestinationType) OrQueue() DestinationType {
	if t == "" {
		return DestinationQueue
	}
	return t
}

// DestinationTypes lists the allowed destination types, default first.
var DestinationTypes = []DestinationType{DestinationQueue, DestinationExchange}

// Exchange types used by the layout.
const (
	ExchangeTopic  = "topic"
	ExchangeFanout = "fanout"
)

// Limits of the layout and of the broker.
const (
	MinLevels = 1
	MaxLevels = 32

	// MinResolution is the smallest tick: TTLs are whole milliseconds.
	MinResolution = time.Millisecond
	// DefaultResolution is the tick when a spec names none.
	DefaultResolution = time.Second

	// MaxTTL is the largest x-message-ttl the broker accepts (ten years), in ms.
	MaxTTL int64 = 315_360_000_000

	// MaxNameLength is AMQP's limit for exchange and queue names and routing keys, in bytes.
	MaxNameLength = 255
)

// Route sends every message leaving the set whose key matches Key to a
// destination queue or exchange. An empty Key matches every message.
type Route struct {
	Destination     string
	DestinationType DestinationType // "" means queue
	Key             string
}

// canonical spells the route's unset destination type as queue.
func (r Route) canonical() Route {
	r.DestinationType = r.DestinationType.OrQueue()
	return r
}

// Spec describes one delay set. In the default layout exactly one of
// Levels and MaxDelay is set; zero values of the other fields take their
// defaults (see [Resolve]).
type Spec struct {
	// Name prefixes every object of a set of the default layout:
	// "<Name>.ingest", "<Name>.level.00", …. A library's layout names its
	// objects as the library does; Name still tells the set apart.
	Name  string
	VHost string

	// Layout is how the set's objects and keys are laid out: the default
	// layout when empty or [LayoutDefault], or a library's, which fixes
	// the levels (28), the resolution (1s), the radix (2) and the names,
	// and leaves only the queue type (Celery's) and the routes to choose.
	Layout Layout

	// Levels is N, the number of delay digits (of TTL queues in radix 2);
	// delays go up to (Radix^N − 1)·Resolution.
	Levels int
	// MaxDelay, when Levels is zero, derives N as the smallest with (Radix^N − 1)·Resolution ≥ MaxDelay.
	MaxDelay time.Duration
	// Radix is the base of the delay digits: 2 (also when zero), 4, 8, 16 or 256.
	// The set has one TTL queue per level and nonzero digit value.
	Radix int

	Resolution         time.Duration
	QueueType          QueueType
	DeadLetterStrategy DeadLetterStrategy
	// QueueLeaderLocator places the TTL queues on a cluster's nodes. Empty
	// declares them without x-queue-leader-locator, as sets were before it
	// existed: the broker's default (client-local unless a policy or the
	// node's queue_leader_locator says otherwise) places them. It has no
	// default: a new set's is the provider's to choose, and an old set
	// keeps its queues. A library's layout declares none.
	QueueLeaderLocator LeaderLocator
	Routes             []Route
	// QuorumInitialGroupSize is how many nodes hold a replica of each TTL
	// queue (x-quorum-initial-group-size), quorum queues only. Zero
	// declares them without it: the broker's own size (its
	// quorum_queue.initial_cluster_size, 3 by default, or every node of a
	// smaller cluster). A library's layout declares none.
	QuorumInitialGroupSize int

	// Generation numbers the set's chain of TTL queues and done exchanges
	// ([Names.Generation]): 0 for a set as first declared, one more for
	// each change that declares a new chain while the old one drains.
	Generation int
	// FormatGeneration is the generation whose ingest exchange publishers
	// send to: Generation itself, or an earlier one of the same key format
	// (radix and resolution), whose ingest the set keeps.
	FormatGeneration int
}

// The arguments QueueArguments and ExchangeArguments type, by the names
// RabbitMQ gives them: the one place that spells them, for the renderers,
// Diff's reasons, inference and the broker client.
const (
	ArgMessageTTL         = "x-message-ttl"
	ArgDeadLetterExchange = "x-dead-letter-exchange"
	ArgQueueType          = "x-queue-type"
	ArgDeadLetterStrategy = "x-dead-letter-strategy"
	ArgOverflow           = "x-overflow"
	ArgLeaderLocator      = "x-queue-leader-locator"
	ArgAlternateExchange  = "alternate-exchange"

	ArgQuorumInitialGroupSize = "x-quorum-initial-group-size"
)

// QueueArguments are the x-arguments of a queue, typed. Zero values are absent.
type QueueArguments struct {
	MessageTTL         int64              // ArgMessageTTL, ms; 0 when absent
	DeadLetterExchange string             // ArgDeadLetterExchange
	QueueType          QueueType          // ArgQueueType
	DeadLetterStrategy DeadLetterStrategy // ArgDeadLetterStrategy
	Overflow           string             // ArgOverflow
	LeaderLocator      LeaderLocator      // ArgLeaderLocator
	// QuorumInitialGroupSize is ArgQuorumInitialGroupSize; 0 when absent.
	QuorumInitialGroupSize int
	// Other holds any argument the layout never sets, as its JSON text; only
	// an actual topology read from a broker has them, and they show as drift.
	Other map[string]string
}

// ExchangeArguments are the arguments of an exchange, typed. Zero values are absent.
type ExchangeArguments struct {
	AlternateExchange string // ArgAlternateExchange
	// Other holds any argument the layout never sets, as its JSON text.
	Other map[string]string
}

// Exchange is a durable, non-auto-delete, non-internal exchange.
type Exchange struct {
	Name      string
	Type      string // ExchangeTopic or ExchangeFanout
	Arguments ExchangeArguments
}

// Queue is a durable, non-auto-delete, non-exclusive queue.
type Queue struct {
	Name      string
	Arguments QueueArguments
}

// Binding routes messages from the Source exchange to a destination queue or
// exchange when their routing key matches RoutingKey, or, from a headers
// exchange, when their headers match Arguments. A set's bindings carry no
// arguments; a delayed exchange's carry x-match and x-delay.
type Binding struct {
	Source          string
	Destination     string
	DestinationType DestinationType
	RoutingKey      string
	Arguments       BindingArguments
}

// Binding arguments, by the names RabbitMQ gives them.
const (
	ArgMatch = "x-match"
	ArgDelay = "x-delay"
	// MatchAllWithX matches when every argument of the binding, x-delay
	// included, is a header of the message with an equal value: a headers
	// exchange skips x- headers under "all".
	MatchAllWithX = "all-with-x"
)

// BindingArguments are a binding's arguments, typed; zero values are
// absent. It is comparable, so a binding stays one map key.
type BindingArguments struct {
	Match string // ArgMatch
	// HasDelay says that ArgDelay is set, to Delay ms (0 is a delay).
	HasDelay bool
	Delay    int64
	// Other holds any argument no layout sets, as the JSON text of an
	// object of them (keys sorted); only a binding read from a broker has
	// them, and they show as drift.
	Other string
}

// None tells whether a carries no argument.
func (a BindingArguments) None() bool { return a == BindingArguments{} }

// Canonical spells the binding's unset destination type as queue, so that
// both spellings are one binding (one map key, one comparison).
func (b Binding) Canonical() Binding {
	b.DestinationType = b.DestinationType.OrQueue()
	return b
}

// CompareBindings orders bindings as a read of the broker lists them: by
// source, destination type (unset read as queue), destination, then key.
// It is 0 exactly for the bindings that are one on the broker.
func CompareBindings(a, b Binding) int {
	a, b = a.Canonical(), b.Canonical()
	return cmp.Or(
		strings.Compare(a.Source, b.Source),
		strings.Compare(string(a.DestinationType), string(b.DestinationType)),
		strings.Compare(a.Destination, b.Destination),
		strings.Compare(a.RoutingKey, b.RoutingKey),
		compareBindingArguments(a.Arguments, b.Arguments),
	)
}

func compareBindingArguments(a, b BindingArguments) int {
	return cmp.Or(
		strings.Compare(a.Match, b.Match),
		compareBool(a.HasDelay, b.HasDelay),
		cmp.Compare(a.Delay, b.Delay),
		strings.Compare(a.Other, b.Other),
	)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// String is the binding in one line, as plans and listings show it:
//
//	delay.ingest -> queue delay.level.03, key "#.1.*.*.*"
//
// and a binding with arguments ends with them, as RabbitMQ names them:
//
//	orders -> queue orders.delay.5000, key "", x-match "all-with-x", x-delay 5000
func (b Binding) String() string {
	line := fmt.Sprintf("%s -> %s %s, key %q", b.Source, b.DestinationType, b.Destination, b.RoutingKey)
	a := b.Arguments
	if a.Match != "" {
		line += fmt.Sprintf(", %s %q", ArgMatch, a.Match)
	}
	if a.HasDelay {
		line += fmt.Sprintf(", %s %d", ArgDelay, a.Delay)
	}
	if a.Other != "" {
		line += ", arguments " + a.Other
	}
	return line
}

// String is the exchange in one line, its type then its arguments as
// RabbitMQ names them, string values quoted and untyped ones as their JSON:
//
//	delay.ingest: topic, alternate-exchange "delay.unroutable"
func (x Exchange) String() string {
	var line argumentLine
	line.add(x.Type)
	line.addString(ArgAlternateExchange, x.Arguments.AlternateExchange)
	line.addOther(x.Arguments.Other)
	return line.of(x.Name)
}

// String is the queue in one line, its arguments as RabbitMQ names them
// (x-queue-type first, when set), string values quoted and untyped ones as
// their JSON:
//
//	delay.level.03: x-queue-type "classic", x-message-ttl 8000, x-dead-letter-exchange "delay.level.03.done"
func (q Queue) String() string {
	var line argumentLine
	line.addString(ArgQueueType, string(q.Arguments.QueueType))
	if q.Arguments.MessageTTL != 0 {
		line.add(ArgMessageTTL + " " + strconv.FormatInt(q.Arguments.MessageTTL, 10))
	}
	line.addString(ArgDeadLetterExchange, q.Arguments.DeadLetterExchange)
	line.addString(ArgDeadLetterStrategy, string(q.Arguments.DeadLetterStrategy))
	line.addString(ArgOverflow, q.Arguments.Overflow)
	line.addString(ArgLeaderLocator, string(q.Arguments.LeaderLocator))
	if q.Arguments.QuorumInitialGroupSize != 0 {
		line.add(ArgQuorumInitialGroupSize + " " + strconv.Itoa(q.Arguments.QuorumInitialGroupSize))
	}
	line.addOther(q.Arguments.Other)
	return line.of(q.Name)
}

// LineName is the name of the exchange or queue of a line (Exchange.String,
// Queue.String): a name holds no blank, so the first ": " ends it.
func LineName(line string) string {
	name, _, _ := strings.Cut(line, ": ")
	return name
}

// QueueTypeInLine is the x-queue-type of a queue's line (Queue.String),
// "" when it has none, and the queue's name. x-queue-type comes first when
// set.
func QueueTypeInLine(line string) (name string, queueType QueueType) {
	name, arguments, _ := strings.Cut(line, ": ")
	quoted, found := strings.CutPrefix(arguments, ArgQueueType+" ")
	if !found {
		return name, ""
	}
	if prefix, err := strconv.QuotedPrefix(quoted); err == nil {
		value, _ := strconv.Unquote(prefix)
		return name, QueueType(value)
	}
	return name, ""
}

// BindingInLine reads a binding's line (Binding.String) back; false when
// line is none. A name holds no blank, so the source ends at " -> " and the
// destination at the first blank after its type.
func BindingInLine(line string) (Binding, bool) {
	source, rest, ok := strings.Cut(line, " -> ")
	if !ok {
		return Binding{}, false
	}
	head, quoted, ok := strings.Cut(rest, ", key ")
	destinationType, destination, typed := strings.Cut(head, " ")
	prefix, err := strconv.QuotedPrefix(quoted)
	if !ok || !typed || err != nil {
		return Binding{}, false
	}
	key, _ := strconv.Unquote(prefix)
	arguments, ok := bindingArgumentsInLine(quoted[len(prefix):])
	if !ok {
		return Binding{}, false
	}
	return Binding{Source: source, Destination: destination, DestinationType: DestinationType(destinationType), RoutingKey: key,
		Arguments: arguments}, true
}

// bindingArgumentsInLine reads back what Binding.String writes after the key.
func bindingArgumentsInLine(rest string) (BindingArguments, bool) {
	var a BindingArguments
	if quoted, found := strings.CutPrefix(rest, ", "+ArgMatch+" "); found {
		prefix, err := strconv.QuotedPrefix(quoted)
		if err != nil {
			return a, false
		}
		a.Match, _ = strconv.Unquote(prefix)
		rest = quoted[len(prefix):]
	}
	if number, found := strings.CutPrefix(rest, ", "+ArgDelay+" "); found {
		digits, after, more := strings.Cut(number, ", ")
		delay, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return a, false
		}
		a.HasDelay, a.Delay, rest = true, delay, ""
		if more {
			rest = ", " + after
		}
	}
	if other, found := strings.CutPrefix(rest, ", arguments "); found {
		a.Other, rest = other, ""
	}
	return a, rest == ""
}

// Lines are objects' one-line forms (String), one per line, in order: how
// a set shows its exchanges, queues and bindings.
func Lines[T fmt.Stringer](objects []T) string {
	lines := make([]string, len(objects))
	for i, o := range objects {
		lines[i] = o.String()
	}
	return strings.Join(lines, "\n")
}

// argumentLine builds an object's line: its name, then ": " and its parts
// separated by ", " when it has any.
type argumentLine struct{ parts []string }

func (l *argumentLine) add(part string) { l.parts = append(l.parts, part) }

// addString adds a string argument unless it is absent (empty).
func (l *argumentLine) addString(name, value string) {
	if value != "" {
		l.add(name + " " + strconv.Quote(value))
	}
}

// addOther adds the untyped arguments, by name, each as its JSON text.
func (l *argumentLine) addOther(other map[string]string) {
	for _, name := range sortedKeys(other) {
		l.add(name + " " + other[name])
	}
}

func (l *argumentLine) of(name string) string {
	if len(l.parts) == 0 {
		return name
	}
	return name + ": " + strings.Join(l.parts, ", ")
}

// Topology is a set of objects in one vhost: either the desired objects of a
// spec ([Plan]) or the actual objects of a set read from a broker.
type Topology struct {
	VHost     string
	Exchanges []Exchange
	Queues    []Queue
	Bindings  []Binding
}

// QueueNames are the names of t's queues, in t's order.
func (t Topology) QueueNames() []string {
	names := make([]string, len(t.Queues))
	for i, q := range t.Queues {
		names[i] = q.Name
	}
	return names
}

// ChangeKind names what a [Change] does on the broker.
type ChangeKind string

const (
	CreateExchange ChangeKind = "create_exchange"
	CreateQueue    ChangeKind = "create_queue"
	CreateBinding  ChangeKind = "create_binding"
	DeleteBinding  ChangeKind = "delete_binding"
	DeleteQueue    ChangeKind = "delete_queue"
	DeleteExchange ChangeKind = "delete_exchange"
)

// Change is one step of a [Diff]. Exactly one of Exchange, Queue and Binding
// is set, according to Kind. Reason says why, for plans and diagnostics.
type Change struct {
	Kind     ChangeKind
	Exchange *Exchange
	Queue    *Queue
	Binding  *Binding
	Reason   string
	// Opens is set on the creation of a binding from an entry exchange (an
	// ingest): it lets messages into a chain, so it must start only after
	// every change before it has completed, not run alongside them.
	Opens bool
}
