package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// inferSpecs are specs whose plans Infer must explain exactly.
var inferSpecs = map[string]Spec{
	"defaults": {Name: "delay", VHost: "/", Levels: 4},
	"quorum at-most-once": {Name: "delay", VHost: "/", Levels: 3, Resolution: 250 * time.Millisecond,
		QueueType: QueueTypeQuorum, DeadLetterStrategy: AtMostOnce},
	"classic":        {Name: "delay", VHost: "prod", Levels: 5, Resolution: 2 * time.Second, QueueType: QueueTypeClassic},
	"one level":      {Name: "d", VHost: "/", Levels: 1, Resolution: time.Millisecond},
	"32 levels":      {Name: "wide", VHost: "/", Levels: 32, Resolution: time.Millisecond, QueueType: QueueTypeClassic},
	"from max delay": {Name: "retry", VHost: "/", MaxDelay: time.Hour, Resolution: 10 * time.Second},
	"routes to queues and exchanges": {Name: "delay", VHost: "/", Levels: 3, Routes: []Route{
		{Destination: "orders", Key: "orders.created"},
		{Destination: "everything"},
		{Destination: "billing.in", DestinationType: DestinationExchange, Key: "invoice"},
		{Destination: "billing.in", DestinationType: DestinationExchange},
		{Destination: "orders", DestinationType: DestinationQueue, Key: "orders.cancelled"},
	}},
	"route key that looks like a level": {Name: "delay", VHost: "/", Levels: 2, Routes: []Route{
		{Destination: "q", Key: "0.1"},
	}},
	"name with every allowed character": {Name: "Team_a-1:delay.v2", VHost: "/", Levels: 2},
	"radix 4":                           {Name: "delay", VHost: "/", Levels: 3, Radix: 4, Routes: []Route{{Destination: "q", Key: "3.1"}}},
	"radix 8, classic":                  {Name: "delay", VHost: "/", Levels: 4, Radix: 8, Resolution: 100 * time.Millisecond, QueueType: QueueTypeClassic},
	"radix 16, most levels at 1ms":      {Name: "delay", VHost: "/", Levels: 9, Radix: 16, Resolution: time.Millisecond, DeadLetterStrategy: AtMostOnce},
	"radix 16 from max delay":           {Name: "delay.r16", VHost: "/", MaxDelay: time.Hour, Radix: 16},
	"leaders balanced":                  {Name: "delay", VHost: "/", Levels: 3, QueueLeaderLocator: LeaderLocatorBalanced},
	"radix 16, classic, client-local":   {Name: "delay", VHost: "/", Levels: 2, Radix: 16, QueueType: QueueTypeClassic, QueueLeaderLocator: LeaderLocatorClientLocal},
}

func TestInferExplainsPlan(t *testing.T) {
	t.Parallel()
	for name, s := range inferSpecs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := Resolve(s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Infer(s.Name, mustPlan(t, s))
			if err != nil {
				t.Fatalf("Infer: %v", err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Infer(Plan(s)) differs from Resolve(s) (-want +got):\n%s", d)
			}
		})
	}
}

// TestInferPartial removes objects from a plan: as long as one level queue
// with a TTL and the highest level remain, Infer explains the same spec, and
// the Diff against its plan recreates exactly what was removed.
func TestInferPartial(t *testing.T) {
	t.Parallel()
	s := Spec{Name: "delay", VHost: "/", Levels: 4, Resolution: 500 * time.Millisecond,
		Routes: []Route{{Destination: "orders", Key: "orders"}, {Destination: "all"}}}
	full := mustPlan(t, s)
	tests := map[string]func(*Topology){
		"every delay binding missing": func(t *Topology) {
			t.Bindings = slices.DeleteFunc(t.Bindings, func(b Binding) bool { return b.Source != "delay.out" })
		},
		"one done binding missing":             func(t *Topology) { withoutBinding(t, "delay.level.02.done", "delay.level.00", "#.0.1") },
		"lower level queues missing":           func(t *Topology) { withoutQueue(t, "delay.level.00"); withoutQueue(t, "delay.level.01") },
		"top queue missing, its exchange left": func(t *Topology) { withoutQueue(t, "delay.level.03") },
		"top exchange missing, its queue left": func(t *Topology) { withoutExchange(t, "delay.level.03.done") },
		"unroutable queue missing":             func(t *Topology) { withoutQueue(t, "delay.unroutable") },
		"ingest missing":                       func(t *Topology) { withoutExchange(t, "delay.ingest") },
		"some TTLs missing": func(t *Topology) {
			queueNamed(t, "delay.level.00").Arguments.MessageTTL = 0
			queueNamed(t, "delay.level.03").Arguments.MessageTTL = 0
		},
		"at-least-once without reject-publish is still at-least-once": func(t *Topology) {
			queueNamed(t, "delay.level.02").Arguments.Overflow = ""
		},
	}
	want, err := Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			actual := editTopology(full, edit)
			got, err := Infer("delay", actual)
			if err != nil {
				t.Fatalf("Infer: %v", err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("Infer (-want +got):\n%s", d)
			}
			changes := Diff(mustPlan(t, got), actual)
			if len(changes) == 0 {
				t.Fatal("the Diff against the inferred plan is empty, but objects are missing or different")
			}
			repaired, err := applyChanges(actual, changes)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(topologySet(full), topologySet(repaired)); d != "" {
				t.Errorf("the Diff does not restore the plan (-want +got):\n%s", d)
			}
		})
	}
}

// TestInferDrift checks topologies that a hand or another tool changed:
// Infer explains them as the spec they most plausibly meant, and leaves the
// rest to show as drift.
func TestInferDrift(t *testing.T) {
	t.Parallel()
	base := Spec{Name: "delay", VHost: "/", Levels: 2, Routes: []Route{{Destination: "orders", Key: "orders"}}}
	full := mustPlan(t, base)
	var foreign []Topology
	for _, other := range []Spec{
		{Name: "delay.level", VHost: "/", Levels: 5, Resolution: 3 * time.Second, QueueType: QueueTypeClassic,
			Routes: []Route{{Destination: "x"}}},
		{Name: "delay.out", VHost: "/", Levels: 3, Resolution: 7 * time.Millisecond,
			Routes: []Route{{Destination: "y", Key: "y"}}},
		{Name: "delay.level.07", VHost: "/", Levels: 1, QueueType: QueueTypeClassic},
		{Name: "delayed", VHost: "/", Levels: 6},
	} {
		foreign = append(foreign, mustPlan(t, other))
	}
	tests := map[string]struct {
		edit func(*Topology)
		want Spec
	}{
		"quorum queues without a strategy are at-most-once": {
			edit: func(t *Topology) {
				for i := range t.Queues {
					t.Queues[i].Arguments.DeadLetterStrategy, t.Queues[i].Arguments.Overflow = "", ""
				}
			},
			want: Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum,
				DeadLetterStrategy: AtMostOnce, Routes: []Route{{Destination: "orders", DestinationType: DestinationQueue, Key: "orders"}}},
		},
		"explicit and implicit at-most-once agree": {
			edit: func(t *Topology) {
				for i := range t.Queues {
					t.Queues[i].Arguments.DeadLetterStrategy, t.Queues[i].Arguments.Overflow = AtMostOnce, ""
				}
				queueNamed(t, "delay.level.01").Arguments.DeadLetterStrategy = ""
			},
			want: Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum,
				DeadLetterStrategy: AtMostOnce, Routes: []Route{{Destination: "orders", DestinationType: DestinationQueue, Key: "orders"}}},
		},
		"queues without x-queue-type are classic, a strategy on them is drift": {
			edit: func(t *Topology) {
				for i := range t.Queues {
					t.Queues[i].Arguments.QueueType = ""
				}
			},
			want: Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 2, Resolution: time.Second, QueueType: QueueTypeClassic,
				DeadLetterStrategy: AtMostOnce, Routes: []Route{{Destination: "orders", DestinationType: DestinationQueue, Key: "orders"}}},
		},
		"bindings of out that are no route are left out": {
			edit: func(t *Topology) {
				t.VHost = "other"
				t.Bindings = append(t.Bindings,
					Binding{Source: "delay.out", Destination: "short", DestinationType: DestinationQueue, RoutingKey: "orders.*"},
					Binding{Source: "delay.out", Destination: "hash", DestinationType: DestinationQueue, RoutingKey: "#"},
					Binding{Source: "delay.out", Destination: "stars", DestinationType: DestinationQueue, RoutingKey: "*.*"},
					Binding{Source: "delay.out", Destination: "digits", DestinationType: DestinationQueue, RoutingKey: "a.0.1"},
					Binding{Source: "delay.out", Destination: "wild", DestinationType: DestinationQueue, RoutingKey: "a.#.*.*"},
					Binding{Source: "delay.out", Destination: "empty.word", DestinationType: DestinationQueue, RoutingKey: "a..*.*"},
					Binding{Source: "delay.out", Destination: "delay.ingest", DestinationType: DestinationExchange, RoutingKey: "#.*.*"},
					Binding{Source: "delay.ingest", Destination: "elsewhere", DestinationType: DestinationQueue, RoutingKey: "x.*.*"},
					// An unset destination type is a queue, and a duplicate is one route.
					Binding{Source: "delay.out", Destination: "all", RoutingKey: "#.*.*"},
					Binding{Source: "delay.out", Destination: "all", DestinationType: DestinationQueue, RoutingKey: "#.*.*"},
				)
			},
			want: Spec{Name: "delay", VHost: "other", Levels: 2, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum,
				DeadLetterStrategy: AtLeastOnce, Routes: []Route{
					{Destination: "all", DestinationType: DestinationQueue},
					{Destination: "orders", DestinationType: DestinationQueue, Key: "orders"},
				}},
		},
		"an unroutable queue of another type is drift, not a vote": {
			edit: func(t *Topology) { queueNamed(t, "delay.unroutable").Arguments.QueueType = QueueTypeClassic },
			want: mustResolve(t, base),
		},
		"queues listed twice count once": {
			edit: func(t *Topology) { t.Queues = append(t.Queues, t.Queues...) },
			want: mustResolve(t, base),
		},
		"a level no set can have is ignored": {
			edit: func(t *Topology) {
				t.Queues = append(t.Queues, Queue{Name: "delay.level.40", Arguments: QueueArguments{MessageTTL: 3}})
				t.Exchanges = append(t.Exchanges, Exchange{Name: "delay.level.99.done", Type: ExchangeTopic})
			},
			want: mustResolve(t, base),
		},
		"objects of sets whose names extend this one are ignored": {
			edit: func(t *Topology) {
				for _, p := range foreign {
					t.Exchanges = append(p.Exchanges, t.Exchanges...)
					t.Queues = append(p.Queues, t.Queues...)
					t.Bindings = append(p.Bindings, t.Bindings...)
				}
			},
			want: mustResolve(t, base),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := Infer("delay", editTopology(full, tc.edit))
			if err != nil {
				t.Fatalf("Infer: %v", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Infer (-want +got):\n%s", d)
			}
		})
	}
}

func mustResolve(t *testing.T, s Spec) Spec {
	t.Helper()
	r, err := Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestInferErrors checks that every topology no spec explains fails with
// an *InferError whose reasons name the objects at fault.
func TestInferErrors(t *testing.T) {
	t.Parallel()
	full := mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 3})
	tests := map[string]struct {
		name    string // the set name; "delay" when empty
		actual  Topology
		reasons []string
	}{
		"nothing of the set": {
			actual: mustPlan(t, Spec{Name: "delayed", VHost: "/", Levels: 2}),
			reasons: []string{
				"no level queue (delay.level.00 …) nor done exchange (delay.level.00.done …) exists, so the number of levels is unknown",
			},
		},
		"only objects without a level": {
			actual: editTopology(full, func(t *Topology) {
				for k := range 3 {
					withoutQueue(t, Names("delay").Level(k))
					withoutExchange(t, Names("delay").Done(k))
				}
			}),
			reasons: []string{
				"no level queue (delay.level.00 …) nor done exchange (delay.level.00.done …) exists, so the number of levels is unknown",
			},
		},
		"no level queue left": {
			actual: editTopology(full, func(t *Topology) {
				for k := range 3 {
					withoutQueue(t, Names("delay").Level(k))
				}
			}),
			reasons: []string{
				"no level queue (delay.level.00 …) exists, so the resolution cannot be read from an x-message-ttl",
			},
		},
		"no queue at all": {
			actual: editTopology(full, func(t *Topology) {
				for _, q := range slices.Clone(t.Queues) {
					withoutQueue(t, q.Name)
				}
			}),
			reasons: []string{
				"no level queue (delay.level.00 …) exists, so the resolution cannot be read from an x-message-ttl",
			},
		},
		"no TTL left": {
			actual: editTopology(full, func(t *Topology) {
				withoutQueue(t, "delay.level.01")
				queueNamed(t, "delay.level.00").Arguments.MessageTTL = 0
				queueNamed(t, "delay.level.02").Arguments.MessageTTL = -5
			}),
			reasons: []string{
				"no level queue has an x-message-ttl (delay.level.00, delay.level.02), so the resolution is unknown",
			},
		},
		"mixed TTLs": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.01").Arguments.MessageTTL = 3000
			}),
			reasons: []string{
				"the level queues disagree on the resolution: delay.level.00 x-message-ttl 1000 (resolution 1s), delay.level.01 x-message-ttl 3000 (resolution 1.5s), delay.level.02 x-message-ttl 4000 (resolution 1s)",
			},
		},
		"TTL not a multiple of its level's power of two": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.02").Arguments.MessageTTL = 4001
			}),
			reasons: []string{"delay.level.02 has x-message-ttl 4001, not a multiple of 2^2 = 4"},
		},
		"mixed queue types": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.01").Arguments.QueueType = ""
				queueNamed(t, "delay.unroutable").Arguments.QueueType = QueueTypeClassic
			}),
			reasons: []string{
				"the level queues disagree on x-queue-type: delay.level.00, delay.level.02 are quorum; delay.level.01 is classic",
			},
		},
		"unknown queue type": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.00").Arguments.QueueType = "stream"
			}),
			reasons: []string{"delay.level.00 has x-queue-type stream; a delay set's queues are quorum or classic"},
		},
		"mixed strategies": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.01").Arguments.DeadLetterStrategy = AtMostOnce
			}),
			reasons: []string{
				"the level queues disagree on x-dead-letter-strategy: delay.level.00, delay.level.02 are at-least-once; delay.level.01 is at-most-once",
			},
		},
		"mixed leader locators": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.01").Arguments.LeaderLocator = LeaderLocatorBalanced
			}),
			reasons: []string{
				"the level queues disagree on x-queue-leader-locator: delay.level.00, delay.level.02 are none; delay.level.01 is balanced",
			},
		},
		"unknown leader locator": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.02").Arguments.LeaderLocator = "min-masters"
			}),
			reasons: []string{"delay.level.02 has x-queue-leader-locator min-masters; a delay set's queues use balanced or client-local or none"},
		},
		"unknown strategy": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.02").Arguments.DeadLetterStrategy = "exactly-once"
			}),
			reasons: []string{
				"delay.level.02 has x-dead-letter-strategy exactly-once; a delay set's queues use at-least-once or at-most-once",
			},
		},
		"every problem at once": {
			actual: editTopology(full, func(t *Topology) {
				queueNamed(t, "delay.level.00").Arguments.MessageTTL = 999
				queueNamed(t, "delay.level.01").Arguments.MessageTTL = 2002
				queueNamed(t, "delay.level.02").Arguments.QueueType = QueueTypeClassic
			}),
			reasons: []string{
				"the level queues disagree on the resolution: delay.level.00 x-message-ttl 999 (resolution 999ms), delay.level.01 x-message-ttl 2002 (resolution 1.001s), delay.level.02 x-message-ttl 4000 (resolution 1s)",
				"the level queues disagree on x-queue-type: delay.level.00, delay.level.01 are quorum; delay.level.02 is classic",
			},
		},
		"top level beyond the broker's largest TTL": {
			actual: editTopology(full, func(t *Topology) {
				t.Exchanges = append(t.Exchanges, Exchange{Name: "delay.level.31.done", Type: ExchangeTopic})
			}),
			reasons: []string{
				"the inferred spec is invalid: levels: 32 levels at resolution 1s give the top level a TTL of 1000ms·2^31, above the broker's largest message TTL 315360000000ms (10 years); at most 29 levels fit at this resolution",
			},
		},
		"a name no set can have": {
			name:   "amq.delay",
			actual: mustPlan(t, Spec{Name: "amq-delay", VHost: "/", Levels: 1}),
			reasons: []string{
				"no level queue (amq.delay.level.00 …) nor done exchange (amq.delay.level.00.done …) exists, so the number of levels is unknown",
			},
		},
		"a name no set can have, with its objects": {
			name: "amq.delay",
			actual: Topology{VHost: "/", Queues: []Queue{{Name: "amq.delay.level.00", Arguments: QueueArguments{
				MessageTTL: 1000, QueueType: QueueTypeClassic}}}},
			reasons: []string{
				`the inferred spec is invalid: name: must not start with "amq.": the broker reserves those names`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			setName := tc.name
			if setName == "" {
				setName = "delay"
			}
			got, err := Infer(setName, tc.actual)
			var inferErr *InferError
			if !errors.As(err, &inferErr) {
				t.Fatalf("Infer = %+v, %v; want an *InferError", got, err)
			}
			if d := cmp.Diff(&InferError{Name: setName, Reasons: tc.reasons}, inferErr); d != "" {
				t.Errorf("InferError (-want +got):\n%s", d)
			}
			if !cmp.Equal(got, Spec{}) {
				t.Errorf("Infer returned %+v with its error; want the zero Spec", got)
			}
		})
	}
}

func TestInferErrorMessage(t *testing.T) {
	t.Parallel()
	err := &InferError{Name: "delay", Reasons: []string{"first problem", "second problem"}}
	want := `cannot infer delay set "delay" from its objects: first problem; second problem`
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// fuzzText maps the bytes of raw that are not in alphabet onto it, so that
// the fuzzer spends its time on names and keys a user could write rather
// than on ones Validate refuses at once; seeds in the alphabet stay as written.
func fuzzText(raw, alphabet string) string {
	b := []byte(raw)
	for i, c := range b {
		if strings.IndexByte(alphabet, c) < 0 {
			b[i] = alphabet[int(c)%len(alphabet)]
		}
	}
	return string(b)
}

// FuzzPlanInfer plans a spec built from the inputs and checks that Infer
// explains the plan as exactly the resolved spec, and that a plan differs
// from itself in nothing.
func FuzzPlanInfer(f *testing.F) {
	// name, levels, resolution in ms (bits 20–22: the quorum initial group
	// size, 0 for none), choice (bits 0–1: queue type and strategy; bit 2:
	// the first route goes to an exchange; bit 3: a second route with the
	// empty key; bit 4: destinations prefixed with the set name; bits 5–6:
	// the radix, the zero value (2), 4, 8 or 16; bit 7: leaders balanced),
	// route key, route destination.
	f.Add("delay", uint8(4), uint64(1000), uint8(0), "orders", "orders")          // the defaults, one route
	f.Add("d", uint8(1), uint64(1), uint8(1), "", "q")                            // one level, 1 ms, classic, route of every message
	f.Add("wide", uint8(32), uint64(3), uint8(2), "a.b", "x")                     // 32 levels at the smallest resolution that still fits
	f.Add("delay", uint8(3), uint64(250), uint8(3|4|8), "0.1", "ex")              // a key made of digits, routes to an exchange and a queue
	f.Add("delay.level", uint8(2), uint64(1000), uint8(16), "level", "level.00x") // names that look like the set's own objects
	f.Add("Team_a-1:x", uint8(33), uint64(1000), uint8(0), "k", "q")              // too many levels: skipped by Validate
	f.Add("delay", uint8(3), uint64(1000), uint8(32), "orders", "orders")         // radix 4
	f.Add("delay", uint8(4), uint64(100), uint8(64|2), "", "q")                   // radix 8, classic
	f.Add("delay", uint8(9), uint64(1), uint8(96), "a.15", "x")                   // radix 16, the most levels at 1 ms
	f.Add("delay.r16", uint8(2), uint64(1000), uint8(96|16), "15.0", "r16.00.15") // names that look like radix-16 objects
	f.Add("delay", uint8(10), uint64(1), uint8(96), "k", "q")                     // radix 16, one level too many: skipped
	f.Add("delay", uint8(2), uint64(100), uint8(128|96), "k", "q")                // radix 16, leaders balanced
	f.Add("delay", uint8(2), uint64(3<<20|100), uint8(128|96), "k", "q")          // radix 16, replicas on 3 nodes
	f.Add("delay", uint8(4), uint64(1<<20|1000), uint8(1), "orders", "orders")    // at-most-once, one replica
	f.Add("delay", uint8(4), uint64(2<<20|1000), uint8(2), "k", "q")              // classic with a group size: skipped
	f.Fuzz(func(t *testing.T, rawName string, levels uint8, resolutionMs uint64, choice uint8, rawKey, rawDestination string) {
		name := fuzzText(rawName, "abcdefghijklmnopqrstuvwxyzAZ0189._-:")
		key := fuzzText(rawKey, "ab01.")
		destination := fuzzText(rawDestination, "abxyz01.-")
		if choice&16 != 0 {
			destination = name + "." + destination
		}
		s := Spec{
			Name:   name,
			VHost:  "/",
			Levels: int(levels),
			// Up to about 17 minutes, so that most level counts fit the broker's
			// largest TTL; 0 stands for the default.
			Resolution: time.Duration(resolutionMs%(1<<20)) * time.Millisecond,
			QueueType:  []QueueType{QueueTypeQuorum, QueueTypeQuorum, QueueTypeClassic, ""}[choice&3],
			DeadLetterStrategy: []DeadLetterStrategy{
				AtLeastOnce, AtMostOnce, AtMostOnce, ""}[choice&3],
			Radix:              []int{0, 4, 8, 16}[choice>>5&3],
			QueueLeaderLocator: []LeaderLocator{"", LeaderLocatorBalanced}[choice>>7],
			Routes:             []Route{{Destination: destination, Key: key}},
		}
		s.QuorumInitialGroupSize = int(resolutionMs >> 20 & 7)
		if choice&4 != 0 {
			s.Routes[0].DestinationType = DestinationExchange
		}
		if choice&8 != 0 {
			s.Routes = append(s.Routes, Route{Destination: destination + ".all"})
		}
		if Validate(s) != nil {
			t.Skip()
		}
		want, err := Resolve(s)
		if err != nil {
			t.Fatalf("Validate accepts %+v but Resolve refuses it: %v", s, err)
		}
		plan, err := Plan(s)
		if err != nil {
			t.Fatalf("Validate accepts %+v but Plan refuses it: %v", s, err)
		}
		got, err := Infer(s.Name, plan)
		if err != nil {
			t.Fatalf("Infer(Plan(%+v)): %v", s, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("Infer(Plan(%+v)) differs from Resolve (-want +got):\n%s", s, d)
		}
		if changes := Diff(plan, plan); len(changes) != 0 {
			t.Fatalf("Diff of the plan of %+v with itself: %v", s, changeLines(changes))
		}
	})
}

// TestInferPartialRadix removes objects from plans of radix 4 and 16: as
// long as one TTL queue with a TTL and the highest level remain, Infer
// explains the same spec, and the Diff restores the plan.
func TestInferPartialRadix(t *testing.T) {
	t.Parallel()
	for _, radix := range []int{4, 16} {
		s := Spec{Name: "delay", VHost: "/", Levels: 3, Radix: radix, Resolution: 250 * time.Millisecond,
			Routes: []Route{{Destination: "orders", Key: "orders"}}}
		names := Names("delay")
		full := mustPlan(t, s)
		tests := map[string]func(*Topology){
			"every delay binding missing": func(t *Topology) {
				t.Bindings = slices.DeleteFunc(t.Bindings, func(b Binding) bool { return b.Source != "delay.out" })
			},
			"all but the top digit's queue missing": func(t *Topology) {
				for _, q := range full.Queues {
					if q.Name != names.Queue(radix, 2, radix-1) {
						withoutQueue(t, q.Name)
					}
				}
			},
			"only the lowest queue and the top done exchange left": func(t *Topology) {
				for _, q := range full.Queues {
					if q.Name != names.Queue(radix, 0, 1) {
						withoutQueue(t, q.Name)
					}
				}
				withoutExchange(t, names.LevelDone(radix, 0))
				withoutExchange(t, names.LevelDone(radix, 1))
			},
			"some TTLs missing": func(t *Topology) {
				queueNamed(t, names.Queue(radix, 0, 1)).Arguments.MessageTTL = 0
				queueNamed(t, names.Queue(radix, 2, 2)).Arguments.MessageTTL = 0
			},
		}
		want, err := Resolve(s)
		if err != nil {
			t.Fatal(err)
		}
		for name, edit := range tests {
			t.Run(fmt.Sprintf("r=%d/%s", radix, name), func(t *testing.T) {
				t.Parallel()
				actual := editTopology(full, edit)
				got, err := Infer("delay", actual)
				if err != nil {
					t.Fatalf("Infer: %v", err)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("Infer (-want +got):\n%s", d)
				}
				repaired, err := applyChanges(actual, Diff(mustPlan(t, got), actual))
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(topologySet(full), topologySet(repaired)); d != "" {
					t.Errorf("the Diff does not restore the plan (-want +got):\n%s", d)
				}
			})
		}
	}
}

// TestInferRadixErrors checks the reasons Infer gives for topologies of a
// radix other than 2 that no spec explains.
func TestInferRadixErrors(t *testing.T) {
	t.Parallel()
	r4 := mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 4})
	binary := mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 1})
	tests := map[string]struct {
		actual  Topology
		reasons []string
	}{
		"two radixes": {
			actual: Topology{VHost: "/", Exchanges: append(slices.Clone(r4.Exchanges), binary.Exchanges[1]),
				Queues: append(slices.Clone(r4.Queues), binary.Queues[0])},
			reasons: []string{"the level queues and done exchanges disagree on the radix: " +
				"delay.level.00, delay.level.00.done are of radix 2; " +
				"delay.r4.00.1, delay.r4.00.2, delay.r4.00.3, delay.r4.01.1, delay.r4.01.2, delay.r4.01.3, delay.r4.00.done, delay.r4.01.done are of radix 4"},
		},
		"a TTL that is no multiple of its digit's ticks": {
			actual:  editTopology(r4, func(t *Topology) { queueNamed(t, "delay.r4.01.3").Arguments.MessageTTL = 1000 }),
			reasons: []string{"delay.r4.01.3 has x-message-ttl 1000, not a multiple of 3·4^1 = 12"},
		},
		"queues disagree on the resolution": {
			actual: editTopology(r4, func(t *Topology) { queueNamed(t, "delay.r4.01.2").Arguments.MessageTTL = 16 }),
			reasons: []string{"the level queues disagree on the resolution: " +
				"delay.r4.00.1 x-message-ttl 1000 (resolution 1s), delay.r4.00.2 x-message-ttl 2000 (resolution 1s), " +
				"delay.r4.00.3 x-message-ttl 3000 (resolution 1s), delay.r4.01.1 x-message-ttl 4000 (resolution 1s), " +
				"delay.r4.01.2 x-message-ttl 16 (resolution 2ms), delay.r4.01.3 x-message-ttl 12000 (resolution 1s)"},
		},
		"only done exchanges": {
			actual: Topology{VHost: "/", Exchanges: r4.Exchanges},
			reasons: []string{
				"no level queue (delay.r4.00.1 …) exists, so the resolution cannot be read from an x-message-ttl",
			},
		},
		"a level no TTL reaches": {
			actual: Topology{VHost: "/", Queues: []Queue{{Name: "delay.r16.20.1", Arguments: QueueArguments{
				MessageTTL: 1000, DeadLetterExchange: "delay.r16.20.done", QueueType: QueueTypeClassic}}}},
			reasons: []string{"delay.r16.20.1 has x-message-ttl 1000, not a multiple of 1·16^20 = 9223372036854775807"},
		},
		"a level of radix 16 beyond the TTL limit": {
			actual: Topology{VHost: "/", Queues: []Queue{{Name: "delay.r16.09.1", Arguments: QueueArguments{
				MessageTTL: 1 << 36, DeadLetterExchange: "delay.r16.09.done", QueueType: QueueTypeClassic}}}},
			reasons: []string{"the inferred spec is invalid: levels: 10 levels of radix 16 at resolution 1ms give the top queue a TTL of 1ms·15·16^9, " +
				"above the broker's largest message TTL 315360000000ms (10 years); at most 9 levels fit at this resolution and radix"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := Infer("delay", tc.actual)
			var inferErr *InferError
			if !errors.As(err, &inferErr) {
				t.Fatalf("Infer = %+v, %v; want an *InferError", got, err)
			}
			if d := cmp.Diff(&InferError{Name: "delay", Reasons: tc.reasons}, inferErr); d != "" {
				t.Errorf("InferError (-want +got):\n%s", d)
			}
		})
	}
}
