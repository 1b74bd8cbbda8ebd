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

func TestPlanGolden(t *testing.T) {
	t.Parallel()
	top, err := Plan(planSpecN4)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "plan_n4_r1s.golden", []byte(planGoldenText(top)))
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
			if len(fromSpec.Bindings) != planDelayBindings(tc.want.Levels)+1+len(tc.want.Routes) {
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
func planDelayBindings(levels int) int { return levels + 1 + levels*(levels+1)/2 }

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
