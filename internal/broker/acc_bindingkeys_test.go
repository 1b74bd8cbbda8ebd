package broker_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
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
	kind := map[topology.DestinationType]string{topology.DestinationQueue: "q", topology.DestinationExchange: "e"}[changed.DestinationType]
	body := `{"routing_key":"` + changed.RoutingKey + `","arguments":{"x-note":"declared by hand"}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, accEndpoint+"/api/bindings/"+url.PathEscape(accVHost)+
		"/e/"+url.PathEscape(changed.Source)+"/"+kind+"/"+url.PathEscape(changed.Destination), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("declaring the binding with an argument: %s", resp.Status)
	}

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
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, accEndpoint+"/api/bindings/"+url.PathEscape(accVHost)+
		"/e/"+url.PathEscape(source.Name)+"/e/"+url.PathEscape(destination.Name), strings.NewReader(`{"routing_key":"argued","arguments":{"x-note":"by hand"}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("declaring the binding with an argument: %s", resp.Status)
	}

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
