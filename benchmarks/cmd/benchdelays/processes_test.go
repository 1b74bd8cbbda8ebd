package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseProcessSample(t *testing.T) {
	// rabbitmqctl eval prints the list with ~p, wrapping it where it likes.
	output := `[{node_total,90215530},
 {ra_server_proc,1200},
 {rabbit_channel,
     300},{'Elixir.Some.Module',7},
 {rabbit_fifo_dlx_worker,50}]
`
	got, err := parseProcessSample(output)
	if err != nil {
		t.Fatal(err)
	}
	want := processSample{totalKind: 90215530, "ra_server_proc": 1200, "rabbit_channel": 300, "Elixir.Some.Module": 7, "rabbit_fifo_dlx_worker": 50}
	if !maps.Equal(got, want) {
		t.Errorf("parseProcessSample:\n got %v\nwant %v", got, want)
	}
	if _, err := parseProcessSample("Error: unable to perform an operation on node 'rabbit@localhost'"); err == nil {
		t.Error("an answer without a total parsed")
	}
}

func TestWorkBetween(t *testing.T) {
	before := brokerSample{
		processes: processSample{totalKind: 1000, "ra_server_proc": 100, "rabbit_channel": 50, "gone": 30},
		threads:   map[string]time.Duration{"erts_sched": time.Second, "erts_dios": time.Second},
	}
	after := brokerSample{
		processes: processSample{totalKind: 1900, "ra_server_proc": 600, "rabbit_channel": 50, "rabbit_fifo_dlx_worker": 70},
		threads:   map[string]time.Duration{"erts_sched": 3 * time.Second, "erts_dios": time.Second, "erts_aux": time.Millisecond},
	}
	got := workBetween(before, after)
	want := processWork{Total: 900, Kinds: map[string]int64{"ra_server_proc": 500, "rabbit_fifo_dlx_worker": 70},
		ThreadCPU: map[string]time.Duration{"erts_sched": 2 * time.Second, "erts_aux": time.Millisecond}}
	if got.Total != want.Total || !maps.Equal(got.Kinds, want.Kinds) || !maps.Equal(got.ThreadCPU, want.ThreadCPU) {
		t.Errorf("workBetween = %+v, want %+v", got, want)
	}
}

func TestBrokerProfileMarkdown(t *testing.T) {
	trial := func(variant string, baseline bool, delivered int, work processWork) trialResult {
		t := trialResult{Variant: variant, Baseline: baseline, Main: true, Levels: 1, BrokerWork: &work}
		t.Measurement.Delivered = delivered
		return t
	}
	r := report{Trials: []trialResult{
		trial("quorum at-least-once r256", false, 1000, processWork{Total: 900_000, Kinds: map[string]int64{
			"ra_server_proc": 600_000, "rabbit_fifo_dlx_worker": 200_000, "rabbit_channel": 50_000},
			ThreadCPU: map[string]time.Duration{"erts_sched": 800 * time.Millisecond, "erts_dios": 100 * time.Millisecond, "1_other": 5 * time.Millisecond}}),
		trial("quorum at-least-once", true, 1000, processWork{Total: 300_000, Kinds: map[string]int64{
			"ra_server_proc": 150_000, "rabbit_fifo_dlx_worker": 40_000, "rabbit_channel": 60_000},
			ThreadCPU: map[string]time.Duration{"erts_sched": 250 * time.Millisecond, "erts_dios": 50 * time.Millisecond}}),
		{Variant: "quorum at-least-once r16", Main: true}, // not profiled: no column
	}}
	got := brokerProfileMarkdown(r)
	cells := map[string][]string{}
	for _, line := range strings.Split(got, "\n") {
		if fields := strings.Split(strings.Trim(line, "| "), "|"); len(fields) == 3 {
			cells[strings.TrimSpace(fields[0])] = []string{strings.TrimSpace(fields[1]), strings.TrimSpace(fields[2])}
		}
	}
	for row, want := range map[string][]string{
		// reductions per message delivered, r256 then the baseline
		"`ra_server_proc` (quorum queues' Raft servers)":               {"600", "150"},
		"`rabbit_fifo_dlx_worker` (at-least-once dead-letter workers)": {"200", "40"},
		"`rabbit_channel` (AMQP channels)":                             {"50", "60"},
		"other live processes":                                         {"–", "–"},
		"exited processes":                                             {"50", "50"}, // the total less the live kinds
		"**total**":                                                    {"900", "300"},
		// the thread table: ms of CPU per message delivered
		"`erts_sched` (schedulers: run the processes above, and busy-wait for work before they sleep)": {"0.80", "0.25"},
		"`erts_dios` (dirty I/O schedulers: file reads and writes)":                                    {"0.10", "0.05"},
		"other threads":   {"0.01", "0.00"},
		"**all threads**": {"0.91", "0.30"},
	} {
		if !slices.Equal(cells[row], want) {
			t.Errorf("row %q = %q, want %q in:\n%s", row, cells[row], want, got)
		}
	}
	if strings.Contains(got, "r16") {
		t.Errorf("a trial without a profile has a column:\n%s", got)
	}
	if brokerProfileMarkdown(report{Trials: []trialResult{{Variant: "x", Main: true}}}) != "" {
		t.Error("a run without profiles has a table")
	}
}
