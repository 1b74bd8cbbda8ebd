package topology

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func delayedSpec(delays ...int64) DelayedSpec {
	s, err := ResolveDelayed(DelayedSpec{Name: "orders", VHost: "/", DelaysMS: delays, DeliveryType: "topic"})
	if err != nil {
		panic(err)
	}
	return s
}

func TestValidateDelayed(t *testing.T) {
	t.Parallel()
	valid := DelayedSpec{Name: "orders", VHost: "/", DelaysMS: []int64{5000, 0}, DeliveryType: "direct"}
	tests := map[string]struct {
		change func(*DelayedSpec)
		fields []string // the fields refused, in order; none for a valid spec
	}{
		"valid":                {change: func(*DelayedSpec) {}},
		"defaults":             {change: func(s *DelayedSpec) { s.DeliveryType = "" }},
		"no name":              {change: func(s *DelayedSpec) { s.Name = "" }, fields: []string{"name"}},
		"name too long":        {change: func(s *DelayedSpec) { s.Name = strings.Repeat("a", MaxDelayedNameLength+1) }, fields: []string{"name"}},
		"longest name":         {change: func(s *DelayedSpec) { s.Name = strings.Repeat("a", MaxDelayedNameLength) }},
		"bad character":        {change: func(s *DelayedSpec) { s.Name = "or ders" }, fields: []string{"name"}},
		"reserved":             {change: func(s *DelayedSpec) { s.Name = "amq.delayed" }, fields: []string{"name"}},
		"no delays":            {change: func(s *DelayedSpec) { s.DelaysMS = nil }, fields: []string{"delays_ms"}},
		"negative":             {change: func(s *DelayedSpec) { s.DelaysMS = []int64{-1} }, fields: []string{"delays_ms"}},
		"past the TTL limit":   {change: func(s *DelayedSpec) { s.DelaysMS = []int64{MaxTTL + 1} }, fields: []string{"delays_ms"}},
		"at the TTL limit":     {change: func(s *DelayedSpec) { s.DelaysMS = []int64{MaxTTL} }},
		"twice":                {change: func(s *DelayedSpec) { s.DelaysMS = []int64{5, 5} }, fields: []string{"delays_ms"}},
		"unknown type":         {change: func(s *DelayedSpec) { s.DeliveryType = "x-delayed-message" }, fields: []string{"delivery_type"}},
		"classic at-least-one": {change: func(s *DelayedSpec) { s.QueueType, s.DeadLetterStrategy = QueueTypeClassic, AtLeastOnce }, fields: []string{"dead_letter_strategy"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := valid
			s.DelaysMS = append([]int64(nil), valid.DelaysMS...)
			tc.change(&s)
			var fields []string
			var problems ValidationErrors
			if err := ValidateDelayed(s); errors.As(err, &problems) {
				for _, p := range problems {
					fields = append(fields, p.Field)
				}
			} else if err != nil {
				t.Fatalf("ValidateDelayed: %v is no ValidationErrors", err)
			}
			if diff := cmp.Diff(tc.fields, fields); diff != "" {
				t.Errorf("fields refused (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanDelayed(t *testing.T) {
	t.Parallel()
	got := PlanDelayed(delayedSpec(30000, 0, 5000), []int64{1000})
	want := []string{
		"orders: headers, alternate-exchange \"orders.unroutable\"",
		"orders.delivery: topic, alternate-exchange \"orders.unroutable\"",
		"orders.unroutable: fanout",
		`orders.delay.1000: x-queue-type "quorum", x-message-ttl 1000, x-dead-letter-exchange "orders.delivery", ` +
			`x-dead-letter-strategy "at-least-once", x-overflow "reject-publish", x-queue-leader-locator "balanced"`,
		`orders.delay.5000: x-queue-type "quorum", x-message-ttl 5000, x-dead-letter-exchange "orders.delivery", ` +
			`x-dead-letter-strategy "at-least-once", x-overflow "reject-publish", x-queue-leader-locator "balanced"`,
		`orders.delay.30000: x-queue-type "quorum", x-message-ttl 30000, x-dead-letter-exchange "orders.delivery", ` +
			`x-dead-letter-strategy "at-least-once", x-overflow "reject-publish", x-queue-leader-locator "balanced"`,
		`orders.unroutable: x-queue-type "quorum"`,
		`orders -> exchange orders.delivery, key "", x-match "all-with-x", x-delay 0`,
		`orders -> queue orders.delay.5000, key "", x-match "all-with-x", x-delay 5000`,
		`orders -> queue orders.delay.30000, key "", x-match "all-with-x", x-delay 30000`,
		`orders.unroutable -> queue orders.unroutable, key ""`,
	}
	lines := strings.Split(Lines(got.Exchanges)+"\n"+Lines(got.Queues)+"\n"+Lines(got.Bindings), "\n")
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("PlanDelayed (-want +got):\n%s", diff)
	}
	pattern := DelayedNames("orders").ObjectNamePattern()
	for _, name := range append(got.QueueNames(), "orders", "orders.delivery") {
		if !matches(pattern, name) {
			t.Errorf("%s does not match the object name pattern %s", name, pattern)
		}
	}
	for _, name := range []string{"orders.delay.05", "orders.delay.", "orders.ingest", "orders.delay", "ordersX", "orders.delay.1.g1"} {
		if matches(pattern, name) {
			t.Errorf("%s matches the object name pattern %s", name, pattern)
		}
	}
}

func TestInferDelayed(t *testing.T) {
	t.Parallel()
	classic, err := ResolveDelayed(DelayedSpec{Name: "orders", VHost: "v", DelaysMS: []int64{0}, DeliveryType: "fanout", QueueType: QueueTypeClassic})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		spec     DelayedSpec
		draining []int64
	}{
		"quorum with 0":          {spec: delayedSpec(0, 5000, 30000)},
		"draining":               {spec: delayedSpec(5000), draining: []int64{1000, 30000}},
		"classic, only 0":        {spec: classic},
		"at-most-once":           {spec: func() DelayedSpec { s := delayedSpec(7); s.DeadLetterStrategy = AtMostOnce; return s }()},
		"every delivery type: h": {spec: func() DelayedSpec { s := delayedSpec(7); s.DeliveryType = "headers"; return s }()},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec, draining, err := InferDelayed(tc.spec.Name, PlanDelayed(tc.spec, tc.draining))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.spec, spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.draining, draining); diff != "" {
				t.Errorf("draining (-want +got):\n%s", diff)
			}
		})
	}
	if _, _, err := InferDelayed("orders", Topology{}); !errors.Is(err, ErrNoDelayedExchange) {
		t.Errorf("InferDelayed of nothing = %v, want ErrNoDelayedExchange", err)
	}
}

// TestDiffDelayed: removing a delay whose queue drains unbinds it first and
// keeps the queue; the next diff without it deletes the queue.
func TestDiffDelayed(t *testing.T) {
	t.Parallel()
	before := PlanDelayed(delayedSpec(1000, 5000), nil)
	draining := PlanDelayed(delayedSpec(5000), []int64{1000})
	tests := map[string]struct {
		desired, actual Topology
		want            []string
	}{
		"create":    {desired: before, actual: Topology{VHost: "/"}},
		"no change": {desired: before, actual: before, want: []string{}},
		"a delay drains": {desired: draining, actual: before, want: []string{
			`delete_binding orders -> queue orders.delay.1000, key "", x-match "all-with-x", x-delay 1000`}},
		"drained": {desired: PlanDelayed(delayedSpec(5000), nil), actual: draining, want: []string{"delete_queue orders.delay.1000"}},
		"a delay added": {desired: before, actual: draining, want: []string{
			`create_binding orders -> queue orders.delay.1000, key "", x-match "all-with-x", x-delay 1000`}},
		"drifted binding argument": {desired: before, actual: func() Topology {
			t := PlanDelayed(delayedSpec(1000, 5000), nil)
			t.Bindings[0].Arguments.Match = "all"
			return t
		}(), want: []string{
			`create_binding orders -> queue orders.delay.1000, key "", x-match "all-with-x", x-delay 1000`,
			`delete_binding orders -> queue orders.delay.1000, key "", x-match "all", x-delay 1000`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			changes := Diff(tc.desired, tc.actual)
			got := []string{}
			for _, c := range changes {
				got = append(got, delayedChangeLine(c))
			}
			if tc.want == nil {
				if len(got) != len(tc.desired.Exchanges)+len(tc.desired.Queues)+len(tc.desired.Bindings) {
					t.Errorf("create makes %d changes: %v", len(got), got)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

func matches(pattern, name string) bool { return regexp.MustCompile(pattern).MatchString(name) }

// delayedChangeLine is a change with its binding's arguments.
func delayedChangeLine(c Change) string {
	switch {
	case c.Binding != nil:
		return string(c.Kind) + " " + c.Binding.String()
	case c.Queue != nil:
		return string(c.Kind) + " " + c.Queue.Name
	}
	return string(c.Kind) + " " + c.Exchange.Name
}

func TestBindingArgumentsInLine(t *testing.T) {
	t.Parallel()
	bindings := map[string]Binding{
		"none":  {Source: "a", Destination: "b", DestinationType: DestinationQueue, RoutingKey: "k, x-delay 5"},
		"delay": {Source: "a", Destination: "b", DestinationType: DestinationQueue, Arguments: BindingArguments{Match: MatchAllWithX, HasDelay: true, Delay: 0}},
		"all": {Source: "a", Destination: "b", DestinationType: DestinationExchange, RoutingKey: "r",
			Arguments: BindingArguments{Match: "any", HasDelay: true, Delay: 5, Other: `{"x-other":"1, 2"}`}},
		"other only": {Source: "a", Destination: "b", DestinationType: DestinationQueue, Arguments: BindingArguments{Other: `{"k":true}`}},
	}
	for name, b := range bindings {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := BindingInLine(b.String())
			if !ok {
				t.Fatalf("BindingInLine(%q) failed", b.String())
			}
			if diff := cmp.Diff(b, got); diff != "" {
				t.Errorf("round trip of %q (-want +got):\n%s", b.String(), diff)
			}
			other := b
			other.Arguments.Delay++
			if CompareBindings(b, other) == 0 && b.Arguments.HasDelay {
				t.Errorf("bindings of different x-delay compare equal")
			}
		})
	}
	if _, ok := BindingInLine(`a -> queue b, key "", x-delay five`); ok {
		t.Errorf("a line with a malformed x-delay was read")
	}
}
