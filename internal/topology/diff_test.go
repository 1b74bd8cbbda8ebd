package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// diffSpec is the desired set of most Diff tests: two levels, so that every
// kind of object and binding exists and the expected lists stay readable.
var diffSpec = Spec{
	Name: "delay", VHost: "/", Levels: 2, Resolution: time.Second,
	Routes: []Route{{Destination: "orders", Key: "orders"}},
}

// mustPlan plans s or stops the test.
func mustPlan(t testing.TB, s Spec) Topology {
	t.Helper()
	p, err := Plan(s)
	if err != nil {
		t.Fatalf("Plan(%+v): %v", s, err)
	}
	return p
}

// changeLine spells a change on one line, so that expected lists read like a plan.
func changeLine(c Change) string {
	var object string
	switch {
	case c.Exchange != nil:
		object = c.Exchange.Name
	case c.Queue != nil:
		object = c.Queue.Name
	case c.Binding != nil:
		object = fmt.Sprintf("%s → %s %s %q", c.Binding.Source, c.Binding.DestinationType, c.Binding.Destination, c.Binding.RoutingKey)
	}
	return fmt.Sprintf("%s %s: %s", c.Kind, object, c.Reason)
}

func changeLines(changes []Change) []string {
	var lines []string
	for _, c := range changes {
		lines = append(lines, changeLine(c))
	}
	return lines
}

// editTopology returns a deep copy of t changed by edit.
func editTopology(t Topology, edit func(*Topology)) Topology {
	c := Topology{
		VHost:     t.VHost,
		Exchanges: slices.Clone(t.Exchanges),
		Queues:    slices.Clone(t.Queues),
		Bindings:  slices.Clone(t.Bindings),
	}
	for i := range c.Exchanges {
		c.Exchanges[i].Arguments.Other = cloneArguments(c.Exchanges[i].Arguments.Other)
	}
	for i := range c.Queues {
		c.Queues[i].Arguments.Other = cloneArguments(c.Queues[i].Arguments.Other)
	}
	edit(&c)
	return c
}

func cloneArguments(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func exchangeNamed(t *Topology, name string) *Exchange {
	for i := range t.Exchanges {
		if t.Exchanges[i].Name == name {
			return &t.Exchanges[i]
		}
	}
	panic("no exchange " + name)
}

func queueNamed(t *Topology, name string) *Queue {
	for i := range t.Queues {
		if t.Queues[i].Name == name {
			return &t.Queues[i]
		}
	}
	panic("no queue " + name)
}

func withoutQueue(t *Topology, name string) {
	t.Queues = slices.DeleteFunc(t.Queues, func(q Queue) bool { return q.Name == name })
	t.Bindings = slices.DeleteFunc(t.Bindings, func(b Binding) bool {
		return b.DestinationType == DestinationQueue && b.Destination == name
	})
}

func withoutExchange(t *Topology, name string) {
	t.Exchanges = slices.DeleteFunc(t.Exchanges, func(e Exchange) bool { return e.Name == name })
	t.Bindings = slices.DeleteFunc(t.Bindings, func(b Binding) bool {
		return b.Source == name || b.DestinationType == DestinationExchange && b.Destination == name
	})
}

func withoutBinding(t *Topology, source, destination, key string) {
	n := len(t.Bindings)
	t.Bindings = slices.DeleteFunc(t.Bindings, func(b Binding) bool {
		return b.Source == source && b.Destination == destination && b.RoutingKey == key
	})
	if len(t.Bindings) != n-1 {
		panic(fmt.Sprintf("no binding %s → %s %q", source, destination, key))
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	desired := mustPlan(t, diffSpec)
	withSpec := func(edit func(*Spec)) Topology {
		s := diffSpec
		s.Routes = slices.Clone(s.Routes)
		edit(&s)
		return mustPlan(t, s)
	}
	edited := func(edit func(*Topology)) Topology { return editTopology(desired, edit) }

	tests := map[string]struct {
		desired, actual Topology
		want            []string
	}{
		"equal": {desired: desired, actual: desired},
		"shuffled, nil and empty maps, unset destination type": {
			desired: desired,
			actual: edited(func(t *Topology) {
				slices.Reverse(t.Exchanges)
				slices.Reverse(t.Queues)
				slices.Reverse(t.Bindings)
				t.Queues[0].Arguments.Other = map[string]string{}
				t.Exchanges[0].Arguments.Other = map[string]string{}
				for i := range t.Bindings {
					if t.Bindings[i].DestinationType == DestinationQueue {
						t.Bindings[i].DestinationType = ""
					}
				}
			}),
		},
		"duplicated objects count once": {
			desired: desired,
			actual: edited(func(t *Topology) {
				t.Exchanges = append(t.Exchanges, t.Exchanges...)
				t.Queues = append(t.Queues, t.Queues...)
				t.Bindings = append(t.Bindings, t.Bindings...)
			}),
		},
		"missing level queue: the queue, then its bindings": {
			desired: desired,
			actual:  edited(func(t *Topology) { withoutQueue(t, "delay.level.01") }),
			want: []string{
				`create_queue delay.level.01: level 01 is missing`,
				`create_binding delay.ingest → queue delay.level.01 "#.1.*": the binding is missing`,
			},
		},
		"missing exchanges and unroutable queue": {
			desired: desired,
			actual: edited(func(t *Topology) {
				withoutExchange(t, "delay.level.01.done")
				withoutExchange(t, "delay.out")
				withoutQueue(t, "delay.unroutable")
			}),
			want: []string{
				`create_exchange delay.level.01.done: level 01 is missing`,
				`create_exchange delay.out: the exchange is missing`,
				`create_queue delay.unroutable: the queue is missing`,
				`create_binding delay.level.00.done → exchange delay.out "#": the binding is missing`,
				`create_binding delay.level.01.done → queue delay.level.00 "#.1": the binding is missing`,
				`create_binding delay.level.01.done → exchange delay.out "#.0": the binding is missing`,
				`create_binding delay.unroutable → queue delay.unroutable "": the binding is missing`,
				`create_binding delay.out → queue orders "orders.*.*": the binding is missing`,
				`create_binding delay.ingest → exchange delay.out "#.0.0": the binding is missing`,
			},
		},
		"extra level: new keys first, then bindings deleted before their queue and exchange": {
			desired: desired,
			actual:  withSpec(func(s *Spec) { s.Levels = 3 }),
			want: []string{
				`create_binding delay.out → queue orders "orders.*.*": the binding is missing`,
				`create_binding delay.ingest → queue delay.level.01 "#.1.*": the binding is missing`,
				`create_binding delay.ingest → queue delay.level.00 "#.0.1": the binding is missing`,
				`create_binding delay.ingest → exchange delay.out "#.0.0": the binding is missing`,
				`delete_binding delay.ingest → queue delay.level.02 "#.1.*.*": level 02 is no longer in the set`,
				`delete_binding delay.ingest → queue delay.level.01 "#.0.1.*": the set has no such binding`,
				`delete_binding delay.ingest → queue delay.level.00 "#.0.0.1": the set has no such binding`,
				`delete_binding delay.ingest → exchange delay.out "#.0.0.0": the set has no such binding`,
				`delete_binding delay.level.02.done → queue delay.level.01 "#.1.*": level 02 is no longer in the set`,
				`delete_binding delay.level.02.done → queue delay.level.00 "#.0.1": level 02 is no longer in the set`,
				`delete_binding delay.level.02.done → exchange delay.out "#.0.0": level 02 is no longer in the set`,
				`delete_binding delay.out → queue orders "orders.*.*.*": the set has no such binding`,
				`delete_queue delay.level.02: level 02 is no longer in the set`,
				`delete_exchange delay.level.02.done: level 02 is no longer in the set`,
			},
		},
		"changed TTL: each queue replaced, then its bindings": {
			desired: withSpec(func(s *Spec) { s.Resolution = 2 * time.Second }),
			actual:  desired,
			want: []string{
				`delete_queue delay.level.00: x-message-ttl 1000 → 2000: queue arguments cannot change in place`,
				`create_queue delay.level.00: re-created with x-message-ttl 2000`,
				`create_binding delay.ingest → queue delay.level.00 "#.0.1": re-creating delay.level.00 dropped this binding`,
				`create_binding delay.level.01.done → queue delay.level.00 "#.1": re-creating delay.level.00 dropped this binding`,
				`delete_queue delay.level.01: x-message-ttl 2000 → 4000: queue arguments cannot change in place`,
				`create_queue delay.level.01: re-created with x-message-ttl 4000`,
				`create_binding delay.ingest → queue delay.level.01 "#.1.*": re-creating delay.level.01 dropped this binding`,
			},
		},
		"missing binding to a replaced queue is created after the replacement only": {
			desired: withSpec(func(s *Spec) { s.Resolution = 2 * time.Second }),
			actual: edited(func(t *Topology) {
				withoutQueue(t, "delay.level.01")
				withoutBinding(t, "delay.ingest", "delay.level.00", "#.0.1")
			}),
			want: []string{
				`create_queue delay.level.01: level 01 is missing`,
				`create_binding delay.ingest → queue delay.level.01 "#.1.*": the binding is missing`,
				`delete_queue delay.level.00: x-message-ttl 1000 → 2000: queue arguments cannot change in place`,
				`create_queue delay.level.00: re-created with x-message-ttl 2000`,
				`create_binding delay.ingest → queue delay.level.00 "#.0.1": the binding is missing`,
				`create_binding delay.level.01.done → queue delay.level.00 "#.1": re-creating delay.level.00 dropped this binding`,
			},
		},
		"queue type change names every argument": {
			desired: desired,
			actual: edited(func(t *Topology) {
				q := queueNamed(t, "delay.level.00")
				q.Arguments.QueueType = QueueTypeClassic
				q.Arguments.DeadLetterStrategy = ""
				q.Arguments.Overflow = ""
				q.Arguments.DeadLetterExchange = "elsewhere"
				q.Arguments.Other = map[string]string{"x-max-length": "10", "x-queue-mode": `"lazy"`}
			}),
			want: []string{
				`delete_queue delay.level.00: x-dead-letter-exchange elsewhere → delay.level.00.done, x-queue-type classic → quorum, x-dead-letter-strategy (none) → at-least-once, x-overflow (none) → reject-publish, x-max-length 10 → (none), x-queue-mode "lazy" → (none): queue arguments cannot change in place`,
				`create_queue delay.level.00: re-created with x-dead-letter-exchange delay.level.00.done, x-queue-type quorum, x-dead-letter-strategy at-least-once, x-overflow reject-publish, x-max-length (none), x-queue-mode (none)`,
				`create_binding delay.ingest → queue delay.level.00 "#.0.1": re-creating delay.level.00 dropped this binding`,
				`create_binding delay.level.01.done → queue delay.level.00 "#.1": re-creating delay.level.00 dropped this binding`,
			},
		},
		"lost TTL": {
			desired: desired,
			actual:  edited(func(t *Topology) { queueNamed(t, "delay.level.01").Arguments.MessageTTL = 0 }),
			want: []string{
				`delete_queue delay.level.01: x-message-ttl (none) → 2000: queue arguments cannot change in place`,
				`create_queue delay.level.01: re-created with x-message-ttl 2000`,
				`create_binding delay.ingest → queue delay.level.01 "#.1.*": re-creating delay.level.01 dropped this binding`,
			},
		},
		"extra binding": {
			desired: desired,
			actual: edited(func(t *Topology) {
				t.Bindings = append(t.Bindings, Binding{Source: "delay.out", Destination: "audit", DestinationType: DestinationQueue, RoutingKey: "#.*.*"})
			}),
			want: []string{`delete_binding delay.out → queue audit "#.*.*": the set has no such binding`},
		},
		"changed alternate-exchange: exchange replaced, then every binding from or to it": {
			desired: desired,
			actual:  edited(func(t *Topology) { exchangeNamed(t, "delay.out").Arguments.AlternateExchange = "other.unroutable" }),
			want: []string{
				`delete_exchange delay.out: alternate-exchange other.unroutable → delay.unroutable: exchange arguments cannot change in place`,
				`create_exchange delay.out: re-created with alternate-exchange delay.unroutable`,
				`create_binding delay.ingest → exchange delay.out "#.0.0": re-creating delay.out dropped this binding`,
				`create_binding delay.level.00.done → exchange delay.out "#": re-creating delay.out dropped this binding`,
				`create_binding delay.level.01.done → exchange delay.out "#.0": re-creating delay.out dropped this binding`,
				`create_binding delay.out → queue orders "orders.*.*": re-creating delay.out dropped this binding`,
			},
		},
		"extra exchange argument": {
			desired: desired,
			actual: edited(func(t *Topology) {
				exchangeNamed(t, "delay.ingest").Arguments.Other = map[string]string{"x-note": `"hand-made"`}
			}),
			want: []string{
				`delete_exchange delay.ingest: x-note "hand-made" → (none): exchange arguments cannot change in place`,
				`create_exchange delay.ingest: re-created with x-note (none)`,
				`create_binding delay.ingest → queue delay.level.01 "#.1.*": re-creating delay.ingest dropped this binding`,
				`create_binding delay.ingest → queue delay.level.00 "#.0.1": re-creating delay.ingest dropped this binding`,
				`create_binding delay.ingest → exchange delay.out "#.0.0": re-creating delay.ingest dropped this binding`,
			},
		},
		"changed exchange type": {
			desired: desired,
			actual: edited(func(t *Topology) {
				e := exchangeNamed(t, "delay.unroutable")
				e.Type = ExchangeTopic
			}),
			want: []string{
				`delete_exchange delay.unroutable: type topic → fanout: exchange type cannot change in place`,
				`create_exchange delay.unroutable: re-created with type fanout`,
				`create_binding delay.unroutable → queue delay.unroutable "": re-creating delay.unroutable dropped this binding`,
			},
		},
		"changed exchange type and arguments": {
			desired: desired,
			actual: edited(func(t *Topology) {
				e := exchangeNamed(t, "delay.unroutable")
				e.Type, e.Arguments.AlternateExchange = ExchangeTopic, "delay.unroutable"
			}),
			want: []string{
				`delete_exchange delay.unroutable: type topic → fanout, alternate-exchange delay.unroutable → (none): exchange type and arguments cannot change in place`,
				`create_exchange delay.unroutable: re-created with type fanout, alternate-exchange (none)`,
				`create_binding delay.unroutable → queue delay.unroutable "": re-creating delay.unroutable dropped this binding`,
			},
		},
		"binding between two replaced objects is created once, after both": {
			desired: desired,
			actual: edited(func(t *Topology) {
				exchangeNamed(t, "delay.level.01.done").Arguments.AlternateExchange = ""
				queueNamed(t, "delay.level.00").Arguments.Other = map[string]string{"x-max-length": "10"}
			}),
			want: []string{
				`delete_exchange delay.level.01.done: alternate-exchange (none) → delay.unroutable: exchange arguments cannot change in place`,
				`create_exchange delay.level.01.done: re-created with alternate-exchange delay.unroutable`,
				`create_binding delay.level.01.done → exchange delay.out "#.0": re-creating delay.level.01.done dropped this binding`,
				`delete_queue delay.level.00: x-max-length 10 → (none): queue arguments cannot change in place`,
				`create_queue delay.level.00: re-created with x-max-length (none)`,
				`create_binding delay.ingest → queue delay.level.00 "#.0.1": re-creating delay.level.00 dropped this binding`,
				`create_binding delay.level.01.done → queue delay.level.00 "#.1": re-creating delay.level.00 dropped this binding`,
			},
		},
		"added argument on the desired side": {
			desired: edited(func(t *Topology) {
				queueNamed(t, "delay.unroutable").Arguments.Other = map[string]string{"x-max-length": "1000"}
			}),
			actual: desired,
			want: []string{
				`delete_queue delay.unroutable: x-max-length (none) → 1000: queue arguments cannot change in place`,
				`create_queue delay.unroutable: re-created with x-max-length 1000`,
				`create_binding delay.unroutable → queue delay.unroutable "": re-creating delay.unroutable dropped this binding`,
			},
		},
		"changed untyped argument, an equal one kept quiet": {
			desired: edited(func(t *Topology) {
				queueNamed(t, "delay.unroutable").Arguments.Other = map[string]string{"x-max-length": "20", "x-queue-leader-locator": `"balanced"`}
			}),
			actual: edited(func(t *Topology) {
				queueNamed(t, "delay.unroutable").Arguments.Other = map[string]string{"x-max-length": "10", "x-queue-leader-locator": `"balanced"`}
			}),
			want: []string{
				`delete_queue delay.unroutable: x-max-length 10 → 20: queue arguments cannot change in place`,
				`create_queue delay.unroutable: re-created with x-max-length 20`,
				`create_binding delay.unroutable → queue delay.unroutable "": re-creating delay.unroutable dropped this binding`,
			},
		},
		"objects of no level that are not desired": {
			desired: edited(func(t *Topology) { withoutExchange(t, "delay.out") }),
			actual: edited(func(t *Topology) {
				t.Queues = append(t.Queues, Queue{Name: "delay.level.old"})
			}),
			want: []string{
				`delete_binding delay.ingest → exchange delay.out "#.0.0": the set has no such binding`,
				`delete_binding delay.level.00.done → exchange delay.out "#": the set has no such binding`,
				`delete_binding delay.level.01.done → exchange delay.out "#.0": the set has no such binding`,
				`delete_binding delay.out → queue orders "orders.*.*": the set has no such binding`,
				`delete_queue delay.level.old: no longer part of the set`,
				`delete_exchange delay.out: no longer part of the set`,
			},
		},
		"radix 2 to 4: every delay queue and done exchange replaced, the reasons say why": {
			desired: mustPlan(t, Spec{Name: "d", VHost: "/", Levels: 1, Radix: 4, QueueType: QueueTypeClassic}),
			actual:  mustPlan(t, Spec{Name: "d", VHost: "/", Levels: 2, QueueType: QueueTypeClassic}),
			want: []string{
				`create_exchange d.r4.00.done: level 00 of radix 4 is missing`,
				`create_queue d.r4.00.1: level 00 digit 1 of radix 4 is missing`,
				`create_queue d.r4.00.2: level 00 digit 2 of radix 4 is missing`,
				`create_queue d.r4.00.3: level 00 digit 3 of radix 4 is missing`,
				`create_binding d.r4.00.done → exchange d.out "#": the binding is missing`,
				`create_binding d.ingest → queue d.r4.00.1 "#.1": the binding is missing`,
				`create_binding d.ingest → queue d.r4.00.2 "#.2": the binding is missing`,
				`create_binding d.ingest → queue d.r4.00.3 "#.3": the binding is missing`,
				`create_binding d.ingest → exchange d.out "#.0": the binding is missing`,
				`delete_binding d.ingest → queue d.level.01 "#.1.*": level 01 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
				`delete_binding d.ingest → queue d.level.00 "#.0.1": level 00 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
				`delete_binding d.ingest → exchange d.out "#.0.0": the set has no such binding`,
				`delete_binding d.level.00.done → exchange d.out "#": level 00 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
				`delete_binding d.level.01.done → queue d.level.00 "#.1": level 00 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
				`delete_binding d.level.01.done → exchange d.out "#.0": level 01 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
				`delete_queue d.level.00: level 00 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
				`delete_queue d.level.01: level 01 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
				`delete_exchange d.level.00.done: level 00 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
				`delete_exchange d.level.01.done: level 01 goes: the set changes from radix 2 to radix 4, which replaces its delay queues`,
			},
		},
		"radix 16, one level fewer": {
			desired: mustPlan(t, Spec{Name: "d", VHost: "/", Levels: 1, Radix: 16, Resolution: time.Millisecond}),
			actual: editTopology(mustPlan(t, Spec{Name: "d", VHost: "/", Levels: 2, Radix: 16, Resolution: time.Millisecond}), func(t *Topology) {
				t.Bindings = slices.DeleteFunc(t.Bindings, func(b Binding) bool { return b.Source != "d.r16.01.done" })
				t.Queues = slices.DeleteFunc(t.Queues, func(q Queue) bool { return q.Name != "d.r16.01.15" && q.Name != "d.r16.00.15" })
				t.Exchanges = slices.DeleteFunc(t.Exchanges, func(e Exchange) bool { return e.Name != "d.r16.01.done" })
			}),
			want: func() []string {
				want := []string{`create_exchange d.ingest: the exchange is missing`, `create_exchange d.r16.00.done: level 00 of radix 16 is missing`,
					`create_exchange d.out: the exchange is missing`, `create_exchange d.unroutable: the exchange is missing`}
				for v := 1; v < 15; v++ {
					want = append(want, fmt.Sprintf(`create_queue d.r16.00.%d: level 00 digit %d of radix 16 is missing`, v, v))
				}
				want = append(want, `create_queue d.unroutable: the queue is missing`,
					`create_binding d.r16.00.done → exchange d.out "#": the binding is missing`,
					`create_binding d.unroutable → queue d.unroutable "": the binding is missing`)
				for v := 1; v < 16; v++ {
					want = append(want, fmt.Sprintf(`create_binding d.ingest → queue d.r16.00.%d "#.%d": the binding is missing`, v, v))
				}
				want = append(want, `create_binding d.ingest → exchange d.out "#.0": the binding is missing`)
				for v := 1; v < 16; v++ {
					want = append(want, fmt.Sprintf(`delete_binding d.r16.01.done → queue d.r16.00.%d "#.%d": level 01 of radix 16 is no longer in the set`, v, v))
				}
				return append(want,
					`delete_binding d.r16.01.done → exchange d.out "#.0": level 01 of radix 16 is no longer in the set`,
					`delete_queue d.r16.01.15: level 01 digit 15 of radix 16 is no longer in the set`,
					`delete_exchange d.r16.01.done: level 01 of radix 16 is no longer in the set`)
			}(),
		},
		"nothing exists yet: the whole plan, in plan order but the ingest bindings last": {
			desired: mustPlan(t, Spec{Name: "d", VHost: "/", Levels: 1, QueueType: QueueTypeClassic}),
			actual:  Topology{VHost: "/"},
			want: []string{
				`create_exchange d.ingest: the exchange is missing`,
				`create_exchange d.level.00.done: level 00 is missing`,
				`create_exchange d.out: the exchange is missing`,
				`create_exchange d.unroutable: the exchange is missing`,
				`create_queue d.level.00: level 00 is missing`,
				`create_queue d.unroutable: the queue is missing`,
				`create_binding d.level.00.done → exchange d.out "#": the binding is missing`,
				`create_binding d.unroutable → queue d.unroutable "": the binding is missing`,
				`create_binding d.ingest → queue d.level.00 "#.1": the binding is missing`,
				`create_binding d.ingest → exchange d.out "#.0": the binding is missing`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			changes := Diff(tc.desired, tc.actual)
			if d := cmp.Diff(tc.want, changeLines(changes)); d != "" {
				t.Errorf("Diff (-want +got):\n%s", d)
			}
			checkChangeShape(t, changes)
			// Replaying the changes must reach desired, whatever the case.
			if got, err := applyChanges(tc.actual, changes); err != nil {
				t.Errorf("applying the diff: %v", err)
			} else if d := cmp.Diff(topologySet(tc.desired), topologySet(got)); d != "" {
				t.Errorf("after applying the diff, the topology differs from desired (-want +got):\n%s", d)
			}
		})
	}
}

// checkChangeShape checks that each change carries exactly the object its
// kind names, and a reason.
func checkChangeShape(t *testing.T, changes []Change) {
	t.Helper()
	for i, c := range changes {
		var ok bool
		switch c.Kind {
		case CreateExchange, DeleteExchange:
			ok = c.Exchange != nil && c.Queue == nil && c.Binding == nil
		case CreateQueue, DeleteQueue:
			ok = c.Exchange == nil && c.Queue != nil && c.Binding == nil
		case CreateBinding, DeleteBinding:
			ok = c.Exchange == nil && c.Queue == nil && c.Binding != nil
		}
		if !ok || c.Reason == "" {
			t.Errorf("change %d is malformed: %+v", i, c)
		}
	}
}

// topologySnapshot is a topology as sets, for comparisons that ignore order.
type topologySnapshot struct {
	Exchanges map[string]Exchange
	Queues    map[string]Queue
	Bindings  map[Binding]bool
}

func topologySet(t Topology) topologySnapshot {
	s := topologySnapshot{Exchanges: map[string]Exchange{}, Queues: map[string]Queue{}, Bindings: map[Binding]bool{}}
	for _, e := range t.Exchanges {
		if len(e.Arguments.Other) == 0 {
			e.Arguments.Other = nil
		}
		s.Exchanges[e.Name] = e
	}
	for _, q := range t.Queues {
		if len(q.Arguments.Other) == 0 {
			q.Arguments.Other = nil
		}
		s.Queues[q.Name] = q
	}
	for _, b := range t.Bindings {
		s.Bindings[b.Canonical()] = true
	}
	return s
}

// applyChanges plays changes on a copy of t the way the broker would: a
// deleted queue or exchange takes its bindings along. It refuses what the
// broker would refuse or what would show a wrong plan: creating what exists,
// deleting what does not, binding from an exchange that does not exist or
// to one of the topology's own objects that does not exist. Destinations
// that are not objects of either topology (a route's queue) are assumed to
// exist.
func applyChanges(t Topology, changes []Change) (Topology, error) {
	state := topologySet(t)
	owned := map[string]bool{}
	for _, e := range t.Exchanges {
		owned["exchange "+e.Name] = true
	}
	for _, q := range t.Queues {
		owned["queue "+q.Name] = true
	}
	for _, c := range changes {
		if c.Exchange != nil {
			owned["exchange "+c.Exchange.Name] = true
		}
		if c.Queue != nil {
			owned["queue "+c.Queue.Name] = true
		}
	}
	for i, c := range changes {
		switch c.Kind {
		case CreateExchange:
			if _, ok := state.Exchanges[c.Exchange.Name]; ok {
				return Topology{}, fmt.Errorf("change %d creates exchange %s, which exists", i, c.Exchange.Name)
			}
			state.Exchanges[c.Exchange.Name] = *c.Exchange
		case CreateQueue:
			if _, ok := state.Queues[c.Queue.Name]; ok {
				return Topology{}, fmt.Errorf("change %d creates queue %s, which exists", i, c.Queue.Name)
			}
			state.Queues[c.Queue.Name] = *c.Queue
		case CreateBinding:
			b := c.Binding.Canonical()
			if state.Bindings[b] {
				return Topology{}, fmt.Errorf("change %d creates binding %+v, which exists", i, b)
			}
			if _, ok := state.Exchanges[b.Source]; !ok {
				return Topology{}, fmt.Errorf("change %d binds from exchange %s, which does not exist", i, b.Source)
			}
			_, queueExists := state.Queues[b.Destination]
			_, exchangeExists := state.Exchanges[b.Destination]
			exists := queueExists && b.DestinationType == DestinationQueue || exchangeExists && b.DestinationType == DestinationExchange
			if !exists && owned[string(b.DestinationType)+" "+b.Destination] {
				return Topology{}, fmt.Errorf("change %d binds to %s %s, which does not exist", i, b.DestinationType, b.Destination)
			}
			state.Bindings[b] = true
		case DeleteBinding:
			b := c.Binding.Canonical()
			if !state.Bindings[b] {
				return Topology{}, fmt.Errorf("change %d deletes binding %+v, which does not exist", i, b)
			}
			delete(state.Bindings, b)
		case DeleteQueue:
			if _, ok := state.Queues[c.Queue.Name]; !ok {
				return Topology{}, fmt.Errorf("change %d deletes queue %s, which does not exist", i, c.Queue.Name)
			}
			delete(state.Queues, c.Queue.Name)
			for b := range state.Bindings {
				if b.DestinationType == DestinationQueue && b.Destination == c.Queue.Name {
					delete(state.Bindings, b)
				}
			}
		case DeleteExchange:
			if _, ok := state.Exchanges[c.Exchange.Name]; !ok {
				return Topology{}, fmt.Errorf("change %d deletes exchange %s, which does not exist", i, c.Exchange.Name)
			}
			delete(state.Exchanges, c.Exchange.Name)
			for b := range state.Bindings {
				if b.Source == c.Exchange.Name || b.DestinationType == DestinationExchange && b.Destination == c.Exchange.Name {
					delete(state.Bindings, b)
				}
			}
		default:
			return Topology{}, fmt.Errorf("change %d has the unknown kind %q", i, c.Kind)
		}
	}
	result := Topology{VHost: t.VHost}
	for _, e := range state.Exchanges {
		result.Exchanges = append(result.Exchanges, e)
	}
	for _, q := range state.Queues {
		result.Queues = append(result.Queues, q)
	}
	for b := range state.Bindings {
		result.Bindings = append(result.Bindings, b)
	}
	return result, nil
}

// randomDiffSpec draws a valid spec of the set "delay" whose shape varies in
// everything Diff can see: levels, resolution, queue type, strategy, routes,
// radix.
func randomDiffSpec(r *rand.Rand) Spec {
	s := Spec{
		Name:       "delay",
		VHost:      "/",
		Levels:     1 + r.IntN(6),
		Resolution: []time.Duration{time.Second, 2 * time.Second, 250 * time.Millisecond}[r.IntN(3)],
	}
	switch r.IntN(3) {
	case 0:
		s.QueueType = QueueTypeClassic
	case 1:
		s.QueueType, s.DeadLetterStrategy = QueueTypeQuorum, AtMostOnce
	}
	pool := []Route{
		{Destination: "orders", Key: "orders"},
		{Destination: "orders", Key: ""},
		{Destination: "billing", Key: "invoice.due"},
		{Destination: "fanout.out", DestinationType: DestinationExchange, Key: "orders"},
		{Destination: "delay.later.ingest", DestinationType: DestinationExchange, Key: ""},
	}
	for _, route := range pool {
		if r.IntN(2) == 0 {
			s.Routes = append(s.Routes, route)
		}
	}
	s.Radix = []int{0, 2, 4, 16}[r.IntN(4)]
	return s
}

// TestDiffReachesDesired plays Diff(Plan(s2), Plan(s1)) on Plan(s1) for
// random pairs of specs: the result must be exactly Plan(s2), a second Diff
// must be empty, and no queue that both hold with equal arguments may be
// deleted (it would lose its messages for nothing).
func TestDiffReachesDesired(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		s1, s2 := randomDiffSpec(r), randomDiffSpec(r)
		if i%10 == 0 {
			s2 = s1 // equal specs are a pair too
		}
		actual, desired := mustPlan(t, s1), mustPlan(t, s2)
		changes := Diff(desired, actual)
		checkChangeShape(t, changes)
		got, err := applyChanges(actual, changes)
		if err != nil {
			t.Fatalf("from %+v to %+v: %v\n%s", s1, s2, err, strings.Join(changeLines(changes), "\n"))
		}
		if d := cmp.Diff(topologySet(desired), topologySet(got)); d != "" {
			t.Fatalf("from %+v to %+v, the result differs from the plan (-want +got):\n%s", s1, s2, d)
		}
		if again := Diff(desired, got); len(again) != 0 {
			t.Fatalf("from %+v to %+v, a second Diff is not empty:\n%s", s1, s2, strings.Join(changeLines(again), "\n"))
		}
		kept := topologySet(actual).Queues
		wanted := topologySet(desired).Queues
		for _, c := range changes {
			if c.Kind != DeleteQueue {
				continue
			}
			if before, ok := kept[c.Queue.Name]; ok && cmp.Equal(before, wanted[c.Queue.Name]) {
				t.Fatalf("from %+v to %+v, %s is deleted although both hold it unchanged", s1, s2, c.Queue.Name)
			}
		}
	}
}

// TestDiffIgnoresOrder shuffles a random plan: no change is the only answer.
func TestDiffIgnoresOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		s := randomDiffSpec(r)
		desired := mustPlan(t, s)
		actual := editTopology(desired, func(t *Topology) {
			r.Shuffle(len(t.Exchanges), func(i, j int) { t.Exchanges[i], t.Exchanges[j] = t.Exchanges[j], t.Exchanges[i] })
			r.Shuffle(len(t.Queues), func(i, j int) { t.Queues[i], t.Queues[j] = t.Queues[j], t.Queues[i] })
			r.Shuffle(len(t.Bindings), func(i, j int) { t.Bindings[i], t.Bindings[j] = t.Bindings[j], t.Bindings[i] })
		})
		if changes := Diff(desired, actual); len(changes) != 0 {
			t.Fatalf("%+v shuffled gives changes:\n%s", s, strings.Join(changeLines(changes), "\n"))
		}
	}
}

// TestDiffIsDeterministic asks for the same diff twice: maps inside Diff
// must not leak their iteration order.
func TestDiffIsDeterministic(t *testing.T) {
	t.Parallel()
	desired := mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 5, Resolution: 2 * time.Second,
		Routes: []Route{{Destination: "a"}, {Destination: "b", Key: "b"}}})
	actual := mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 7, QueueType: QueueTypeClassic,
		Routes: []Route{{Destination: "c"}}})
	first := changeLines(Diff(desired, actual))
	for range 20 {
		if d := cmp.Diff(first, changeLines(Diff(desired, actual))); d != "" {
			t.Fatalf("Diff changed between calls (-first +now):\n%s", d)
		}
	}
}

// TestDiffDeletesTheParkingLotLast checks the order of a destroy: every
// binding but the parking lot's, then the level queues, then the parking
// lot's binding and queue, then the exchanges; and that a parking-lot
// binding whose queue stays is deleted with the other bindings.
func TestDiffDeletesTheParkingLotLast(t *testing.T) {
	plan, err := Plan(Spec{Name: "d", VHost: "/", Levels: 3, Resolution: time.Second, QueueType: QueueTypeClassic})
	if err != nil {
		t.Fatal(err)
	}
	names := Names("d")
	parking := Binding{Source: names.Unroutable(), Destination: names.Unroutable(), DestinationType: DestinationQueue}

	var order []string
	for _, c := range Diff(Topology{VHost: "/"}, plan) {
		switch {
		case c.Kind == DeleteBinding && *c.Binding == parking:
			order = append(order, "parking binding")
		case c.Kind == DeleteBinding:
			if len(order) == 0 || order[len(order)-1] != "bindings" {
				order = append(order, "bindings")
			}
		case c.Kind == DeleteQueue && c.Queue.Name == names.Unroutable():
			order = append(order, "parking lot")
		case c.Kind == DeleteQueue:
			if order[len(order)-1] != "level queues" {
				order = append(order, "level queues")
			}
		case c.Kind == DeleteExchange:
			if order[len(order)-1] != "exchanges" {
				order = append(order, "exchanges")
			}
		}
	}
	want := []string{"bindings", "level queues", "parking binding", "parking lot", "exchanges"}
	if !slices.Equal(order, want) {
		t.Errorf("destroy order = %q, want %q", order, want)
	}

	// Shrinking the set keeps the parking lot: its binding, unwanted here, goes with the others.
	kept := plan
	kept.Bindings = slices.DeleteFunc(slices.Clone(plan.Bindings), func(b Binding) bool { return b == parking })
	changes := Diff(kept, plan)
	if len(changes) != 1 || changes[0].Kind != DeleteBinding || *changes[0].Binding != parking {
		t.Errorf("Diff without the parking binding = %+v, want only its deletion", changes)
	}
}
