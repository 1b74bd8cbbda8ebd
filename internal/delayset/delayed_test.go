package delayset_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func delayedSpec(t *testing.T, delays ...int64) topology.DelayedSpec {
	t.Helper()
	s, err := topology.ResolveDelayed(topology.DelayedSpec{Name: "orders", VHost: "/", DelaysMS: delays, DeliveryType: "topic"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// createdDelayed is a broker holding the delayed exchange of spec.
func createdDelayed(t *testing.T, spec topology.DelayedSpec) (*brokertest.Broker, delayset.DelayedExchanges, delayset.DelayedState) {
	t.Helper()
	b := brokertest.New("/")
	x := delayset.DelayedExchanges{Broker: b}
	state, err := x.Create(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return b, x, state
}

func TestDelayedCreateRefreshImport(t *testing.T) {
	t.Parallel()
	spec := delayedSpec(t, 0, 1000, 5000)
	b, x, state := createdDelayed(t, spec)
	plan := topology.PlanDelayed(spec, nil)
	if got, _ := b.Topology("/"); !sameObjects(got, plan) {
		t.Errorf("the broker holds\n%s\nwant\n%s", lines(got), lines(plan))
	}
	refreshed, found, err := x.Refresh(t.Context(), state)
	if err != nil || !found {
		t.Fatalf("Refresh: found %v, %v", found, err)
	}
	if !sameObjects(refreshed.Objects, plan) || refreshed.Draining != nil {
		t.Errorf("Refresh shows\n%s\ndraining %v", lines(refreshed.Objects), refreshed.Draining)
	}
	imported, found, err := x.Import(t.Context(), "/", "orders")
	if err != nil || !found {
		t.Fatalf("Import: found %v, %v", found, err)
	}
	if diff := cmp.Diff(spec, imported.Spec); diff != "" {
		t.Errorf("imported spec (-want +got):\n%s", diff)
	}
	if _, err := x.Create(t.Context(), spec); !errors.As(err, new(*delayset.ExistsError)) {
		t.Errorf("a second Create = %v, want ExistsError", err)
	}
	if _, found, err := x.Import(t.Context(), "/", "other"); found || err != nil {
		t.Errorf("Import of nothing: found %v, %v", found, err)
	}
}

// TestDelayedRemovedDelay: a removed delay's queue loses its binding and
// stays, even empty; the next update that finds it empty deletes it, and
// force deletes it at once.
func TestDelayedRemovedDelay(t *testing.T) {
	t.Parallel()
	queue := topology.DelayedNames("orders").DelayQueue(5000)
	tests := map[string]struct {
		held  []int64
		force bool
		kept  bool
	}{
		"held":   {held: []int64{1}, kept: true},
		"empty":  {held: []int64{0}, kept: true},
		"forced": {held: []int64{1}, force: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, x, _ := createdDelayed(t, delayedSpec(t, 1000, 5000))
			b.Script("/", queue, brokertest.Messages{Held: tc.held})
			state, err := x.Update(t.Context(), delayedSpec(t, 1000), tc.force)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := b.Topology("/")
			kept := slices.Contains(got.QueueNames(), queue)
			bound := slices.ContainsFunc(got.Bindings, func(b topology.Binding) bool { return b.Destination == queue })
			_, draining := state.Draining[queue]
			if kept != tc.kept || bound || draining != tc.kept || state.Draining[queue] != tc.held[0]*boolInt(tc.kept) {
				t.Fatalf("queue kept %v, bound %v, draining %v; want kept %v, unbound", kept, bound, state.Draining, tc.kept)
			}
			if !tc.kept {
				return
			}
			refreshed, _, err := x.Refresh(t.Context(), state)
			if err != nil || refreshed.Draining[queue] != tc.held[0] || slices.Contains(refreshed.Objects.QueueNames(), queue) {
				t.Fatalf("Refresh: draining %v, objects %v, %v", refreshed.Draining, refreshed.Objects.QueueNames(), err)
			}
			b.Script("/", queue, brokertest.Messages{Held: []int64{0}})
			if state, err = x.Update(t.Context(), delayedSpec(t, 1000), false); err != nil || state.Draining != nil {
				t.Fatalf("the update after it emptied: draining %v, %v", state.Draining, err)
			}
			if got, _ := b.Topology("/"); slices.Contains(got.QueueNames(), queue) {
				t.Errorf("the emptied queue %s stays", queue)
			}
		})
	}
}

func TestDelayedDestroy(t *testing.T) {
	t.Parallel()
	parking := topology.DelayedNames("orders").Parking()
	tests := map[string]struct {
		held    []int64
		force   bool
		refused bool
	}{
		"empty":            {},
		"a parked message": {held: []int64{1}, refused: true},
		"forced":           {held: []int64{1}, force: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, x, state := createdDelayed(t, delayedSpec(t, 0, 1000))
			b.Script("/", parking, brokertest.Messages{Held: tc.held})
			before, _ := b.Topology("/")
			err := x.Destroy(t.Context(), state, tc.force)
			after, _ := b.Topology("/")
			var refused *delayset.HoldsMessagesError
			switch {
			case tc.refused && (!errors.As(err, &refused) || refused.Held[0].Queue != parking):
				t.Fatalf("Destroy = %v, want a refusal naming %s", err, parking)
			case tc.refused && !sameObjects(before, after):
				t.Errorf("a refused destroy changed the broker:\n%s", lines(after))
			case !tc.refused && (err != nil || len(after.Exchanges)+len(after.Queues) > 0):
				t.Errorf("Destroy = %v, left\n%s", err, lines(after))
			}
		})
	}
}

func sameObjects(a, b topology.Topology) bool { return lines(a) == lines(b) }

// lines is t sorted, one object a line.
func lines(t topology.Topology) string {
	var all []string
	for _, e := range t.Exchanges {
		all = append(all, e.String())
	}
	for _, q := range t.Queues {
		all = append(all, q.String())
	}
	for _, b := range t.Bindings {
		all = append(all, b.String())
	}
	slices.Sort(all)
	return strings.Join(all, "\n")
}

// TestDelayedKeepsConsumerBindings: a consumer's binding from the delivery
// exchange survives an update and never shows in what a refresh reads.
func TestDelayedKeepsConsumerBindings(t *testing.T) {
	t.Parallel()
	b, x, state := createdDelayed(t, delayedSpec(t, 1000))
	work := topology.Topology{VHost: "/", Queues: []topology.Queue{{Name: "work"}},
		Bindings: []topology.Binding{{Source: "orders.delivery", Destination: "work", DestinationType: topology.DestinationQueue, RoutingKey: "#"}}}
	b.Declare(work)
	if _, err := x.Update(t.Context(), delayedSpec(t, 1000, 2000), false); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Topology("/"); !slices.Contains(got.Bindings, work.Bindings[0]) {
		t.Errorf("the update deleted the consumer's binding:\n%s", lines(got))
	}
	refreshed, _, err := x.Refresh(t.Context(), state)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(refreshed.Objects.Bindings, func(b topology.Binding) bool { return b.Destination == "work" }) {
		t.Errorf("the refresh shows the consumer's binding:\n%s", lines(refreshed.Objects))
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
