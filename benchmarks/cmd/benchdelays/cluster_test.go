package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestClusterMarkdown: each node's CPU per message and the busiest node's
// rate per core, computed by hand: 30,000 messages sent; 18, 6 and 3 CPU
// seconds are 0.6, 0.2 and 0.1 ms per message; 1 s ÷ 0.6 ms = 1,667 msg/s.
func TestClusterMarkdown(t *testing.T) {
	t.Parallel()
	nodes := []clusterNode{{Name: "rabbit-f7@localhost", PID: 7}, {Name: "rabbit-f8@localhost", PID: 8}, {Name: "rabbit-f9@localhost", PID: 9}}
	oneNode := heldTrial(1000)
	oneNode.Variant, oneNode.Main = "quorum at-least-once r16, client-local", true
	oneNode.NodeCPU, oneNode.BrokerCPU = []float64{18, 6, 3}, 27
	oneNode.Leaders = map[string]int{"rabbit-f7@localhost": 33}
	spread := heldTrial(1000)
	spread.Variant, spread.Main = "quorum at-least-once r16, balanced", true
	spread.NodeCPU, spread.BrokerCPU = []float64{9, 12, 9}, 30
	spread.Leaders = map[string]int{"rabbit-f7@localhost": 11, "rabbit-f8@localhost": 11, "rabbit-f9@localhost": 10, "": 1}
	r := report{
		Environment: environment{BrokerPID: 7, Nodes: nodes},
		Settings:    settings{Rate: 1000},
		Trials:      []trialResult{oneNode, spread},
		Searches:    []searchResult{{Variant: spread.Variant, Steps: []step{{Rate: 1000, Held: true}, {Rate: 1500}}, Highest: 1000}},
	}
	got := strings.Join(strings.Fields(clusterMarkdown(r)), " ") // the table's padding aside
	for _, want := range []string{
		"| variant | leaders | rabbit-f7 ms/msg | rabbit-f8 ms/msg | rabbit-f9 ms/msg | cluster ms/msg | busiest node | msg/s per core | highest rate here |",
		"| quorum at-least-once r16, client-local | rabbit-f7 33 · rabbit-f8 0 · rabbit-f9 0 | 0.60 | 0.20 | 0.10 | 0.90 | rabbit-f7 | 1,667 | – |",
		"| quorum at-least-once r16, balanced | rabbit-f7 11 · rabbit-f8 11 · rabbit-f9 10 · no leader 1 | 0.30 | 0.40 | 0.30 | 1.00 | rabbit-f8 | 2,500 | 1,000 |",
	} {
		if !strings.Contains(got, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("clusterMarkdown lacks\n%s\nin\n%s", want, got)
		}
	}
	if !strings.Contains(markdown(r, "", ""), "## Per node of the cluster") {
		t.Error("markdown() lacks the section on the cluster")
	}
	r.Environment.Nodes = nil
	if got := clusterMarkdown(r); got != "" {
		t.Errorf("clusterMarkdown of one node = %q, want none", got)
	}
}

func TestBrokerPIDs(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		env  environment
		want []int
	}{
		"not local":                       {env: environment{}},
		"one node":                        {env: environment{BrokerPID: 5}, want: []int{5}},
		"cluster":                         {env: environment{BrokerPID: 5, Nodes: []clusterNode{{"a", 5}, {"b", 6}}}, want: []int{5, 6}},
		"cluster, remote":                 {env: environment{Nodes: []clusterNode{{"a", 0}, {"b", 0}}}},
		"cluster, a node without process": {env: environment{BrokerPID: 5, Nodes: []clusterNode{{"a", 5}, {"b", 0}}}},
	}
	for name, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.env.brokerPIDs()); diff != "" {
			t.Errorf("%s: brokerPIDs() (-want +got):\n%s", name, diff)
		}
	}
}

func TestNodeSeconds(t *testing.T) {
	t.Parallel()
	before := cpuSample{brokerOK: true, broker: 3 * time.Second, nodes: []time.Duration{1 * time.Second, 2 * time.Second}}
	after := cpuSample{brokerOK: true, broker: 7 * time.Second, nodes: []time.Duration{2 * time.Second, 5 * time.Second}}
	if diff := cmp.Diff([]float64{1, 3}, before.nodeSeconds(after)); diff != "" {
		t.Errorf("nodeSeconds (-want +got):\n%s", diff)
	}
	if _, broker := before.cpuUse(after); broker != 4 {
		t.Errorf("cpuUse broker seconds = %g, want 4", broker)
	}
	after.brokerOK = false
	if got := before.nodeSeconds(after); got != nil {
		t.Errorf("nodeSeconds of an unread sample = %v, want nil", got)
	}
}

// TestLeaderVariants: every variant also comes with each leader locator,
// which its slug and name end with, and the default variants place none.
func TestLeaderVariants(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"-variants", "quorum-at-least-once-r16-client-local,quorum-at-least-once-r16-balanced"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range cfg.Variants {
		got = append(got, v.Name+" → "+string(v.LeaderLocator)+", base "+v.Base)
	}
	want := []string{
		"quorum at-least-once r16, client-local → client-local, base quorum at-least-once",
		"quorum at-least-once r16, balanced → balanced, base quorum at-least-once",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("variants (-want +got):\n%s", diff)
	}
	for _, v := range defaultVariants() {
		if v.LeaderLocator != "" {
			t.Errorf("default variant %s places its leaders (%s)", v.Slug, v.LeaderLocator)
		}
	}
	r := runner{cfg: cfg, prefix: "p"}
	if spec := r.spec(trialPlan{variant: cfg.Variants[1], rate: 1000}); spec.QueueLeaderLocator != topology.LeaderLocatorBalanced {
		t.Errorf("spec of %s has leader locator %q", cfg.Variants[1].Slug, spec.QueueLeaderLocator)
	}
}
