package broker_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccListVHost lists a vhost that holds two sets, of radix 2 and 16,
// and a lone queue: three requests, whatever it holds, that find both sets
// as their specs resolve. A vhost that does not exist is ErrVHostNotFound;
// one the user has no permissions in, ErrVHostNotReadable; VHosts lists
// the vhost in one request.
func TestAccListVHost(t *testing.T) {
	client := accClient(t)
	vhost := accVHostOfItsOwn(t)
	admin, err := rabbithole.NewClient(accEndpoint, "guest", "guest")
	if err != nil {
		t.Fatal(err)
	}
	specs := []topology.Spec{
		{Name: "binary", VHost: vhost, Levels: 3, Resolution: 250 * time.Millisecond, QueueType: topology.QueueTypeClassic},
		{Name: "hex", VHost: vhost, Levels: 2, Radix: 16, Routes: []topology.Route{{Destination: "work", Key: "jobs"}}},
	}
	if _, err := admin.DeclareQueue(vhost, "work", rabbithole.QueueSettings{Durable: true}); err != nil {
		t.Fatal(err)
	}
	var want []topology.Spec
	for _, spec := range specs {
		plan, err := topology.Plan(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Apply(t.Context(), vhost, topology.Diff(plan, topology.Topology{VHost: vhost}), broker.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		resolved, _ := topology.Resolve(spec)
		want = append(want, resolved)
	}

	listing, requests := readCounted(t, client, func() (topology.Topology, error) { return client.ListVHost(t.Context(), vhost) })
	if requests != 3 {
		t.Errorf("ListVHost made %d requests, want 3", requests)
	}
	found := topology.Discover(listing)
	var got []topology.Spec
	for _, s := range found.Sets {
		got = append(got, s.Spec)
	}
	if d := gocmp.Diff(want, got); d != "" || len(found.Unreadable) > 0 {
		t.Errorf("Discover(ListVHost) sets (-want +got):\n%s\nunreadable: %+v", d, found.Unreadable)
	}

	before := client.Requests()
	vhosts, err := client.VHosts(t.Context())
	if err != nil || !slices.Contains(vhosts, vhost) || client.Requests()-before != 1 {
		t.Errorf("VHosts = %v, %v in %d requests; want %s among them, in 1", vhosts, err, client.Requests()-before, vhost)
	}
	if _, err := client.ListVHost(t.Context(), vhost+"-missing"); !errors.Is(err, broker.ErrVHostNotFound) {
		t.Errorf("ListVHost of a missing vhost: error = %v, want ErrVHostNotFound", err)
	}

	other := accVHostOfItsOwn(t)
	limited := accUserIn(t, admin, other)
	if _, err := limited.ListVHost(t.Context(), vhost); !errors.Is(err, broker.ErrVHostNotReadable) {
		t.Errorf("ListVHost of a vhost the user has no permissions in: error = %v, want ErrVHostNotReadable", err)
	}
	if vhosts, err := limited.VHosts(t.Context()); err != nil || !slices.Equal(vhosts, []string{other}) {
		t.Errorf("VHosts of a management user = %v, %v; want only %s, the vhost it has permissions in", vhosts, err, other)
	}
}

// accUserIn is a client of a management user with every permission in
// vhost and none elsewhere, deleted when the test ends.
func accUserIn(t *testing.T, admin *rabbithole.Client, vhost string) *broker.Client {
	t.Helper()
	user := uniqueName(t)
	if _, err := admin.PutUser(user, rabbithole.UserSettings{Password: "pw", Tags: rabbithole.UserTags{"management"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.DeleteUser(user) })
	if _, err := admin.UpdatePermissionsIn(vhost, user, rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}); err != nil {
		t.Fatal(err)
	}
	client, err := broker.New(broker.Config{Endpoint: accEndpoint, Username: user, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	return client
}
