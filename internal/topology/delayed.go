package topology

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DelayedSpec describes a delayed exchange: the delayed-message-exchange
// plugin's x-delay header served, for a fixed list of delays, by a headers
// exchange with one TTL queue per delay (DESIGN.md, "Delayed exchanges").
type DelayedSpec struct {
	// Name is the headers exchange publishers send to; the other objects'
	// names start with it (DelayedNames).
	Name  string
	VHost string
	// DelaysMS are the delays, in ms, a message's x-delay may ask for;
	// 0 delivers at once. Resolved: ascending.
	DelaysMS []int64
	// DeliveryType is the delivery exchange's type, the plugin's
	// x-delayed-type: one of DeliveryTypes.
	DeliveryType       string
	QueueType          QueueType
	DeadLetterStrategy DeadLetterStrategy
}

// DeliveryTypes lists the allowed delivery exchange types.
var DeliveryTypes = []string{"direct", "topic", "fanout", "headers"}

// ExchangeHeaders is the type of a delayed exchange's entry exchange.
const ExchangeHeaders = "headers"

// DelayedNames names the objects of the delayed exchange it is the name of.
type DelayedNames string

// Exchange is the headers exchange publishers send to.
func (n DelayedNames) Exchange() string { return string(n) }

// Delivery is the exchange every delay dead-letters to, which users bind
// their queues to.
func (n DelayedNames) Delivery() string { return string(n) + ".delivery" }

// Parking is the fanout exchange and queue, of one name as a set's parking
// lot, that keep what no delay takes.
func (n DelayedNames) Parking() string { return Names(string(n)).Unroutable() }

// DelayQueue is the TTL queue of the delay of ms milliseconds.
func (n DelayedNames) DelayQueue(ms int64) string {
	return string(n) + delayQueueInfix + strconv.FormatInt(ms, 10)
}

const delayQueueInfix = ".delay."

// DelayOfQueue is the delay a queue's name gives, false for a name that is
// not one of n's delay queues.
func (n DelayedNames) DelayOfQueue(name string) (int64, bool) {
	digits, found := strings.CutPrefix(name, string(n)+delayQueueInfix)
	if !found || !canonicalDigits(digits) {
		return 0, false
	}
	ms, err := strconv.ParseInt(digits, 10, 64)
	return ms, err == nil
}

func canonicalDigits(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
}

// ObjectNamePattern matches the names of n's own exchanges and queues, and
// no neighbour's: every suffix ends in a number or a word no suffix starts.
func (n DelayedNames) ObjectNamePattern() string {
	return "^" + regexp.QuoteMeta(string(n)) + `(\.delivery|\.unroutable|\.delay\.(0|[1-9][0-9]*))?$`
}

// longestDelayedSuffix is the longest suffix at the longest delay, MaxTTL.
var longestDelayedSuffix = len(DelayedNames("").DelayQueue(MaxTTL))

// MaxDelayedNameLength is the longest name of a delayed exchange whose
// every object name fits AMQP's 255 bytes.
var MaxDelayedNameLength = MaxNameLength - longestDelayedSuffix

// ValidateDelayed reports every problem of s as [ValidationErrors], by the
// resource's attribute names: name, vhost, delays_ms, delivery_type,
// queue_type, dead_letter_strategy.
func ValidateDelayed(s DelayedSpec) error {
	var v specValidator
	switch {
	case s.Name == "":
		v.add("name", -1, "must not be empty; use %s", nameCharacters)
	case len(s.Name) > MaxDelayedNameLength:
		v.add("name", -1, "must be at most %d bytes so that every object name (the longest is \"<name>%s\") fits AMQP's %d bytes, got %d",
			MaxDelayedNameLength, DelayedNames("").DelayQueue(MaxTTL), MaxNameLength, len(s.Name))
	}
	if s.Name != "" {
		v.nameCharacters(s.Name)
	}
	v.vhost(s.VHost)
	v.delays(s.DelaysMS)
	v.fixed(s.DeliveryType != "" && !slices.Contains(DeliveryTypes, s.DeliveryType), "delivery_type",
		"must be one of %s, got %q", quoteAll(DeliveryTypes), s.DeliveryType)
	v.queueType(s.QueueType, s.DeadLetterStrategy)
	return v.result()
}

// delays refuses an empty list, a negative delay, one past MaxTTL and a
// repeated one.
func (v *specValidator) delays(delays []int64) {
	if len(delays) == 0 {
		v.add("delays_ms", -1, "must list at least one delay")
	}
	seen := map[int64]bool{}
	for _, ms := range delays {
		switch {
		case ms < 0 || ms > MaxTTL:
			v.add("delays_ms", -1, "each delay must be from 0 to %d ms (the broker's longest message TTL), got %d", MaxTTL, ms)
		case seen[ms]:
			v.add("delays_ms", -1, "lists %d twice", ms)
		}
		seen[ms] = true
	}
}

// ResolveDelayed validates s and spells out its defaults: delivery type
// direct, queue type quorum, the strategy its queue type defaults to, and
// the delays in ascending order.
func ResolveDelayed(s DelayedSpec) (DelayedSpec, error) {
	if err := ValidateDelayed(s); err != nil {
		return DelayedSpec{}, err
	}
	s.DelaysMS = slices.Clone(s.DelaysMS)
	slices.Sort(s.DelaysMS)
	if s.DeliveryType == "" {
		s.DeliveryType = DeliveryTypes[0]
	}
	if s.QueueType == "" {
		s.QueueType = QueueTypeQuorum
	}
	if s.DeadLetterStrategy == "" {
		s.DeadLetterStrategy = defaultDeadLetterStrategy(s.QueueType)
	}
	return s, nil
}

// PlanDelayed is every object of the delayed exchange of s, resolved,
// with the queues of the draining delays (removed from the list, still
// holding messages) kept unbound: exchanges entry, delivery, parking;
// queues the delays' ascending, then parking; bindings one per delay,
// ascending, then the parking lot's. A delay of 0 binds the entry exchange
// to the delivery exchange; a message whose x-delay is missing, not an
// integer or not listed matches no binding and is parked by the alternate
// exchange.
func PlanDelayed(s DelayedSpec, draining []int64) Topology {
	n := DelayedNames(s.Name)
	parking := ExchangeArguments{AlternateExchange: n.Parking()}
	t := Topology{VHost: s.VHost, Exchanges: []Exchange{
		{Name: n.Exchange(), Type: ExchangeHeaders, Arguments: parking},
		{Name: n.Delivery(), Type: s.DeliveryType, Arguments: parking},
		{Name: n.Parking(), Type: ExchangeFanout},
	}}
	queueDelays := slices.Concat(s.DelaysMS, draining)
	slices.Sort(queueDelays)
	for _, ms := range slices.Compact(queueDelays) {
		if ms > 0 {
			t.Queues = append(t.Queues, Queue{Name: n.DelayQueue(ms), Arguments: delayQueueArguments(s, ms)})
		}
	}
	t.Queues = append(t.Queues, Queue{Name: n.Parking(), Arguments: QueueArguments{QueueType: s.QueueType}})
	for _, ms := range s.DelaysMS {
		b := Binding{Source: n.Exchange(), Destination: n.DelayQueue(ms), DestinationType: DestinationQueue,
			Arguments: BindingArguments{Match: MatchAllWithX, HasDelay: true, Delay: ms}}
		if ms == 0 {
			b.Destination, b.DestinationType = n.Delivery(), DestinationExchange
		}
		t.Bindings = append(t.Bindings, b)
	}
	t.Bindings = append(t.Bindings, Binding{Source: n.Parking(), Destination: n.Parking(), DestinationType: DestinationQueue})
	return t
}

// delayQueueArguments are those of the TTL queue of ms: it dead-letters
// to the delivery exchange with the routing key unchanged.
func delayQueueArguments(s DelayedSpec, ms int64) QueueArguments {
	args := QueueArguments{MessageTTL: ms, DeadLetterExchange: DelayedNames(s.Name).Delivery(), QueueType: s.QueueType}
	if s.QueueType == QueueTypeQuorum {
		args.LeaderLocator = LeaderLocatorBalanced
		args.DeadLetterStrategy = s.DeadLetterStrategy
		if s.DeadLetterStrategy == AtLeastOnce {
			args.Overflow = overflowRejectPublish
		}
	}
	return args
}

// ConsumerBindings are the bindings of actual from the delivery exchange:
// the consumers' own, as they bound their queues to the plugin's exchange.
// A delayed exchange plans none, so it keeps each as it is and never
// deletes one, but with the delivery exchange on a destroy.
func (n DelayedNames) ConsumerBindings(actual Topology) []Binding {
	var bindings []Binding
	for _, b := range actual.Bindings {
		if b.Source == n.Delivery() {
			bindings = append(bindings, b)
		}
	}
	return bindings
}

// WithoutConsumerBindings is actual without ConsumerBindings.
func (n DelayedNames) WithoutConsumerBindings(actual Topology) Topology {
	actual.Bindings = slices.DeleteFunc(slices.Clone(actual.Bindings), func(b Binding) bool { return b.Source == n.Delivery() })
	return actual
}

// ErrNoDelayedExchange is InferDelayed's error when the objects read hold
// no delayed exchange of the name.
var ErrNoDelayedExchange = errors.New("no delayed exchange")

// InferDelayed reads back the spec of the delayed exchange name from
// actual, a read of its objects, and the draining delays: the delay queues
// no binding leads to. The delays are those bound by x-delay to their own
// queue (or, for 0, to the delivery exchange); the queue type and strategy
// those of the first delay queue, else the parking queue's.
func InferDelayed(name string, actual Topology) (DelayedSpec, []int64, error) {
	n := DelayedNames(name)
	index := indexTopology(actual)
	delivery, ok := index.exchangeByName[n.Delivery()]
	if !ok {
		return DelayedSpec{}, nil, fmt.Errorf("%w: the delivery exchange %q is missing", ErrNoDelayedExchange, n.Delivery())
	}
	s := DelayedSpec{Name: name, VHost: actual.VHost, DeliveryType: delivery.Type}
	bound := map[string]bool{}
	for _, b := range index.bindings {
		a := b.Arguments
		if b.Source != n.Exchange() || a.Match != MatchAllWithX || !a.HasDelay || a.Other != "" {
			continue
		}
		bound[b.Destination] = true
		toDelivery := a.Delay == 0 && b.DestinationType == DestinationExchange && b.Destination == n.Delivery()
		toQueue := b.DestinationType.OrQueue() == DestinationQueue && b.Destination == n.DelayQueue(a.Delay) && a.Delay > 0
		if toDelivery || toQueue {
			s.DelaysMS = append(s.DelaysMS, a.Delay)
		}
	}
	var draining []int64
	kind := index.queueByName[n.Parking()].Arguments
	kindFound := false
	for _, q := range index.queues {
		ms, ok := n.DelayOfQueue(q.Name)
		if !ok {
			continue
		}
		if !kindFound {
			kind, kindFound = q.Arguments, true
		}
		if !bound[q.Name] {
			draining = append(draining, ms)
		}
	}
	s.QueueType, s.DeadLetterStrategy = inferredQueueKind(kind)
	slices.Sort(s.DelaysMS)
	s.DelaysMS = slices.Compact(s.DelaysMS)
	slices.Sort(draining)
	return s, draining, nil
}

// inferredQueueKind is the queue type and strategy a queue's arguments
// say, by the broker's defaults where absent.
func inferredQueueKind(a QueueArguments) (QueueType, DeadLetterStrategy) {
	queueType := a.QueueType
	if queueType == "" {
		queueType = QueueTypeClassic
	}
	strategy := a.DeadLetterStrategy
	if strategy == "" || queueType == QueueTypeClassic {
		strategy = AtMostOnce
	}
	return queueType, strategy
}
