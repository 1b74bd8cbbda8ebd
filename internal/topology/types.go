package topology

import (
	"fmt"
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

// DestinationType says whether a binding or route ends in a queue or an exchange.
type DestinationType string

const (
	DestinationQueue    DestinationType = "queue"
	DestinationExchange DestinationType = "exchange"
)

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
	// Radix is the base of the delay digits: 2 (also when zero), 4, 8 or 16.
	// The set has one TTL queue per level and nonzero digit value.
	Radix int

	Resolution         time.Duration
	QueueType          QueueType
	DeadLetterStrategy DeadLetterStrategy
	Routes             []Route

	// Generation numbers the set's chain of TTL queues and done exchanges
	// ([Names.Generation]): 0 for a set as first declared, one more for
	// each change that declares a new chain while the old one drains.
	Generation int
	// FormatGeneration is the generation whose ingest exchange publishers
	// send to: Generation itself, or an earlier one of the same key format
	// (radix and resolution), whose ingest the set keeps.
	FormatGeneration int
}

// QueueArguments are the x-arguments of a queue, typed. Zero values are absent.
type QueueArguments struct {
	MessageTTL         int64              // x-message-ttl, ms; 0 when absent
	DeadLetterExchange string             // x-dead-letter-exchange
	QueueType          QueueType          // x-queue-type
	DeadLetterStrategy DeadLetterStrategy // x-dead-letter-strategy
	Overflow           string             // x-overflow
	// Other holds any argument the layout never sets, as its JSON text; only
	// an actual topology read from a broker has them, and they show as drift.
	Other map[string]string
}

// ExchangeArguments are the arguments of an exchange, typed. Zero values are absent.
type ExchangeArguments struct {
	AlternateExchange string // alternate-exchange
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
// exchange when their routing key matches RoutingKey. Bindings carry no
// arguments in this layout.
type Binding struct {
	Source          string
	Destination     string
	DestinationType DestinationType
	RoutingKey      string
}

// String is the binding in one line, as plans and listings show it:
//
//	delay.ingest -> queue delay.level.03, key "#.1.*.*.*"
func (b Binding) String() string {
	return fmt.Sprintf("%s -> %s %s, key %q", b.Source, b.DestinationType, b.Destination, b.RoutingKey)
}

// Topology is a set of objects in one vhost: either the desired objects of a
// spec ([Plan]) or the actual objects of a set read from a broker.
type Topology struct {
	VHost     string
	Exchanges []Exchange
	Queues    []Queue
	Bindings  []Binding
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
