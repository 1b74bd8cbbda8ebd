package provider

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestDiscoveredValues checks what the data source makes of what it found:
// import IDs escaped and naming a library's layout, routes as an import
// writes them (null destination type for a queue, null key for every
// message), a leader locator and a quorum initial group size only where the
// queues have one, and an unread
// vhost with null name, layout and import ID.
func TestDiscoveredValues(t *testing.T) {
	t.Parallel()
	resolve := func(s topology.Spec) topology.Spec {
		resolved, err := topology.Resolve(s)
		if err != nil {
			t.Fatal(err)
		}
		return resolved
	}
	found := []vhostDiscovery{
		{vhost: "/", found: topology.Discovery{
			Sets: []topology.FoundSet{
				{Spec: resolve(topology.Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond,
					QueueLeaderLocator: topology.LeaderLocatorBalanced, QuorumInitialGroupSize: 1, Routes: []topology.Route{
						{Destination: "orders", Key: "orders"}, {Destination: "audit", DestinationType: topology.DestinationExchange},
					}})},
				{Spec: resolve(topology.Spec{Name: "nservicebus", VHost: "/", Layout: topology.LayoutNServiceBus}),
					Draining: []topology.Generation{{Number: 0}}},
			},
			Unreadable: []topology.UnreadableSet{{Name: "part", Layout: topology.LayoutDefault, Reasons: []string{"no level queue"}}},
		}},
		{vhost: "team a", unreadable: "refused"},
	}
	sets, unreadable, diags := discoveredValues(found)
	if diags.HasError() {
		t.Fatal(diags)
	}
	var got []string
	for _, element := range sets.Elements() {
		a := objectAttributes(t, element)
		line := a["import_id"].String() + " " + a["layout"].String() + " " + a["levels"].String() + " " + a["resolution"].String() +
			" " + a["queue_leader_locator"].String() + " " + a[groupSizeAttribute].String() + " " + a["draining_generations"].String()
		routes, ok := a["routes"].(types.List)
		if !ok {
			t.Fatalf("routes is a %T", a["routes"])
		}
		for _, route := range routes.Elements() {
			r := objectAttributes(t, route)
			line += " | " + r["destination"].String() + " " + r["destination_type"].String() + " " + r["key"].String()
		}
		got = append(got, line)
	}
	for _, element := range unreadable.Elements() {
		a := objectAttributes(t, element)
		got = append(got, a["vhost"].String()+" "+a["name"].String()+" "+a["import_id"].String()+" "+a["reason"].String())
	}
	want := []string{
		`"%2F/delay" "default" 2 "100ms" "balanced" 1 0 | "audit" "exchange" <null> | "orders" <null> "orders"`,
		`"%2F/nservicebus/nservicebus" "nservicebus" 28 "1s" <null> <null> 1`,
		`"/" "part" "%2F/part" "the objects named as this set's explain no delay queue set: no level queue"`,
		`"team a" <null> <null> "refused"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("values (-want +got):\n%s", d)
	}
}

// objectAttributes are the attributes of an object value.
func objectAttributes(t *testing.T, v attr.Value) map[string]attr.Value {
	t.Helper()
	object, ok := v.(types.Object)
	if !ok {
		t.Fatalf("%v is a %T, not an object", v, v)
	}
	return object.Attributes()
}
