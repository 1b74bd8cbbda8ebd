package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func TestUnrelatedObjects(t *testing.T) {
	noise := unrelatedObjects("v", 5000, 20000)
	if len(noise.Queues) != 5000 || len(noise.Bindings) != 20000 || len(noise.Exchanges) != unrelatedExchanges {
		t.Fatalf("got %d queues, %d bindings, %d exchanges", len(noise.Queues), len(noise.Bindings), len(noise.Exchanges))
	}
	queues := map[string]bool{}
	for _, q := range noise.Queues {
		if queues[q.Name] {
			t.Fatalf("queue %q twice", q.Name)
		}
		queues[q.Name] = true
	}
	bindings := map[topology.Binding]bool{}
	for _, b := range noise.Bindings {
		if bindings[b] || !queues[b.Destination] {
			t.Fatalf("binding %v twice or to an unknown queue", b)
		}
		bindings[b] = true
	}
	// None is an object of a benchmarked set, though some look like one.
	for _, levels := range []int{8, 16, 32} {
		names := topology.Names(fmt.Sprintf("bench-n%d", levels))
		lookAlikes := 0
		for _, q := range noise.Queues {
			if q.Name == names.Level(0) || q.Name == names.Unroutable() {
				t.Fatalf("queue %q belongs to a benchmarked set", q.Name)
			}
			if strings.HasPrefix(strings.ToLower(q.Name), string(names)+".") {
				lookAlikes++
			}
		}
		if lookAlikes == 0 {
			t.Errorf("no queue looks like one of set %s", names)
		}
	}
	if _, err := topology.DefinitionsJSON(noise); err != nil {
		t.Fatal(err)
	}
}

var update = flag.Bool("update", false, "rewrite the golden file in testdata")

// TestReportMarkdown holds the whole report against testdata/report.md
// (-update rewrites it), and names the figures that must show.
func TestReportMarkdown(t *testing.T) {
	r := report{
		Provenance: machine.Provenance{Commit: "5dae7b0abcde", Date: time.Date(2026, 11, 24, 1, 8, 0, 0, time.UTC), CPUs: 2,
			OS: "linux", Arch: "amd64", Go: "go1.26.8", RabbitMQ: "3.10.8", Erlang: "25.2.3", Terraform: "1.11.4"},
		UnrelatedQueues: 5000, UnrelatedBindings: 20000, Plans: 3,
		Sets: []setResult{
			{Levels: 8, Objects: 67, Create: measurement{Requests: 69, Wall: 500 * time.Millisecond}, Plan: measurement{Requests: 13, Wall: 320 * time.Millisecond}, Destroy: measurement{Requests: 120, Wall: 600 * time.Millisecond}},
			{Busy: true, Levels: 8, Objects: 67, Create: measurement{Requests: 69, Wall: 510 * time.Millisecond}, Plan: measurement{Requests: 13, Wall: 330 * time.Millisecond}, Destroy: measurement{Requests: 120, Wall: 610 * time.Millisecond}},
		},
		CreatePaths: []createPaths{{Levels: 8, Declares: measurement{Requests: 67, Wall: 250 * time.Millisecond}, Definitions: measurement{Requests: 1, Wall: 180 * time.Millisecond}}},
		ManySets: []manySetsResult{{Busy: true, Sets: 100, Levels: 17, Objects: 19100, StateBytes: 2_800_000,
			Counted: manySetsRun{Create: measurement{Requests: 25000}, Plan: measurement{Requests: 5800}, Destroy: measurement{Requests: 14900}},
			Runs: []manySetsRun{
				{LoadAverage: 0.5, Plan: measurement{Wall: 4500 * time.Millisecond, TerraformCPU: 6 * time.Second,
					ProviderCPU: 2500 * time.Millisecond, BrokerCPU: 1200 * time.Millisecond},
					Create: measurement{Wall: 20 * time.Second}, DeclareFloor: measurement{Wall: 10 * time.Second},
					UploadFloor: measurement{Wall: 5 * time.Second, BrokerCPU: 4 * time.Second},
					Destroy:     measurement{Wall: 30 * time.Second}, DeleteFloor: measurement{Wall: 6 * time.Second}},
				{LoadAverage: 0.7, Plan: measurement{Wall: 9 * time.Second},
					Create: measurement{Wall: 12 * time.Second}, DeclareFloor: measurement{Wall: 8 * time.Second},
					UploadFloor: measurement{Wall: 9 * time.Second},
					Destroy:     measurement{Wall: 40 * time.Second}, DeleteFloor: measurement{Wall: 5 * time.Second}},
				{LoadAverage: 1.25, Plan: measurement{Wall: 4 * time.Second},
					Create: measurement{Wall: 30 * time.Second}, DeclareFloor: measurement{Wall: 10 * time.Second},
					UploadFloor: measurement{Wall: 20 * time.Second},
					Destroy:     measurement{Wall: 35 * time.Second}, DeleteFloor: measurement{Wall: 7 * time.Second}},
			}}},
		Floor:         floorResult{DataSources: 100, Plan: measurement{Wall: 900 * time.Millisecond, TerraformCPU: time.Second, ProviderCPU: 300 * time.Millisecond}},
		LoadAverage:   0.42,
		BrokerIdleCPU: 25 * time.Millisecond,
		Peeks: []peekResult{{InFlight: 40, Stalled: 31, Latency: messaging.Percentiles{Count: 300,
			P50: 29 * time.Millisecond, P90: 4990 * time.Millisecond, P99: 5040 * time.Millisecond, Max: 5046 * time.Millisecond}}},
	}
	got := r.Markdown()
	golden := filepath.Join("testdata", "report.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err != nil || string(want) != got {
		t.Errorf("Markdown() differs from %s (%v); run go test -update to see the change", golden, err)
	}
	for _, want := range []string{
		"Measured at commit 5dae7b0abcde on 2026-11-24 01:08 UTC. Machine: 2 CPUs, linux/amd64. Software: go1.26.8, RabbitMQ 3.10.8 (Erlang 25.2.3), Terraform 1.11.4.\n",
		"5,000 unrelated queues and 20,000 unrelated bindings",
		"| empty | 8 | 67 | 69 | 0.50 s | 13 | 0.32 s | 120 | 0.60 s |",
		"| busy | 8 | 67 | 69 | 0.51 s | 13 | 0.33 s | 120 | 0.61 s |",
		"| 8 | 67 | 0.25 s | 1 | 0.18 s |",
		"median of 3",
		"| 40 | 300 | 29 ms | 4990 ms | 5040 ms | 5046 ms | 31 |",
		"ran 3 times straight to the broker",
		// plan: min 4 s, median 4.5 s (its CPU), floor 0.9 s, ratios 4.4, 5, 10 → 5.0
		"| busy | 100 × 17 | 19,100 | 2.8 MB | no-change plan | 5800 | 4.00 s | 4.50 s | 6.00 s | 2.50 s | 1.20 s | 0.90 s | 5.0× |",
		// create: floors 5 s (upload), 8 s (declares), 10 s (declares); ratios 4, 1.5, 3 → 3.0; median floor 8 s
		"| busy | 100 × 17 | 19,100 | 2.8 MB | create | 25000 | 12.00 s | 20.00 s | 0.00 s | 0.00 s | 0.00 s | 8.00 s | 3.0× |",
		// destroy: ratios 5, 8, 5 → 5.0; median floor 6 s
		"| busy | 100 × 17 | 19,100 | 2.8 MB | destroy | 14900 | 30.00 s | 35.00 s | 0.00 s | 0.00 s | 0.00 s | 6.00 s | 5.0× |",
		"| busy | 100 × 17 | 1 | 0.50 | 20.00 s | 4.50 s | 0.00 s | 30.00 s | 10.00 s (CPU 0.00 s) | 5.00 s (CPU 4.00 s) | 6.00 s (CPU 0.00 s) |",
		"| busy | 100 × 17 | 3 | 1.25 |",
		"it uses 25 ms per second idle",
		"load average when the benchmark began: 0.42",
		"a plan of 100 `rabbitmq_delay_topology` data sources (no broker, no state) takes 0.90 s, CPU 1.00 s (provider 0.30 s); the median of 3",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Markdown() lacks %q:\n%s", want, got)
		}
	}
}

func TestParseConfig(t *testing.T) {
	cfg, err := parseConfig([]string{"-levels", "8, 32", "-plans", "5"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Levels) != 2 || cfg.Levels[0] != 8 || cfg.Levels[1] != 32 || cfg.Plans != 5 {
		t.Errorf("parseConfig = %+v", cfg)
	}
	if len(cfg.ManySets) != 2 || cfg.ManySets[1] != 100 {
		t.Errorf("parseConfig's many-sets default = %v", cfg.ManySets)
	}
	if cfg, err := parseConfig([]string{"-many-sets", ""}, io.Discard); err != nil || len(cfg.ManySets) != 0 {
		t.Errorf("parseConfig(-many-sets \"\") = %v, %v; want none", cfg.ManySets, err)
	}
	for _, args := range [][]string{{"-levels", "8,x"}, {"-many-sets", "0"}, {"-plans", "0"}, {"-peeks", "300"}, {"extra"}} {
		if _, err := parseConfig(args, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded, want an error", args)
		}
	}
}

func TestMedianByWall(t *testing.T) {
	if got := medianByWall([]measurement{{Wall: 3, Requests: 3}, {Wall: 1, Requests: 1}, {Wall: 2, Requests: 2}}); got.Wall != 2 || got.Requests != 2 {
		t.Errorf("medianByWall = %+v, want the run of wall 2", got)
	}
}

func TestObjectLines(t *testing.T) {
	plan, err := topology.Plan(topology.Spec{Name: "bench-n4", VHost: "v", Levels: 4, Resolution: resolution,
		Routes: []topology.Route{{Destination: routeQueue}}})
	if err != nil {
		t.Fatal(err)
	}
	// As the broker answers: in another order, every binding's destination type spelled out.
	read := topology.Topology{VHost: "v", Exchanges: slices.Clone(plan.Exchanges), Queues: slices.Clone(plan.Queues), Bindings: slices.Clone(plan.Bindings)}
	slices.Reverse(read.Exchanges)
	slices.Reverse(read.Queues)
	slices.Reverse(read.Bindings)
	for i := range read.Bindings {
		if read.Bindings[i].DestinationType == "" {
			read.Bindings[i].DestinationType = topology.DestinationQueue
		}
	}
	if want, got := objectLines(plan), objectLines(read); !slices.Equal(want, got) {
		t.Errorf("the same set read in another order gives other lines:\n%q\n%q", want, got)
	}
	if n := len(objectLines(plan)); n != len(plan.Exchanges)+len(plan.Queues)+len(plan.Bindings) {
		t.Errorf("%d lines for %d objects", n, len(plan.Exchanges)+len(plan.Queues)+len(plan.Bindings))
	}
	read.Queues[0].Arguments.MessageTTL++
	if slices.Equal(objectLines(plan), objectLines(read)) {
		t.Error("a queue of another TTL gives the same lines")
	}
}
