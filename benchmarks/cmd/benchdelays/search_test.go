package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
)

// heldTrial is a trial at rate that held: on schedule, p99 10 ms, nothing wrong.
func heldTrial(rate float64) trialResult {
	return trialResult{
		Rate:        rate,
		Pacing:      messaging.PacingReport{Target: rate, Sent: int(rate) * 30, Scheduled: 30 * time.Second, Elapsed: 30 * time.Second, MaxLag: 10 * ms},
		Measurement: measurement{Acked: int(rate) * 30, Delivered: int(rate) * 30, Lateness: messaging.Percentiles{P99: 10 * ms}},
	}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		change  func(*trialResult)
		wantWhy string // "" when it holds
	}{
		"holds":                  {change: func(*trialResult) {}},
		"duplicates do not fail": {change: func(t *trialResult) { t.Measurement.Duplicates = 3 }},
		"p99 at the limit":       {change: func(t *trialResult) { t.Measurement.Lateness.P99 = time.Second }, wantWhy: "p99 lateness 1s ≥ 1s"},
		"lost":                   {change: func(t *trialResult) { t.Measurement.Lost = 2 }, wantWhy: "2 lost"},
		"early":                  {change: func(t *trialResult) { t.Measurement.Early = 1 }, wantWhy: "1 early"},
		"nacked":                 {change: func(t *trialResult) { t.Measurement.Nacked = 4 }, wantWhy: "4 refused by the broker"},
		"unroutable":             {change: func(t *trialResult) { t.Measurement.Unroutable = 1 }, wantWhy: "0 misrouted, 1 unroutable"},
		"failed":                 {change: func(t *trialResult) { t.Error = "boom" }, wantWhy: "the trial failed: boom"},
		"publisher behind": {
			change:  func(t *trialResult) { t.Pacing.Elapsed = 40 * time.Second; t.Pacing.MaxLag = 10 * time.Second },
			wantWhy: "the publisher fell behind: 750 msg/s of 1000, up to 10s late",
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			trial := heldTrial(1000)
			test.change(&trial)
			held, why := verdict(trial, time.Second, 500*ms)
			if held != (test.wantWhy == "") || why != test.wantWhy {
				t.Errorf("verdict() = %v, %q; want %v, %q", held, why, test.wantWhy == "", test.wantWhy)
			}
		})
	}
}

// TestVerdictOfAnAbandonedPublish fails a trial whose publisher stopped
// behind its schedule (see TestPublishPacedAbandonsWhenFarBehind) as
// stopped, whatever else it measured.
func TestVerdictOfAnAbandonedPublish(t *testing.T) {
	t.Parallel()
	report := messaging.PacingReport{Target: 1000, Sent: 40, Elapsed: 85 * ms, MaxLag: 45 * ms, Scheduled: 999 * ms, Abandoned: true}
	held, why := verdict(trialResult{Pacing: report}, time.Second, time.Hour)
	if held || !strings.Contains(why, "stopped after") {
		t.Errorf("verdict of an abandoned publish = %v, %q; want it failed as stopped", held, why)
	}
}

// TestNextRateFindsThreshold runs the search against every threshold and
// every starting rate: where rates up to a threshold hold, it must find at
// least the highest step that holds, never a rate above the threshold, and
// stop only within 10 % of the lowest rate that failed, trying each rate
// once.
func TestNextRateFindsThreshold(t *testing.T) {
	t.Parallel()
	steps := []float64{500, 1000, 2000, 4000, 8000}
	for _, threshold := range []float64{0, 300, 500, 1500, 1999, 2000, 2150, 4000, 8000, 10000} {
		for _, startRate := range []float64{500, 1000, 3000, 8000} {
			t.Run(fmt.Sprintf("threshold %g from %g", threshold, startRate), func(t *testing.T) {
				t.Parallel()
				try := func(rate float64) step { return step{Rate: rate, Held: rate <= threshold} }
				tried := []step{try(startRate)}
				for rate, ok := nextRate(steps, tried, true); ok; rate, ok = nextRate(steps, tried, true) {
					if len(tried) > len(steps)+1+10 { // 10 steps of 10 % span the widest gap, 2×, with room
						t.Fatalf("the search does not end: %v", tried)
					}
					tried = append(tried, try(rate))
				}
				coarse := 0.0
				for _, r := range append([]float64{startRate}, steps...) {
					if r <= threshold {
						coarse = max(coarse, r)
					}
				}
				got := highestHeld(tried)
				if got < coarse || got > threshold {
					t.Errorf("tried %v: highest held %g, want between the highest step that holds, %g, and the threshold", tried, got, coarse)
				}
				lowestFailed := math.Inf(1)
				for _, s := range tried {
					if !s.Held {
						lowestFailed = min(lowestFailed, s.Rate)
					}
				}
				if got > 0 && !math.IsInf(lowestFailed, 1) && got*fineStep < 0.98*lowestFailed {
					t.Errorf("tried %v: stopped at %g, more than 10 %% below the failure at %g", tried, got, lowestFailed)
				}
				// A rate is tried once at most.
				seen := map[float64]bool{}
				for _, s := range tried {
					if seen[s.Rate] {
						t.Errorf("tried %g twice: %v", s.Rate, tried)
					}
					seen[s.Rate] = true
				}
				if n := searchTrials(steps, true, startRate, threshold); n != len(tried) {
					t.Errorf("searchTrials = %d, the search ran %d", n, len(tried))
				}
			})
		}
	}
}

func TestNextRateOrder(t *testing.T) {
	t.Parallel()
	steps := []float64{500, 1000, 2000, 4000, 8000}
	tests := map[string]struct {
		tried    []step
		wantRate float64
		wantOK   bool
	}{
		"nothing tried starts at the top":      {tried: nil, wantRate: 8000, wantOK: true},
		"held at 1000 goes up":                 {tried: []step{{Rate: 1000, Held: true}}, wantRate: 2000, wantOK: true},
		"failed at 1000 goes down":             {tried: []step{{Rate: 1000}}, wantRate: 500, wantOK: true},
		"held below a failure: 10 % up":        {tried: []step{{Rate: 1000, Held: true}, {Rate: 2000}}, wantRate: 1100, wantOK: true},
		"10 % up from a held fine step":        {tried: []step{{Rate: 1000, Held: true}, {Rate: 2000}, {Rate: 1100, Held: true}}, wantRate: 1210, wantOK: true},
		"within 10 % of a failure: done":       {tried: []step{{Rate: 1000, Held: true}, {Rate: 2000}, {Rate: 1100}}, wantOK: false},
		"a fine step near the failure: done":   {tried: []step{{Rate: 1000, Held: true}, {Rate: 1110}}, wantOK: false},
		"failed at the lowest: done":           {tried: []step{{Rate: 1000}, {Rate: 500}}, wantOK: false},
		"held at the top: done":                {tried: []step{{Rate: 4000, Held: true}, {Rate: 8000, Held: true}}, wantOK: false},
		"a start off the steps goes up":        {tried: []step{{Rate: 1500, Held: true}}, wantRate: 2000, wantOK: true},
		"a start off the steps goes down":      {tried: []step{{Rate: 1500}}, wantRate: 1000, wantOK: true},
		"a failure above the start: 10 % up":   {tried: []step{{Rate: 500, Held: true}, {Rate: 1000, Held: true}, {Rate: 2000}}, wantRate: 1100, wantOK: true},
		"down to a held step, then 10 % up":    {tried: []step{{Rate: 1000}, {Rate: 500, Held: true}}, wantRate: 550, wantOK: true},
		"steps between come before fine steps": {tried: []step{{Rate: 500, Held: true}, {Rate: 4000}}, wantRate: 1000, wantOK: true},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rate, ok := nextRate(steps, test.tried, true)
			if rate != test.wantRate || ok != test.wantOK {
				t.Errorf("nextRate(%v) = %g, %v; want %g, %v", test.tried, rate, ok, test.wantRate, test.wantOK)
			}
		})
	}
}

func TestSearchTrialsRange(t *testing.T) {
	t.Parallel()
	steps := []float64{500, 1000, 2000}
	fewest, most := searchTrialsRange(steps, true, 1000)
	// Fewest: 1000 ✗, 500 ✗. Most, a limit just under 2000: 1000 ✓, 2000 ✗,
	// then 1100, 1210, 1331, 1464, 1611, 1772 and 1949 ✓, and 2144 is not
	// clearly below 2000: 9 in all.
	if fewest != 2 || most != 9 {
		t.Errorf("searchTrialsRange = %d, %d; want 2, 9", fewest, most)
	}
	// Without 10 % steps: at most 1000 ✓, 2000 ✗ or 1000 ✓, 2000 ✓ or 1000 ✗, 500 ✗/✓.
	if fewest, most := searchTrialsRange(steps, false, 1000); fewest != 2 || most != 2 {
		t.Errorf("searchTrialsRange without fine steps = %d, %d; want 2, 2", fewest, most)
	}
	if rate, ok := nextRate(steps, []step{{Rate: 1000, Held: true}, {Rate: 2000}}, false); ok {
		t.Errorf("nextRate without fine steps went on to %g after the bracket", rate)
	}
}

func TestFormatSteps(t *testing.T) {
	t.Parallel()
	got := formatSteps([]step{
		{Rate: 2000, Held: false, Why: "p99 lateness 1.2s ≥ 1s", P99: 1200 * ms},
		{Rate: 1000, Held: true, P99: 12 * ms},
		{Rate: 4000, Held: false, Why: "3 lost", P99: 30 * ms},
	})
	want := "1,000 ✓ 12.0 · 2,000 ✗ 1200 · 4,000 ✗ 30.0 (3 lost)"
	if got != want {
		t.Errorf("formatSteps() = %q, want %q", got, want)
	}
	if !strings.Contains(formatSteps(nil), "–") {
		t.Error("formatSteps(nil) should be a dash")
	}
}
