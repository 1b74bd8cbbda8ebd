package main

import (
	"fmt"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// hopStats is the lateness of the messages that went through Hops TTL queues.
type hopStats struct {
	Hops int `json:"hops"`
	messaging.Percentiles
}

// hopsOf is the TTL queues a message passed: the nonzero digits of the delay its
// routing key spells. It fails when the key is not the one its delay was sent with.
func hopsOf(a messaging.Arrival, format topology.KeyFormat) (int, error) {
	key, delay, err := format.Decode(a.RoutingKey)
	if err != nil {
		return 0, err
	}
	// The key the publisher wrote for the delay asked, rounded by the encoder.
	if want, err := format.Encode(key, a.Message.Delay); err != nil || want != a.RoutingKey {
		return 0, fmt.Errorf("message %s asked for %s and arrived with routing key %q, which says %s",
			a.Message.ID, a.Message.Delay, a.RoutingKey, delay)
	}
	return topology.Hops(uint64(delay/format.Resolution), format.Radix), nil
}

// radixOf reads a zero radix, a set's or a trial's from before sets had
// one, as 2.
func radixOf(radix int) int {
	if radix == 0 {
		return 2
	}
	return radix
}

// observations are what one trial saw, for measure to count.
type observations struct {
	format topology.KeyFormat // of the set's routing keys

	confirmations []messaging.Confirmation // one per message sent, acked or not
	arrivals      []messaging.Arrival      // first arrivals
	duplicates    []messaging.Arrival      // later arrivals of the same ids
	foreign       int
	unroutable    int

	// The publishing started at start and was scheduled to last duration;
	// no message asked for more than longestDelay.
	start        time.Time
	duration     time.Duration
	longestDelay time.Duration
	lossWindow   time.Duration
}

// measurement is what measure makes of a trial's observations.
type measurement struct {
	Acked     int `json:"acked"`
	Nacked    int `json:"nacked"` // refused, or no answer before the channel closed
	Delivered int `json:"delivered"`
	// Early counts the messages that arrived more than the broker's clock
	// granularity before due (messaging.Arrival.Early): earlier than the
	// layout allows. WithinClock counts those that arrived before due by
	// less, which a quorum queue's millisecond expiry clock allows.
	Early       int `json:"early"`
	WithinClock int `json:"early_within_clock,omitempty"`
	// MostEarly is how far before its due time the earliest message
	// arrived; 0 when none came before due.
	MostEarly   time.Duration `json:"most_early_ns,omitempty"`
	Lost        int           `json:"lost"`                 // acked, and not arrived within the loss window after due
	Overdue     int           `json:"arrived_after_window"` // of Lost, how many arrived later after all
	Duplicates  int           `json:"duplicates"`           // deliveries of an id already delivered
	Unroutable  int           `json:"unroutable"`           // messages in the set's parking lot at the end
	Foreign     int           `json:"foreign"`              // deliveries that were not this trial's messages
	Misrouted   int           `json:"misrouted"`            // arrived with a routing key the set did not send
	Unconfirmed int           `json:"arrived_unconfirmed"`  // arrived although not acked
	// FirstMisroute says what was wrong with the first misrouted message.
	FirstMisroute string `json:"first_misroute,omitempty"`

	Lateness messaging.Percentiles `json:"lateness"`
	ByHops   []hopStats            `json:"by_hops"`
	Confirm  messaging.Percentiles `json:"confirm_latency"`

	// DeliveryRate is messages delivered per second while the load was
	// steady: from the longest delay after the start to the end of the
	// publishing, when arrivals of every delay overlap. 0 when that window
	// is under a second.
	DeliveryRate float64 `json:"delivery_per_s"`
}

// measure counts the outcome of a trial.
func measure(o observations) measurement {
	var m measurement
	acked := make(map[string]messaging.Message, len(o.confirmations))
	var confirmLatency []time.Duration
	for _, c := range o.confirmations {
		if !c.Acked {
			m.Nacked++
			continue
		}
		m.Acked++
		acked[c.Message.ID] = c.Message
		confirmLatency = append(confirmLatency, c.ConfirmedAt.Sub(c.Message.PublishedAt))
	}
	m.Confirm = messaging.PercentilesOf(confirmLatency)

	arrived := make(map[string]messaging.Arrival, len(o.arrivals))
	lateness := make([]time.Duration, 0, len(o.arrivals))
	byHops := map[int][]time.Duration{}
	steadyFrom, steadyTo := o.start.Add(o.longestDelay), o.start.Add(o.duration)
	steady := 0
	for _, a := range o.arrivals {
		arrived[a.Message.ID] = a
		if _, ok := acked[a.Message.ID]; !ok {
			m.Unconfirmed++
		}
		if a.Early() {
			m.Early++
		}
		if a.WithinClock() {
			m.WithinClock++
		}
		m.MostEarly = max(m.MostEarly, -a.Lateness)
		lateness = append(lateness, a.Lateness)
		if hops, err := hopsOf(a, o.format); err != nil {
			if m.Misrouted == 0 {
				m.FirstMisroute = err.Error()
			}
			m.Misrouted++
		} else {
			byHops[hops] = append(byHops[hops], a.Lateness)
		}
		if !a.ArrivedAt.Before(steadyFrom) && a.ArrivedAt.Before(steadyTo) {
			steady++
		}
	}
	m.Delivered = len(o.arrivals)
	m.Lateness = messaging.PercentilesOf(lateness)
	for hops := 0; hops <= o.format.Levels; hops++ {
		if values := byHops[hops]; len(values) > 0 {
			m.ByHops = append(m.ByHops, hopStats{Hops: hops, Percentiles: messaging.PercentilesOf(values)})
		}
	}
	if window := steadyTo.Sub(steadyFrom); window >= time.Second {
		m.DeliveryRate = float64(steady) / window.Seconds()
	}

	for id := range acked {
		a, ok := arrived[id]
		switch {
		case !ok:
			m.Lost++
		case a.Lateness > o.lossWindow:
			m.Lost++
			m.Overdue++
		}
	}
	m.Duplicates = len(o.duplicates)
	m.Foreign = o.foreign
	m.Unroutable = o.unroutable
	return m
}
