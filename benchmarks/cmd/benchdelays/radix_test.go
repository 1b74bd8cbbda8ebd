package main

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestLayoutOf checks the planner's figures at the benchmark's default
// range, 255 ticks of 100ms, against the layout's formulas: r−1 TTL queues
// per digit and the parking lot; (r−1)·D(D+1)/2 + D + 1 delay bindings and
// the parking lot's; D·(r−1)/r nonzero digits on average over 0 … r^D − 1.
func TestLayoutOf(t *testing.T) {
	t.Parallel()
	want := map[int]layoutFigures{
		2:  {Radix: 2, Digits: 8, Queues: 9, Bindings: 46, Exchanges: 11, AverageHops: 4},
		4:  {Radix: 4, Digits: 4, Queues: 13, Bindings: 36, Exchanges: 7, AverageHops: 3},
		16: {Radix: 16, Digits: 2, Queues: 31, Bindings: 49, Exchanges: 5, AverageHops: 1.875},
	}
	for radix, w := range want {
		got, err := radixFiguresOf(radix, 25500*ms, 100*ms, topology.QueueTypeQuorum, topology.AtMostOnce)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("radix %d (-want +got):\n%s", radix, diff)
		}
	}
	// Radix 8: 3 digits hold 511 ticks; over 0 … 255 the hops are counted, not taken from the formula.
	got, err := radixFiguresOf(8, 25500*ms, 100*ms, topology.QueueTypeClassic, topology.AtMostOnce)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for ticks := range 256 {
		sum += topology.Hops(uint64(ticks), 8)
	}
	if got.Digits != 3 || got.Queues != 3*7+1 || got.AverageHops != float64(sum)/256 {
		t.Errorf("radix 8: %+v; want 3 digits, 22 queues, average hops %g", got, float64(sum)/256)
	}
	if _, err := radixFiguresOf(3, 25500*ms, 100*ms, topology.QueueTypeQuorum, topology.AtMostOnce); err == nil {
		t.Error("layoutOf radix 3 succeeded")
	}
}

func TestFitCost(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		points []costPoint
		want   costFit
		ok     bool
	}{
		"on a line":     {points: []costPoint{{1, 1}, {2, 1.5}, {3, 2}}, want: costFit{PerMessage: 0.5, PerHop: 0.5, Points: 3}, ok: true},
		"two points":    {points: []costPoint{{1, 0.48}, {4, 2.28}}, want: costFit{PerMessage: -0.12, PerHop: 0.6, Points: 2}, ok: true},
		"scattered":     {points: []costPoint{{0, 0}, {1, 2}, {2, 1}}, want: costFit{PerMessage: 0.5, PerHop: 0.5, Points: 3}, ok: true},
		"one point":     {points: []costPoint{{1, 0.5}}},
		"one hop count": {points: []costPoint{{2, 0.5}, {2, 0.7}}},
		"nothing":       {},
	}
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := fitCost(test.points)
			if ok != test.ok {
				t.Fatalf("fitCost ok = %v, want %v", ok, test.ok)
			}
			if diff := cmp.Diff(test.want, got, approx); diff != "" {
				t.Errorf("fitCost (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExpectedRatio holds the model to the numbers: 0.6 ms of
// broker CPU per hop and nothing else, 0.3 ms per message for the
// benchmark itself; radix 16 (1.875 hops) against radix 2 (4 hops) should
// reach about 1.9 times the rate, and a little under half the baseline's.
func TestExpectedRatio(t *testing.T) {
	t.Parallel()
	m := kindModel{Fit: costFit{PerHop: 0.6}, Fitted: true, Own: 0.3}
	if got, want := m.expectedRatio(1.875, 4), (4*0.6+0.3)/(1.875*0.6+0.3); math.Abs(got-want) > 1e-12 || got < 1.8 || got > 1.9 {
		t.Errorf("expectedRatio(r16 vs r2) = %g, want %g, about 1.9", got, want)
	}
	if got := m.expectedRatio(1.875, 1); got < 0.6 || got > 0.65 {
		t.Errorf("expectedRatio(r16 vs baseline) = %g, want about 0.63", got)
	}
}

// TestKindModels builds the model from trials: per kind, the baseline and
// the sets at the main rate, their hops measured from the deliveries.
func TestKindModels(t *testing.T) {
	t.Parallel()
	mk := func(variantName string, baseline bool, cpuMs float64, byHops map[int]int) trialResult {
		t := trialResult{Variant: variantName, Baseline: baseline, Main: true, OwnCPU: 0}
		n := 0
		for hops := range 9 {
			if c := byHops[hops]; c > 0 {
				t.Measurement.ByHops = append(t.Measurement.ByHops, hopStats{Hops: hops, Percentiles: messaging.Percentiles{Count: c}})
				n += c
			}
		}
		t.Measurement.Delivered = n
		t.BrokerCPU = cpuMs * float64(n) / 1000
		return t
	}
	r := report{Trials: []trialResult{
		mk("quorum at-most-once", false, 2.5, map[int]int{2: 500, 6: 500}), // 4 hops
		mk("quorum at-most-once", true, 0.7, map[int]int{1: 1000}),
		mk("quorum at-most-once r16", false, 1.225, map[int]int{1: 125, 2: 875}), // 1.875 hops
		mk("classic", false, 1, map[int]int{1: 10}),                              // no baseline: no model
	}}
	models := kindModels(r)
	if len(models) != 1 || models[0].Kind != "quorum at-most-once" || len(models[0].Sets) != 2 || !models[0].Fitted {
		t.Fatalf("kindModels = %+v; want one fitted model of quorum at-most-once with two sets", models)
	}
	// Three points on 0.1 + 0.6·hops.
	if fit := models[0].Fit; math.Abs(fit.PerHop-0.6) > 1e-4 || math.Abs(fit.PerMessage-0.1) > 1e-4 {
		t.Errorf("fit %+v; want c0 0.1, c_hop 0.6", fit)
	}
}

func TestFormatIdle(t *testing.T) {
	t.Parallel()
	if got := formatCPUDelta(6.3, 4.5); got != "6.3 % (+1.8)" {
		t.Errorf("formatCPUDelta = %q", got)
	}
	if got := formatCPUDelta(3, 4.5); got != "3.0 % (-1.5)" {
		t.Errorf("formatCPUDelta of less CPU with the set = %q, want 3.0 %% (-1.5)", got)
	}
	if got := formatMemoryDelta(203<<20, 200<<20); got != "+3.0 MiB" {
		t.Errorf("formatMemoryDelta = %q", got)
	}
	if formatMemoryDelta(-1, 5) != "?" || formatCPUDelta(-1, 1) != "?" {
		t.Error("unknown figures should show as ?")
	}
}
