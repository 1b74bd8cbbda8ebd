package broker_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccReadSetNamed checks that a read of a set's known objects by name
// reads what the name-filtered listing reads, in 3N + 7 requests whatever
// else the vhost holds; that it finds, through what refers to them, objects
// named like the set that the known ones do not name (a stray level bound
// from the ingest exchange, or the whole set from its ingest exchange
// alone); and what it cannot find: a stray that nothing refers to.
func TestAccReadSetNamed(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	const levels = 6
	spec := topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: levels, Resolution: time.Second}
	plan := applySpec(t, client, spec)

	readNamed := func(known topology.Topology) (topology.Topology, int64) {
		t.Helper()
		return readCounted(t, client, func() (topology.Topology, error) {
			return client.ReadSetNamed(t.Context(), accVHost, spec.Name, topology.LayoutDefault, known, broker.ReadOptions{})
		})
	}
	listed, err := client.ReadSet(t.Context(), accVHost, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	got, requests := readNamed(plan)
	if diff := gocmp.Diff(listed, got); diff != "" {
		t.Errorf("ReadSetNamed(plan) differs from ReadSet (-listed +named):\n%s", diff)
	}
	if want := int64(3*levels + 7); requests != want {
		t.Errorf("ReadSetNamed made %d requests, want %d (3N + 7)", requests, want)
	}

	// Neighbours whose names extend the set's or match them but for case
	// change nothing: no request lists them.
	upper := strings.ToUpper(spec.Name)
	var neighbours []topology.Queue
	for i := range 40 {
		name := fmt.Sprintf("%s.level.%02d.x", spec.Name, i)
		if i%2 == 1 {
			name = fmt.Sprintf("%s.LEVEL.%02d", upper, i)
		}
		neighbours = append(neighbours, topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}})
	}
	createObjects(t, client, nil, neighbours, nil)
	crowded, crowdedRequests := readNamed(plan)
	if crowdedRequests != requests {
		t.Errorf("ReadSetNamed made %d requests among neighbours, %d alone; want the same", crowdedRequests, requests)
	}
	if diff := gocmp.Diff(got, crowded); diff != "" {
		t.Errorf("ReadSetNamed changed with neighbours around (-alone +crowded):\n%s", diff)
	}

	// From the ingest exchange alone, the references lead to every object.
	if nothing, n := readNamed(topology.Topology{VHost: accVHost}); len(nothing.Exchanges)+len(nothing.Queues) > 0 || n > 0 {
		t.Errorf("ReadSetNamed(nothing known) = %+v in %d requests, want nothing in none", nothing, n)
	}
	ingest := topology.Topology{VHost: accVHost, Exchanges: []topology.Exchange{{Name: spec.Name + ".ingest"}}}
	fromIngest, _ := readNamed(ingest)
	if diff := gocmp.Diff(listed, fromIngest); diff != "" {
		t.Errorf("ReadSetNamed(the ingest exchange) differs from ReadSet (-listed +named):\n%s", diff)
	}

	// A stray level bound from the ingest exchange reads as with the
	// listing; one that nothing refers to only the listing finds.
	classic := topology.QueueArguments{QueueType: topology.QueueTypeClassic}
	bound := topology.Queue{Name: fmt.Sprintf("%s.level.%02d", spec.Name, levels+1), Arguments: classic}
	unbound := topology.Queue{Name: fmt.Sprintf("%s.level.%02d", spec.Name, levels+2), Arguments: classic}
	createObjects(t, client, nil, []topology.Queue{bound, unbound}, []topology.Binding{{
		Source: spec.Name + ".ingest", Destination: bound.Name, DestinationType: topology.DestinationQueue, RoutingKey: "#.stray",
	}})
	if listed, err = client.ReadSet(t.Context(), accVHost, spec.Name); err != nil {
		t.Fatal(err)
	}
	withStray, _ := readNamed(plan)
	if len(listed.Queues) != len(withStray.Queues)+1 {
		t.Fatalf("ReadSet found %d queues, ReadSetNamed %d; want one more (the unbound stray)", len(listed.Queues), len(withStray.Queues))
	}
	listed.Queues = removeQueue(listed.Queues, unbound.Name)
	if diff := gocmp.Diff(listed, withStray); diff != "" {
		t.Errorf("with a bound stray, ReadSetNamed differs from ReadSet but for the unbound one (-listed +named):\n%s", diff)
	}
}

func removeQueue(queues []topology.Queue, name string) []topology.Queue {
	var kept []topology.Queue
	for _, q := range queues {
		if q.Name != name {
			kept = append(kept, q)
		}
	}
	return kept
}

// TestAccReadSetNamedMissing reads a set none of whose objects exists: an
// empty topology in a vhost that exists, ErrVHostNotFound in one that does
// not.
func TestAccReadSetNamedMissing(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	spec, err := topology.Resolve(topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: 3, Resolution: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := topology.Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.ReadSetNamed(t.Context(), accVHost, spec.Name, topology.LayoutDefault, plan, broker.ReadOptions{})
	if err != nil || len(got.Exchanges)+len(got.Queues)+len(got.Bindings) > 0 {
		t.Errorf("ReadSetNamed(a set never made) = %+v, %v; want nothing and no error", got, err)
	}
	missing := "no-such-vhost-" + spec.Name
	if _, err := client.ReadSetNamed(t.Context(), missing, spec.Name, topology.LayoutDefault, plan, broker.ReadOptions{}); !errors.Is(err, broker.ErrVHostNotFound) {
		t.Errorf("ReadSetNamed(in a missing vhost) error = %v, want ErrVHostNotFound", err)
	}
}

// TestAccReadSetNamedShared reads three sets with ShareBindings through one
// client: each reads as it does alone; the first by source (3N + 7
// requests); the second asks the metadata store and, on Khepri, takes one
// listing of the vhost's bindings instead of its E reads by source, which
// the third reuses; and after the client's own write, a read sees the
// change (on Khepri, from a new listing). With Mnesia every read is by
// source.
func TestAccReadSetNamedShared(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	const levels = 4
	var specs []topology.Spec
	var plans []topology.Topology
	for range 3 {
		spec := topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: levels, Resolution: time.Second}
		specs = append(specs, spec)
		plans = append(plans, applySpec(t, client, spec))
	}
	alone := func(i int) topology.Topology {
		t.Helper()
		got, err := accClient(t).ReadSetNamed(t.Context(), accVHost, specs[i].Name, topology.LayoutDefault, plans[i], broker.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	shared := accClient(t)
	readShared := func(i int) (topology.Topology, int64) {
		t.Helper()
		return readCounted(t, shared, func() (topology.Topology, error) {
			return shared.ReadSetNamed(t.Context(), accVHost, specs[i].Name, topology.LayoutDefault, plans[i], broker.ReadOptions{ShareBindings: true})
		})
	}

	reference := alone(0)
	exchanges, queues := int64(len(reference.Exchanges)), int64(len(reference.Queues))
	bySource, fromListing, listing := 2*exchanges+queues, exchanges+queues, int64(1)
	if accClient(t).MetadataStore(t.Context()) != "Khepri" {
		fromListing, listing = bySource, 0
	}
	for i, want := range []int64{bySource, fromListing + listing + 1, fromListing} {
		got, requests := readShared(i)
		if diff := gocmp.Diff(alone(i), got); diff != "" {
			t.Errorf("set %d read sharing differs from its read alone (-alone +shared):\n%s", i, diff)
		}
		if requests != want {
			t.Errorf("set %d read sharing in %d requests, want %d", i, requests, want)
		}
	}

	gone := plans[1].Bindings[0]
	if err := shared.Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.DeleteBinding, Binding: &gone}}, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	got, requests := readShared(1)
	if slices.ContainsFunc(got.Bindings, func(b topology.Binding) bool { return b.String() == gone.String() }) {
		t.Errorf("read sharing after the client deleted binding %s still shows it", gone)
	}
	if diff := gocmp.Diff(alone(1), got); diff != "" {
		t.Errorf("set 1 read sharing after a write differs from its read alone (-alone +shared):\n%s", diff)
	}
	if want := fromListing + listing; requests != want {
		t.Errorf("read sharing after a write made %d requests, want %d", requests, want)
	}
}
