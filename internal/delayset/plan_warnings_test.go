package delayset_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestPlanWarningValues checks the values a warning carries for the
// provider to word: the queues and generation of a repair, the generation
// found empty and its queues.
func TestPlanWarningValues(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	quorum := spec3(t, nil)
	prior := rememberedOf(t, quorum)
	prior.DriftedHolding = []string{"delay.level.02"}
	planned, err := delayset.Plan(prior, quorum, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []delayset.Warning{{Reason: delayset.DriftRepaired, Generation: 1, Queues: []string{"delay.level.02"}}}
	if d := cmp.Diff(want, planned.Warnings); d != "" {
		t.Errorf("repair warning (-want +got):\n%s", d)
	}

	prior = rememberedOf(t, spec3(t, func(s *topology.Spec) { classic(s); s.Generation = 1 }))
	prior.Draining, prior.DrainingMessages = []topology.Generation{quorum.CurrentGeneration()}, []int64{0}
	planned, err = delayset.Plan(prior, spec3(t, classic), now)
	if err != nil {
		t.Fatal(err)
	}
	want = []delayset.Warning{{Reason: delayset.GenerationEmpty, Generation: 0, Queues: quorum.CurrentGeneration().Queues("delay")}}
	if d := cmp.Diff(want, planned.Warnings); d != "" {
		t.Errorf("empty generation warning (-want +got):\n%s", d)
	}
}

// TestPlanRemovedRoutesStayBound: a plan of a library layout that drops a
// route whose binding the set showed warns with that binding alone; a route
// kept, a new route, a removed route whose binding was already gone and
// the default layout do not.
func TestPlanRemovedRoutesStayBound(t *testing.T) {
	t.Parallel()
	sales := topology.Route{Destination: "Sales", DestinationType: topology.DestinationExchange, Key: "Sales"}
	billing := topology.Route{Destination: "Billing", DestinationType: topology.DestinationExchange, Key: "Billing"}
	nsb := func(routes ...topology.Route) topology.Spec {
		spec, err := topology.Resolve(topology.Spec{Name: "nsb", VHost: "/", Layout: topology.LayoutNServiceBus, Routes: routes})
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	defaultSet := func(routes ...topology.Route) topology.Spec {
		return spec3(t, func(s *topology.Spec) { s.Routes = routes })
	}
	// shown is what is kept of the set of spec whose bindings to gone are
	// no longer on the broker.
	shown := func(spec topology.Spec, gone ...topology.Route) delayset.Remembered {
		prior := rememberedOf(t, spec)
		for _, r := range gone {
			prior.Shown.Bindings = slices.DeleteFunc(prior.Shown.Bindings, func(b topology.Binding) bool { return b.Destination == r.Destination })
		}
		return prior
	}
	tests := map[string]struct {
		prior delayset.Remembered
		spec  topology.Spec
		stays []string // the destinations of the bindings that stay
	}{
		"a removed route's binding stays":      {prior: shown(nsb(sales, billing)), spec: nsb(sales), stays: []string{"Billing"}},
		"routes kept":                          {prior: shown(nsb(sales, billing)), spec: nsb(sales, billing)},
		"a new route":                          {prior: shown(nsb(sales)), spec: nsb(sales, billing)},
		"the removed route's binding is gone":  {prior: shown(nsb(sales, billing), billing), spec: nsb(sales)},
		"the default layout deletes its out's": {prior: shown(defaultSet(sales, billing)), spec: defaultSet(sales)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			planned, err := delayset.Plan(tt.prior, tt.spec, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			var stays []string
			for _, w := range planned.Warnings {
				if w.Reason != delayset.RoutesStayBound {
					t.Errorf("warning %+v, want only RoutesStayBound", w)
				}
				for _, b := range w.Bindings {
					stays = append(stays, b.Destination)
				}
			}
			if d := cmp.Diff(tt.stays, stays); d != "" {
				t.Errorf("bindings that stay (-want +got):\n%s", d)
			}
		})
	}
}
