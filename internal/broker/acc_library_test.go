package broker_test

import (
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// accVHostOfItsOwn creates a vhost for one test and deletes it, with
// everything in it, when the test ends: a library's layout has fixed names,
// so two tests in one vhost would share its objects.
func accVHostOfItsOwn(t *testing.T) string {
	t.Helper()
	admin, err := rabbithole.NewClient(accEndpoint, "guest", "guest")
	if err != nil {
		t.Fatal(err)
	}
	vhost := strings.Replace(uniqueName(t), "brokertest", "brokertest-vhost", 1)
	if _, err := admin.PutVhost(vhost, rabbithole.VhostSettings{}); err != nil {
		t.Fatalf("creating vhost %s: %v", vhost, err)
	}
	t.Cleanup(func() {
		if _, err := admin.DeleteVhost(vhost); err != nil {
			t.Errorf("deleting vhost %s: %v", vhost, err)
		}
	})
	return vhost
}

// TestAccLibraryLayoutExchangeBindings applies each library's layout and
// checks that the broker layer reads, diffs, repairs and deletes its
// exchange-to-exchange bindings like the bindings to queues, within the
// stated number of requests.
func TestAccLibraryLayoutExchangeBindings(t *testing.T) {
	client := accClient(t)
	for _, layout := range []topology.Layout{topology.LayoutNServiceBus, topology.LayoutCelery} {
		t.Run(string(layout), func(t *testing.T) {
			ctx := t.Context()
			vhost := accVHostOfItsOwn(t)
			spec, err := topology.Resolve(topology.Spec{Name: "delays", VHost: vhost, Layout: layout, Routes: []topology.Route{
				{Destination: "amq.topic", DestinationType: topology.DestinationExchange, Key: "Sales"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := topology.Plan(spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := client.Apply(ctx, vhost, topology.Diff(plan, topology.Topology{VHost: vhost}), broker.ApplyOptions{}); err != nil {
				t.Fatalf("creating the set: %v", err)
			}

			actual, n := readCounted(t, client, func() (topology.Topology, error) { return client.ReadSetOf(ctx, vhost, spec.Name, layout) })
			if n != 31 {
				t.Errorf("ReadSetOf made %d requests, want 31: two listings and one per exchange", n)
			}
			if d := gocmp.Diff(sortedTopology(plan), actual); d != "" {
				t.Fatalf("read back (-plan +read):\n%s", d)
			}
			exchangeBindings := 0
			for _, b := range actual.Bindings {
				if b.DestinationType == topology.DestinationExchange {
					exchangeBindings++
				}
			}
			if exchangeBindings != 29 { // 27 level to level, level 0 to delivery, the route
				t.Errorf("read %d exchange-to-exchange bindings, want 29", exchangeBindings)
			}
			// The default layout's read of the same name sees none of it.
			if other, err := client.ReadSet(ctx, vhost, spec.Name); err != nil || len(other.Exchanges)+len(other.Queues) > 0 {
				t.Errorf("ReadSet of the default layout = %d exchanges, %d queues, %v; want none", len(other.Exchanges), len(other.Queues), err)
			}

			// Drift: a level-to-level binding goes, one with another key comes.
			lost := plan.Bindings[1] // level 00 → the next exchange on bit 0
			if lost.DestinationType != topology.DestinationExchange {
				t.Fatalf("plan's second binding %s is not to an exchange", lost)
			}
			stray := topology.Binding{Source: lost.Source, Destination: lost.Destination, DestinationType: topology.DestinationExchange, RoutingKey: "#"}
			drift := []topology.Change{{Kind: topology.DeleteBinding, Binding: &lost}, {Kind: topology.CreateBinding, Binding: &stray}}
			if err := client.Apply(ctx, vhost, drift, broker.ApplyOptions{}); err != nil {
				t.Fatalf("drifting: %v", err)
			}
			if actual, err = client.ReadSetOf(ctx, vhost, spec.Name, layout); err != nil {
				t.Fatal(err)
			}
			repair := topology.Diff(plan, actual)
			var got []string
			for _, change := range repair {
				got = append(got, string(change.Kind)+" "+change.Binding.String())
			}
			want := []string{"create_binding " + lost.String(), "delete_binding " + stray.String()}
			if d := gocmp.Diff(want, got); d != "" {
				t.Fatalf("Diff after the drift (-want +got):\n%s", d)
			}
			if err := client.Apply(ctx, vhost, repair, broker.ApplyOptions{}); err != nil {
				t.Fatalf("repairing: %v", err)
			}
			if actual, err = client.ReadSetOf(ctx, vhost, spec.Name, layout); err != nil {
				t.Fatal(err)
			}
			if d := gocmp.Diff(sortedTopology(plan), actual); d != "" {
				t.Fatalf("after the repair (-plan +read):\n%s", d)
			}

			// Delete: every object and binding goes, the empty queues with them.
			if err := client.Apply(ctx, vhost, topology.Diff(topology.Topology{VHost: vhost}, actual), broker.ApplyOptions{}); err != nil {
				t.Fatalf("deleting the set: %v", err)
			}
			if actual, err = client.ReadSetOf(ctx, vhost, spec.Name, layout); err != nil {
				t.Fatal(err)
			}
			if n := len(actual.Exchanges) + len(actual.Queues) + len(actual.Bindings); n > 0 {
				t.Errorf("%d objects remain after the deletion: %+v", n, actual)
			}
		})
	}
}
