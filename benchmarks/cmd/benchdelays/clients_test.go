package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestSpreadClients: several -url values give each trial a route per URL,
// the run's group size goes on quorum sets only, and one URL keeps the one
// route of every run before.
func TestSpreadClients(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"-url", "amqp://a:5710/, amqp://b:5711/,amqp://c:5712/", "-quorum-initial-group-size", "3",
		"-variants", "quorum-at-least-once-r16-balanced,classic"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"amqp://a:5710/", "amqp://b:5711/", "amqp://c:5712/"}; !cmp.Equal(cfg.URLs, want) || cfg.URL != want[0] {
		t.Errorf("URLs %q, URL %q; want %q and the first", cfg.URLs, cfg.URL, want)
	}
	r := runner{cfg: cfg, prefix: "p"}
	quorum := r.spec(trialPlan{variant: cfg.Variants[0], rate: 1000})
	wantRoutes := []topology.Route{{Destination: quorum.Name + ".work.0", Key: "bench0"},
		{Destination: quorum.Name + ".work.1", Key: "bench1"}, {Destination: quorum.Name + ".work.2", Key: "bench2"}}
	if d := cmp.Diff(wantRoutes, quorum.Routes); d != "" || quorum.QuorumInitialGroupSize != 3 {
		t.Errorf("quorum spec: group size %d, routes (-want +got):\n%s", quorum.QuorumInitialGroupSize, d)
	}
	if classic := r.spec(trialPlan{variant: cfg.Variants[1], rate: 1000}); classic.QuorumInitialGroupSize != 0 {
		t.Errorf("a classic set has group size %d", classic.QuorumInitialGroupSize)
	}
	if got := routesFor("s", 1); !cmp.Equal(got, []topology.Route{{Destination: "s.work", Key: routeKey}}) {
		t.Errorf("one URL: routes %v, want the one route of before", got)
	}
	if _, err := parseConfig([]string{"-quorum-initial-group-size", "-1"}, io.Discard); err == nil {
		t.Error("a negative group size is accepted")
	}
}

// TestHopShares: each TTL queue's share of the messages, delays uniform
// over 0–255 ticks: 1/16 for each queue of radix 16, 1/2 for each level
// of radix 2, every message for the baseline's one queue.
func TestHopShares(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec     topology.Spec
		baseline bool
		want     float64
	}{
		{spec: topology.Spec{Name: "s", VHost: "/", Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond}, want: 1.0 / 16},
		{spec: topology.Spec{Name: "s", VHost: "/", Levels: 8, Radix: 2, Resolution: 100 * time.Millisecond}, want: 0.5},
		{spec: topology.Spec{Name: "s", VHost: "/", Levels: 1, Resolution: 12800 * time.Millisecond}, baseline: true, want: 1},
	} {
		planned, err := topology.Plan(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		shares := hopShares(planned, tc.spec.Radix, tc.spec.Resolution, 8, tc.baseline)
		if len(shares) != len(planned.Queues)-1 {
			t.Errorf("%+v: %d shares for %d TTL queues", tc.spec, len(shares), len(planned.Queues)-1)
		}
		for queue, share := range shares {
			if share != tc.want {
				t.Errorf("%+v: %s takes %g of the messages, want %g", tc.spec, queue, share, tc.want)
			}
		}
	}
}

// TestWorkByNode sums a node's clients, leader hops and replica hops.
func TestWorkByNode(t *testing.T) {
	t.Parallel()
	queues := []queuePlacement{
		{Name: "q1", Leader: "a", Members: []string{"a", "b"}, Hops: 0.5},
		{Name: "q2", Leader: "b", Members: []string{"b", "c"}, Hops: 0.25},
		{Name: "parking lot", Leader: "c", Members: []string{"a", "b", "c"}},
	}
	want := map[string]nodeWork{
		"a": {Clients: 0.5, LeaderHops: 0.5, ReplicaHops: 0.5},
		"b": {Clients: 0.5, LeaderHops: 0.25, ReplicaHops: 0.75},
		"c": {ReplicaHops: 0.25},
	}
	if d := cmp.Diff(want, workByNode(queues, []string{"a", "b"})); d != "" {
		t.Errorf("work (-want +got):\n%s", d)
	}
}

// TestClientsWhere: the text says where the clients were, and names the
// script's nodes by number.
func TestClientsWhere(t *testing.T) {
	t.Parallel()
	nodes := []clusterNode{{Name: "rabbit-f10@localhost", PID: 10}, {Name: "rabbit-f11@localhost", PID: 11}, {Name: "rabbit-f12@localhost", PID: 12}}
	e := environment{BrokerPID: 10, Nodes: nodes}
	if got := scriptNodes(nodes); got != "nodes 10, 11 and 12" {
		t.Errorf("scriptNodes = %q", got)
	}
	one := clientsWhere(e, settings{})
	spread := clientsWhere(e, settings{GroupSize: 3, ClientURLs: []string{"amqp://a", "amqp://b", "amqp://c"}})
	for text, want := range map[string]string{
		one:    "through one node, rabbit-f10 (process 10)",
		spread: "with x-quorum-initial-group-size 3, each quorum queue through the nodes in turn",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("%q lacks %q", text, want)
		}
	}
	if !strings.Contains(spread, "over 3 AMQP URLs, one per node, round-robin (amqp://a, amqp://b, amqp://c)") {
		t.Errorf("%q does not say the clients spread", spread)
	}
}
