package topology

import (
	"slices"
	"testing"
	"time"
)

// TestTeardown checks, for sets of every layout and radix and for sets with
// draining generations, that Teardown deletes each exchange and queue once
// and of the bindings only those between two exchanges that outlive the
// entry exchanges, before any of those exchanges, and in an order that lets
// no message in once a queue may be gone: entry exchanges first, a queue
// before the exchange it dead-letters into, parking lots after every other
// queue and exchange that could park a message, alternate exchanges last;
// each step one run of one kind of change, for Apply to batch.
func TestTeardown(t *testing.T) {
	t.Parallel()
	sets := map[string]Topology{}
	for name, spec := range map[string]Spec{
		"radix 2, routes": {Name: "delay", VHost: "/", Levels: 6, Resolution: time.Second, Routes: simRoutes},
		"radix 16":        {Name: "delay", VHost: "/", Levels: 2, Radix: 16, Resolution: time.Second},
		"nservicebus":     {Name: "delay", VHost: "/", Layout: LayoutNServiceBus},
		"celery":          {Name: "delay", VHost: "/", Layout: LayoutCelery},
	} {
		sets[name] = mustPlan(t, spec)
	}
	for name, c := range generationCases {
		sets["generations: "+name] = mustPlanGenerations(t, c)
	}
	for name, set := range sets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			changes := Teardown(set)
			position := map[string]int{} // "e:" or "q:" and a name → its change
			var kinds []ChangeKind
			var bindings []Binding
			for i, c := range changes {
				switch c.Kind {
				case DeleteExchange:
					position["e:"+c.Exchange.Name] = i
				case DeleteQueue:
					position["q:"+c.Queue.Name] = i
				case DeleteBinding:
					if c.Binding.DestinationType != DestinationExchange {
						t.Errorf("change %d deletes a binding to a queue, %v; the queue's deletion takes it", i, *c.Binding)
					}
					for _, end := range []string{c.Binding.Source, c.Binding.Destination} {
						if _, deleted := position["e:"+end]; deleted {
							t.Errorf("change %d deletes a binding of exchange %s, deleted before", i, end)
						}
					}
					bindings = append(bindings, *c.Binding)
				default:
					t.Fatalf("change %d is a %s, want only deletions", i, c.Kind)
				}
				if len(kinds) == 0 || kinds[len(kinds)-1] != c.Kind {
					kinds = append(kinds, c.Kind)
				}
			}
			if len(changes)-len(bindings) != len(set.Exchanges)+len(set.Queues) || len(position) != len(changes)-len(bindings) {
				t.Fatalf("Teardown made %d changes for %d objects, want each object once", len(changes), len(set.Exchanges)+len(set.Queues))
			}
			if len(kinds) > 6 {
				t.Errorf("Teardown's changes come in %d runs (%v), want at most 6 steps", len(kinds), kinds)
			}
			before := func(a, b string) {
				t.Helper()
				if position[a] >= position[b] {
					t.Errorf("%s is deleted at %d, not before %s at %d", a, position[a], b, position[b])
				}
			}
			alternates := map[string]bool{}
			for _, e := range set.Exchanges {
				if ae := e.Arguments.AlternateExchange; ae != "" {
					alternates[ae] = true
					before("e:"+e.Name, "e:"+ae)
				}
			}
			for _, q := range set.Queues {
				if dlx := q.Arguments.DeadLetterExchange; dlx != "" {
					before("q:"+q.Name, "e:"+dlx)
				}
			}
			entries := 0
			for _, b := range set.Bindings {
				destination := "q:" + b.Destination
				if b.DestinationType == DestinationExchange {
					destination = "e:" + b.Destination
				}
				if alternates[b.Source] {
					// A parking lot: after everything but the alternate exchanges.
					for _, e := range set.Exchanges {
						if !alternates[e.Name] {
							before("e:"+e.Name, destination)
						}
					}
					continue
				}
				if !slices.ContainsFunc(set.Bindings, func(in Binding) bool {
					return in.DestinationType == DestinationExchange && in.Destination == b.Source
				}) && !slices.ContainsFunc(set.Queues, func(q Queue) bool { return q.Arguments.DeadLetterExchange == b.Source }) {
					// From an entry exchange: gone before anything it leads to.
					entries++
					before("e:"+b.Source, destination)
				}
			}
			if entries == 0 {
				t.Errorf("no binding from an entry exchange in %s", name)
			}
		})
	}
}
