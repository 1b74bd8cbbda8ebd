package broker_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccDeletingReadBindings checks that a binding ReadSet saw is deleted
// with one request, by the properties key the listing gave, and that a
// binding changed behind the client's back since (here: declared again with
// an argument, which changes its properties key) is still deleted, by a
// lookup after the stale key's 404.
func TestAccDeletingReadBindings(t *testing.T) {
	client := accClient(t)
	spec := topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: 3, Resolution: time.Second, QueueType: topology.QueueTypeClassic}
	applySpec(t, client, spec)
	read, err := client.ReadSet(t.Context(), accVHost, spec.Name)
	if err != nil {
		t.Fatal(err)
	}

	// Another client, with nothing remembered, re-declares one binding with an argument.
	changed := read.Bindings[0]
	if err := accClient(t).Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.DeleteBinding, Binding: &changed}}, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	declareWithArgument(t, changed)

	changes := topology.Diff(topology.Topology{VHost: accVHost}, read)
	before := client.Requests()
	if err := client.Apply(t.Context(), accVHost, changes, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// One request per change (classic queues are deleted if-empty by the
	// broker itself), and two more for the changed binding: its stale
	// key's 404, then the lookup before the delete.
	if got, want := client.Requests()-before, int64(len(changes)+2); got != want {
		t.Errorf("deleting the set made %d requests, want %d (%d changes)", got, want, len(changes))
	}
	after, err := client.ReadSet(t.Context(), accVHost, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(after.Exchanges) + len(after.Queues) + len(after.Bindings); n != 0 {
		t.Errorf("%d objects remain after deleting the set: %+v", n, after)
	}
}

// TestAccDeletingBindingsByTheirKey checks that a client that has read
// nothing deletes a binding without arguments with one request, by the
// properties key the broker gives it, whatever its routing key holds; and
// that one with an argument (another key) is still deleted, by a lookup
// after that key's 404.
func TestAccDeletingBindingsByTheirKey(t *testing.T) {
	name := uniqueName(t)
	source, destination := topology.Exchange{Name: name + ".ingest", Type: topology.ExchangeTopic}, topology.Exchange{Name: name + ".out", Type: topology.ExchangeTopic}
	changes := []topology.Change{{Kind: topology.CreateExchange, Exchange: &source}, {Kind: topology.CreateExchange, Exchange: &destination}}
	keys := []string{"", "#", "#.0.1", "#.1.*.*", "tasks.#", "a b", "a~b", "n+m", "p%q", "x/y", "é"}
	bindings := make([]topology.Binding, len(keys))
	for i, key := range keys {
		bindings[i] = topology.Binding{Source: source.Name, Destination: destination.Name, DestinationType: topology.DestinationExchange, RoutingKey: key}
		changes = append(changes, topology.Change{Kind: topology.CreateBinding, Binding: &bindings[i]})
	}
	if err := accClient(t).Apply(t.Context(), accVHost, changes, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = accClient(t).Apply(context.Background(), accVHost, []topology.Change{
			{Kind: topology.DeleteExchange, Exchange: &source}, {Kind: topology.DeleteExchange, Exchange: &destination}}, broker.ApplyOptions{})
	})
	withArgument := topology.Binding{Source: source.Name, Destination: destination.Name, DestinationType: topology.DestinationExchange, RoutingKey: "argued"}
	declareWithArgument(t, withArgument)

	deletions := make([]topology.Change, 0, len(bindings)+1)
	for i := range bindings {
		deletions = append(deletions, topology.Change{Kind: topology.DeleteBinding, Binding: &bindings[i]})
	}
	deletions = append(deletions, topology.Change{Kind: topology.DeleteBinding, Binding: &withArgument})
	fresh := accClient(t)
	if err := fresh.Apply(t.Context(), accVHost, deletions, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// One request per binding, and for the one with an argument its key's
	// 404, the lookup and the delete.
	if got, want := fresh.Requests(), int64(len(bindings)+3); got != want {
		t.Errorf("deleting %d bindings made %d requests, want %d", len(bindings)+1, got, want)
	}
	left, err := fresh.ReadSet(t.Context(), accVHost, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Bindings) != 0 {
		t.Errorf("bindings left: %v", left.Bindings)
	}
}

// declareWithArgument declares b with an argument, which the layout's
// bindings never have: the broker gives it another properties key.
func declareWithArgument(t *testing.T, b topology.Binding) {
	t.Helper()
	kind := map[topology.DestinationType]string{topology.DestinationQueue: "q", topology.DestinationExchange: "e"}[b.DestinationType]
	resp := managementPost(t, "/api/bindings/"+url.PathEscape(accVHost)+"/e/"+url.PathEscape(b.Source)+"/"+kind+"/"+url.PathEscape(b.Destination),
		`{"routing_key":"`+b.RoutingKey+`","arguments":{"x-note":"declared by hand"}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("declaring %s with an argument: %s", b, resp.Status)
	}
}
