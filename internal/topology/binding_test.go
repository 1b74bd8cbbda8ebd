package topology

import "testing"

// TestCompareBindings holds the one comparison of bindings to what the
// broker means: an unset destination type is a queue, and the order is the
// one a read of the broker lists them in.
func TestCompareBindings(t *testing.T) {
	t.Parallel()
	queue := Binding{Source: "delay.ingest", Destination: "delay.level.00", DestinationType: DestinationQueue, RoutingKey: "#.1"}
	unset := queue
	unset.DestinationType = ""
	exchange := queue
	exchange.DestinationType = DestinationExchange
	tests := map[string]struct {
		a, b Binding
		want int
	}{
		"unset is queue":          {a: unset, b: queue, want: 0},
		"exchange before queue":   {a: queue, b: exchange, want: 1},
		"source first":            {a: Binding{Source: "a", Destination: "z"}, b: Binding{Source: "b", Destination: "a"}, want: -1},
		"destination then key":    {a: Binding{Source: "a", Destination: "b", RoutingKey: "z"}, b: Binding{Source: "a", Destination: "c"}, want: -1},
		"key last":                {a: Binding{Source: "a", Destination: "b", RoutingKey: "y"}, b: Binding{Source: "a", Destination: "b", RoutingKey: "x"}, want: 1},
		"type before destination": {a: Binding{Source: "a", Destination: "z"}, b: Binding{Source: "a", Destination: "a", DestinationType: DestinationExchange}, want: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := CompareBindings(tc.a, tc.b); got != tc.want {
				t.Errorf("CompareBindings(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := CompareBindings(tc.b, tc.a); got != -tc.want {
				t.Errorf("CompareBindings(%v, %v) = %d, want %d", tc.b, tc.a, got, -tc.want)
			}
			if same := tc.a.Canonical() == tc.b.Canonical(); same != (tc.want == 0) {
				t.Errorf("Canonical equal = %v, CompareBindings = %d: they must agree", same, tc.want)
			}
		})
	}
}

// TestCanonicalKeepsAPlannedBinding checks that a plan's bindings are
// canonical already, as a read of the broker spells them.
func TestCanonicalKeepsAPlannedBinding(t *testing.T) {
	t.Parallel()
	for _, s := range []Spec{
		{Name: "delay", VHost: "/", Levels: 3, Routes: []Route{{Destination: "work"}}},
		{Name: "n", VHost: "/", Layout: LayoutNServiceBus, Routes: []Route{{Destination: "sales", Key: "Sales"}}},
	} {
		planned, err := Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range planned.Bindings {
			if b.Canonical() != b {
				t.Errorf("%s: planned binding %v is not canonical", s.Name, b)
			}
		}
	}
}
