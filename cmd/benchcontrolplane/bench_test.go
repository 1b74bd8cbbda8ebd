package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
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

func TestReportMarkdown(t *testing.T) {
	r := report{
		Provenance: machine.Provenance{Commit: "5dae7b0abcde", Date: time.Date(2026, 11, 24, 1, 8, 0, 0, time.UTC), CPUs: 2,
			OS: "linux", Arch: "amd64", Go: "go1.26.8", RabbitMQ: "3.10.8", Erlang: "25.2.3", Terraform: "1.11.4"},
		UnrelatedQueues: 5000, UnrelatedBindings: 20000, Plans: 3,
		Sets: []setResult{
			{Levels: 8, Objects: 67, Create: measurement{69, 500 * time.Millisecond}, Plan: measurement{13, 320 * time.Millisecond}, Destroy: measurement{120, 600 * time.Millisecond}},
			{Busy: true, Levels: 8, Objects: 67, Create: measurement{69, 510 * time.Millisecond}, Plan: measurement{13, 330 * time.Millisecond}, Destroy: measurement{120, 610 * time.Millisecond}},
		},
		CreatePaths: []createPaths{{Levels: 8, Declares: measurement{67, 250 * time.Millisecond}, Definitions: measurement{1, 180 * time.Millisecond}}},
	}
	got := r.Markdown()
	for _, want := range []string{
		"Measured at commit 5dae7b0abcde on 2026-11-24 01:08 UTC. Machine: 2 CPUs, linux/amd64. Software: go1.26.8, RabbitMQ 3.10.8 (Erlang 25.2.3), Terraform 1.11.4.\n",
		"5,000 unrelated queues and 20,000 unrelated bindings",
		"| empty | 8 | 67 | 69 | 0.50 s | 13 (N + 5) | 0.32 s | 120 | 0.60 s |",
		"| busy | 8 | 67 | 69 | 0.51 s | 13 (N + 5) | 0.33 s | 120 | 0.61 s |",
		"| 8 | 67 | 0.25 s | 1 | 0.18 s |",
		"median of 3",
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
	for _, args := range [][]string{{"-levels", "8,x"}, {"-plans", "0"}, {"-unrelated-queues", "0"}, {"extra"}} {
		if _, err := parseConfig(args, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded, want an error", args)
		}
	}
}

func TestMedianAndThousands(t *testing.T) {
	if got := median([]time.Duration{3, 1, 2}); got != 2 {
		t.Errorf("median = %v, want 2", got)
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20000: "20,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
