package topology

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// planGoldenText renders a topology one object a line, for golden files
// that a reviewer can read.
func planGoldenText(top Topology) string {
	var b strings.Builder
	fmt.Fprintf(&b, "vhost %q\n", top.VHost)
	for _, e := range top.Exchanges {
		fmt.Fprintf(&b, "exchange %s %s", e.Name, e.Type)
		if e.Arguments.AlternateExchange != "" {
			fmt.Fprintf(&b, " alternate-exchange=%s", e.Arguments.AlternateExchange)
		}
		b.WriteString("\n")
	}
	for _, q := range top.Queues {
		a := q.Arguments
		fmt.Fprintf(&b, "queue %s x-queue-type=%s", q.Name, a.QueueType)
		if a.MessageTTL != 0 {
			fmt.Fprintf(&b, " x-message-ttl=%d", a.MessageTTL)
		}
		if a.DeadLetterExchange != "" {
			fmt.Fprintf(&b, " x-dead-letter-exchange=%s", a.DeadLetterExchange)
		}
		if a.DeadLetterStrategy != "" {
			fmt.Fprintf(&b, " x-dead-letter-strategy=%s", a.DeadLetterStrategy)
		}
		if a.Overflow != "" {
			fmt.Fprintf(&b, " x-overflow=%s", a.Overflow)
		}
		if a.LeaderLocator != "" {
			fmt.Fprintf(&b, " x-queue-leader-locator=%s", a.LeaderLocator)
		}
		if a.QuorumInitialGroupSize != 0 {
			fmt.Fprintf(&b, " x-quorum-initial-group-size=%d", a.QuorumInitialGroupSize)
		}
		b.WriteString("\n")
	}
	for _, binding := range top.Bindings {
		fmt.Fprintf(&b, "binding %s -> %s %s key %q\n", binding.Source, binding.DestinationType, binding.Destination, binding.RoutingKey)
	}
	return b.String()
}

// planSpecN4 is the design's example: 4 levels of one second, one route.
var planSpecN4 = Spec{Name: "delay", VHost: "/", Levels: 4, Resolution: time.Second,
	Routes: []Route{{Destination: "orders", Key: "orders.eu"}}}

// planSpecNServiceBus is an NServiceBus system: two endpoints bound the
// conventional way (a fanout exchange per endpoint) and one the direct way
// (its queue).
var planSpecNServiceBus = Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, Routes: []Route{
	{Destination: "Sales", DestinationType: DestinationExchange, Key: "Sales"},
	{Destination: "Billing", DestinationType: DestinationExchange, Key: "Billing"},
	{Destination: "Shipping", Key: "Shipping"},
}}

// planSpecCelery is a Celery app whose task queues are bound to topic
// exchanges, one with a wildcard key, and one catch-all.
var planSpecCelery = Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, Routes: []Route{
	{Destination: "celery", DestinationType: DestinationExchange, Key: "celery"},
	{Destination: "tasks", DestinationType: DestinationExchange, Key: "tasks.#"},
	{Destination: "everything", DestinationType: DestinationExchange},
}}

// planSpecCeleryClassic is planSpecCelery on classic queues.
var planSpecCeleryClassic = func() Spec {
	s := planSpecCelery
	s.QueueType = QueueTypeClassic
	return s
}()

func TestPlanGolden(t *testing.T) {
	t.Parallel()
	radix := func(radix, levels int) Spec {
		s := planSpecN4
		s.Radix, s.Levels = radix, levels
		return s
	}
	tests := map[string]Spec{
		"plan_n4_r1s.golden":         planSpecN4, // radix 2, unchanged since the layout began
		"plan_radix4_n3_r1s.golden":  radix(4, 3),
		"plan_radix16_n2_r1s.golden": radix(16, 2),
		// Leaders spread: every TTL queue, not the parking lot, whose
		// arguments outlive the set's changes.
		"plan_radix4_n2_r1s_balanced.golden": func() Spec {
			s := radix(4, 2)
			s.QueueLeaderLocator = LeaderLocatorBalanced
			return s
		}(),
		// Replicas on 3 nodes: every TTL queue, not the parking lot.
		"plan_radix16_n2_r1s_group3.golden": func() Spec {
			s := radix(16, 2)
			s.QueueLeaderLocator, s.QuorumInitialGroupSize = LeaderLocatorBalanced, 3
			return s
		}(),
		"plan_nservicebus.golden":    planSpecNServiceBus,
		"plan_celery.golden":         planSpecCelery,
		"plan_celery_classic.golden": planSpecCeleryClassic,
	}
	for file, spec := range tests {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			top, err := Plan(spec)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, file, []byte(planGoldenText(top)))
		})
	}
}

func TestPlanRadix4N2(t *testing.T) {
	t.Parallel()
	top, err := Plan(Spec{Name: "d", VHost: "/", Levels: 2, Radix: 4, Resolution: time.Second, QueueType: QueueTypeClassic})
	if err != nil {
		t.Fatal(err)
	}
	queue := func(name string, ttl int64, done string) Queue {
		return Queue{Name: name, Arguments: QueueArguments{MessageTTL: ttl, DeadLetterExchange: done, QueueType: QueueTypeClassic}}
	}
	wantQueues := []Queue{
		queue("d.r4.00.1", 1000, "d.r4.00.done"), queue("d.r4.00.2", 2000, "d.r4.00.done"), queue("d.r4.00.3", 3000, "d.r4.00.done"),
		queue("d.r4.01.1", 4000, "d.r4.01.done"), queue("d.r4.01.2", 8000, "d.r4.01.done"), queue("d.r4.01.3", 12000, "d.r4.01.done"),
		{Name: "d.unroutable", Arguments: QueueArguments{QueueType: QueueTypeClassic}},
	}
	if diff := cmp.Diff(wantQueues, top.Queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	var got []string
	for _, b := range top.Bindings {
		got = append(got, fmt.Sprintf("%s -> %s %q", b.Source, b.Destination, b.RoutingKey))
	}
	want := []string{
		`d.ingest -> d.r4.01.1 "#.1.*"`,
		`d.ingest -> d.r4.01.2 "#.2.*"`,
		`d.ingest -> d.r4.01.3 "#.3.*"`,
		`d.ingest -> d.r4.00.1 "#.0.1"`,
		`d.ingest -> d.r4.00.2 "#.0.2"`,
		`d.ingest -> d.r4.00.3 "#.0.3"`,
		`d.ingest -> d.out "#.0.0"`,
		`d.r4.00.done -> d.out "#"`,
		`d.r4.01.done -> d.r4.00.1 "#.1"`,
		`d.r4.01.done -> d.r4.00.2 "#.2"`,
		`d.r4.01.done -> d.r4.00.3 "#.3"`,
		`d.r4.01.done -> d.out "#.0"`,
		`d.unroutable -> d.unroutable ""`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
}

func TestPlanN4DelayBindings(t *testing.T) {
	t.Parallel()
	top, err := Plan(planSpecN4)
	if err != nil {
		t.Fatal(err)
	}
	queue := func(source, destination, key string) Binding {
		return Binding{Source: source, Destination: destination, DestinationType: DestinationQueue, RoutingKey: key}
	}
	exchange := func(source, destination, key string) Binding {
		return Binding{Source: source, Destination: destination, DestinationType: DestinationExchange, RoutingKey: key}
	}
	// The 15 delay bindings of the original design, then the parking lot and the route.
	want := []Binding{
		queue("delay.ingest", "delay.level.03", "#.1.*.*.*"),
		queue("delay.ingest", "delay.level.02", "#.0.1.*.*"),
		queue("delay.ingest", "delay.level.01", "#.0.0.1.*"),
		queue("delay.ingest", "delay.level.00", "#.0.0.0.1"),
		exchange("delay.ingest", "delay.out", "#.0.0.0.0"),
		exchange("delay.level.00.done", "delay.out", "#"),
		queue("delay.level.01.done", "delay.level.00", "#.1"),
		exchange("delay.level.01.done", "delay.out", "#.0"),
		queue("delay.level.02.done", "delay.level.01", "#.1.*"),
		queue("delay.level.02.done", "delay.level.00", "#.0.1"),
		exchange("delay.level.02.done", "delay.out", "#.0.0"),
		queue("delay.level.03.done", "delay.level.02", "#.1.*.*"),
		queue("delay.level.03.done", "delay.level.01", "#.0.1.*"),
		queue("delay.level.03.done", "delay.level.00", "#.0.0.1"),
		exchange("delay.level.03.done", "delay.out", "#.0.0.0"),
		queue("delay.unroutable", "delay.unroutable", ""),
		queue("delay.out", "orders", "orders.eu.*.*.*.*"),
	}
	if diff := cmp.Diff(want, top.Bindings); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
}

func TestPlanN2Objects(t *testing.T) {
	t.Parallel()
	alternate := ExchangeArguments{AlternateExchange: "d.unroutable"}
	wantExchanges := []Exchange{
		{Name: "d.ingest", Type: ExchangeTopic, Arguments: alternate},
		{Name: "d.level.00.done", Type: ExchangeTopic, Arguments: alternate},
		{Name: "d.level.01.done", Type: ExchangeTopic, Arguments: alternate},
		{Name: "d.out", Type: ExchangeTopic, Arguments: alternate},
		{Name: "d.unroutable", Type: ExchangeFanout},
	}
	tests := map[string]struct {
		queueType      QueueType
		strategy       DeadLetterStrategy
		wantStrategy   DeadLetterStrategy
		wantOverflow   string
		wantUnroutable QueueArguments
	}{
		"quorum at-least-once rejects publishes": {QueueTypeQuorum, "", AtLeastOnce, "reject-publish", QueueArguments{QueueType: QueueTypeQuorum}},
		"quorum at-most-once":                    {"", AtMostOnce, AtMostOnce, "", QueueArguments{QueueType: QueueTypeQuorum}},
		"classic names no strategy":              {QueueTypeClassic, AtMostOnce, "", "", QueueArguments{QueueType: QueueTypeClassic}},
		"classic by default":                     {QueueTypeClassic, "", "", "", QueueArguments{QueueType: QueueTypeClassic}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			top, err := Plan(Spec{Name: "d", VHost: "v", Levels: 2, Resolution: 250 * time.Millisecond,
				QueueType: tc.queueType, DeadLetterStrategy: tc.strategy,
				Routes: []Route{{Destination: "all", DestinationType: DestinationExchange}}})
			if err != nil {
				t.Fatal(err)
			}
			queueType := tc.wantUnroutable.QueueType
			want := Topology{
				VHost:     "v",
				Exchanges: wantExchanges,
				Queues: []Queue{
					{Name: "d.level.00", Arguments: QueueArguments{MessageTTL: 250, DeadLetterExchange: "d.level.00.done",
						QueueType: queueType, DeadLetterStrategy: tc.wantStrategy, Overflow: tc.wantOverflow}},
					{Name: "d.level.01", Arguments: QueueArguments{MessageTTL: 500, DeadLetterExchange: "d.level.01.done",
						QueueType: queueType, DeadLetterStrategy: tc.wantStrategy, Overflow: tc.wantOverflow}},
					{Name: "d.unroutable", Arguments: tc.wantUnroutable},
				},
				Bindings: []Binding{
					{Source: "d.ingest", Destination: "d.level.01", DestinationType: DestinationQueue, RoutingKey: "#.1.*"},
					{Source: "d.ingest", Destination: "d.level.00", DestinationType: DestinationQueue, RoutingKey: "#.0.1"},
					{Source: "d.ingest", Destination: "d.out", DestinationType: DestinationExchange, RoutingKey: "#.0.0"},
					{Source: "d.level.00.done", Destination: "d.out", DestinationType: DestinationExchange, RoutingKey: "#"},
					{Source: "d.level.01.done", Destination: "d.level.00", DestinationType: DestinationQueue, RoutingKey: "#.1"},
					{Source: "d.level.01.done", Destination: "d.out", DestinationType: DestinationExchange, RoutingKey: "#.0"},
					{Source: "d.unroutable", Destination: "d.unroutable", DestinationType: DestinationQueue},
					{Source: "d.out", Destination: "all", DestinationType: DestinationExchange, RoutingKey: "#.*.*"},
				},
			}
			if diff := cmp.Diff(want, top); diff != "" {
				t.Errorf("Plan() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanIsStable(t *testing.T) {
	t.Parallel()
	spec := Spec{Name: "delay", VHost: "/", MaxDelay: time.Hour, Routes: []Route{
		{Destination: "b", Key: "x"}, {Destination: "a", Key: "y"}, {Destination: "a", DestinationType: DestinationExchange},
	}}
	first, err := Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("two plans of one spec differ (-first +second):\n%s", diff)
	}
	// The routes' order in the spec does not matter, nor spelling the defaults.
	spec.Routes = []Route{
		{Destination: "a", DestinationType: DestinationExchange}, {Destination: "b", DestinationType: DestinationQueue, Key: "x"}, {Destination: "a", Key: "y"},
	}
	spec.QueueType = QueueTypeQuorum
	reordered, err := Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, reordered); diff != "" {
		t.Errorf("reordered routes plan differently (-first +reordered):\n%s", diff)
	}
}

func TestPlanResolvedSpecsAgree(t *testing.T) {
	t.Parallel()
	for name, tc := range specValidCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fromSpec, err := Plan(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			fromCanonical, err := Plan(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fromCanonical, fromSpec); diff != "" {
				t.Errorf("Plan(spec) and Plan(Resolve(spec)) differ (-canonical +spec):\n%s", diff)
			}
			wantBindings := planDelayBindings(tc.want.Levels) + 1 + len(tc.want.Routes)
			if tc.want.Layout != "" {
				wantBindings = 2*28 + len(tc.want.Routes) // to its queue and to the next exchange, per level
			}
			if len(fromSpec.Bindings) != wantBindings {
				t.Errorf("%d bindings", len(fromSpec.Bindings))
			}
		})
	}
}

func TestPlanRefusesInvalidSpecs(t *testing.T) {
	t.Parallel()
	top, err := Plan(Spec{Name: "delay", VHost: "/", Levels: 33})
	var errs ValidationErrors
	if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Field != "levels" {
		t.Fatalf("Plan() error = %v, want one levels error", err)
	}
	if diff := cmp.Diff(Topology{}, top); diff != "" {
		t.Errorf("Plan() returned objects with its error:\n%s", diff)
	}
}

// planDelayBindings is N+1 + N(N+1)/2: ingest has N+1 bindings, level k's done exchange k+1.
func planDelayBindings(levels int) int { return planDelayBindingsRadix(levels, 2) }

// planDelayBindingsRadix is (r−1)·N(N+1)/2 + N+1: ingest has (r−1)·N + 1
// bindings, level k's done exchange (r−1)·k + 1.
func planDelayBindingsRadix(levels, radix int) int { return (radix-1)*levels*(levels+1)/2 + levels + 1 }

// TestPlanRadixCountsAndReferences checks, for every radix and every number
// of levels that fits at 1 ms, the object and binding counts of the layout
// and that every binding and dead-letter exchange names an object of the
// plan, counting the bindings by source on the plan itself.
func TestPlanRadixCountsAndReferences(t *testing.T) {
	t.Parallel()
	for _, radix := range Radixes {
		for levels := MinLevels; levels <= maxLevelsAt(radix, time.Millisecond); levels++ {
			top, err := Plan(Spec{Name: "delay", VHost: "/", Levels: levels, Radix: radix, Resolution: time.Millisecond})
			if err != nil {
				t.Fatalf("radix %d, %d levels: %v", radix, levels, err)
			}
			if got, want := len(top.Exchanges), levels+3; got != want {
				t.Errorf("radix %d, %d levels: %d exchanges, want N+3 = %d", radix, levels, got, want)
			}
			if got, want := len(top.Queues), (radix-1)*levels+1; got != want {
				t.Errorf("radix %d, %d levels: %d queues, want (r−1)·N+1 = %d", radix, levels, got, want)
			}
			objects := map[string]bool{}
			for _, e := range top.Exchanges {
				objects["exchange "+e.Name] = true
			}
			for _, q := range top.Queues {
				objects["queue "+q.Name] = true
				if q.Arguments.DeadLetterExchange != "" && !objects["exchange "+q.Arguments.DeadLetterExchange] {
					t.Errorf("queue %s dead-letters to unknown %s", q.Name, q.Arguments.DeadLetterExchange)
				}
				if q.Arguments.MessageTTL > MaxTTL {
					t.Errorf("queue %s has TTL %d", q.Name, q.Arguments.MessageTTL)
				}
			}
			bySource := map[string]int{}
			for _, b := range top.Bindings {
				if !objects["exchange "+b.Source] || !objects[string(b.DestinationType)+" "+b.Destination] {
					t.Errorf("binding with an unknown end: %v", b)
				}
				bySource[b.Source]++
			}
			names := Names("delay")
			if got, want := bySource[names.Ingest()], (radix-1)*levels+1; got != want {
				t.Errorf("radix %d, %d levels: ingest has %d bindings, want %d", radix, levels, got, want)
			}
			delayBindings := bySource[names.Ingest()]
			for k := range levels {
				if got, want := bySource[names.LevelDone(radix, k)], (radix-1)*k+1; got != want {
					t.Errorf("radix %d, %d levels: level %d's done exchange has %d bindings, want %d", radix, levels, k, got, want)
				}
				delayBindings += bySource[names.LevelDone(radix, k)]
			}
			if want := planDelayBindingsRadix(levels, radix); delayBindings != want {
				t.Errorf("radix %d, %d levels: %d delay bindings, want (r−1)·N(N+1)/2 + N + 1 = %d", radix, levels, delayBindings, want)
			}
		}
	}
}

func TestPlanCountsAndReferences(t *testing.T) {
	t.Parallel()
	routes := []Route{{Destination: "q", Key: "orders"}, {Destination: "x", DestinationType: DestinationExchange}}
	for levels := MinLevels; levels <= MaxLevels; levels++ {
		t.Run(fmt.Sprintf("N=%d", levels), func(t *testing.T) {
			t.Parallel()
			top, err := Plan(Spec{Name: "delay", VHost: "/", Levels: levels, Resolution: time.Millisecond, Routes: routes})
			if err != nil {
				t.Fatal(err)
			}
			names := Names("delay")
			if got, want := len(top.Exchanges), levels+3; got != want {
				t.Errorf("%d exchanges, want N+3 = %d", got, want)
			}
			if got, want := len(top.Queues), levels+1; got != want {
				t.Errorf("%d queues, want N+1 = %d", got, want)
			}
			delayBindings := 0
			exchanges := map[string]bool{}
			queues := map[string]bool{}
			for _, e := range top.Exchanges {
				if exchanges[e.Name] {
					t.Errorf("exchange %s twice", e.Name)
				}
				exchanges[e.Name] = true
				if e.Type == ExchangeTopic && e.Arguments.AlternateExchange != names.Unroutable() {
					t.Errorf("topic exchange %s has alternate exchange %q", e.Name, e.Arguments.AlternateExchange)
				}
			}
			for k, q := range top.Queues[:levels] {
				queues[q.Name] = true
				if q.Name != names.Level(k) || q.Arguments.MessageTTL != 1<<k || q.Arguments.DeadLetterExchange != names.Done(k) {
					t.Errorf("queue %d: %+v", k, q)
				}
			}
			queues[top.Queues[levels].Name] = true
			for _, b := range top.Bindings {
				if !exchanges[b.Source] {
					t.Errorf("binding from unknown exchange: %+v", b)
				}
				if kind := names.parse(b.Source).kind; kind == kindIngest || kind == kindDone {
					delayBindings++
					known := queues[b.Destination]
					if b.DestinationType == DestinationExchange {
						known = exchanges[b.Destination]
					}
					if !known {
						t.Errorf("delay binding to unknown %s: %+v", b.DestinationType, b)
					}
					if len(b.RoutingKey) > MaxNameLength {
						t.Errorf("binding key of %d bytes", len(b.RoutingKey))
					}
				}
			}
			if want := planDelayBindings(levels); delayBindings != want {
				t.Errorf("%d delay bindings, want N+1+N(N+1)/2 = %d", delayBindings, want)
			}
			if got, want := len(top.Bindings), planDelayBindings(levels)+1+len(routes); got != want {
				t.Errorf("%d bindings, want %d", got, want)
			}
		})
	}
}

func BenchmarkPlanRadix16N9(b *testing.B) {
	spec := Spec{Name: "delay", VHost: "/", Levels: 9, Radix: 16, Resolution: time.Millisecond,
		Routes: []Route{{Destination: "orders", Key: "orders.eu"}, {Destination: "all"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Plan(spec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlanN32(b *testing.B) {
	spec := Spec{Name: "delay", VHost: "/", Levels: 32, Resolution: time.Millisecond,
		Routes: []Route{{Destination: "orders", Key: "orders.eu"}, {Destination: "all"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Plan(spec); err != nil {
			b.Fatal(err)
		}
	}
}
