package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfigDefaultsAreTheIssues(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Steady state: twice the longest delay, 255 ticks of 100ms.
	if cfg.Levels != 8 || cfg.Resolution != 100*ms || cfg.Rate != 1000 || cfg.Duration != 51*time.Second ||
		cfg.LossWindow != 10*time.Second || cfg.P99Limit != time.Second || cfg.SearchDuration != cfg.Duration {
		t.Errorf("defaults %+v; want N=8, R=100ms, 1000/s for 51s, loss window 10s, p99 limit 1s, searches as long as the main run", cfg)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("the defaults warn: %q", cfg.Warnings)
	}
	if cfg.Tick != 10*ms || cfg.LagLimit != 500*ms || cfg.Prefetch != 256 || cfg.MaxInFlight != 10000 || cfg.Seed != 1 {
		t.Errorf("pacing and clients %+v; want the published runs' tick 10ms, lag limit 500ms, prefetch 256, 10,000 in flight, seed 1", cfg.settings)
	}
	if diff := cmp.Diff([]int{2, 4, 16}, cfg.IdleRadixes); diff != "" || cfg.IdleWindow != 20*time.Second {
		t.Errorf("idle radixes (-want +got):\n%s, window %s; want 20s", diff, cfg.IdleWindow)
	}
	if diff := cmp.Diff([]float64{100, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000}, cfg.Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if cfg.BaselineDelay != 12800*ms {
		t.Errorf("baseline delay %s, want 12.8s, the top level's TTL", cfg.BaselineDelay)
	}
	if len(cfg.Variants) != 3 {
		t.Errorf("variants %v, want all three", cfg.Variants)
	}
	for _, v := range cfg.Variants {
		if v.Radix != 2 || v.Name != v.Base {
			t.Errorf("default variant %+v, want radix 2 under its queue kind's name", v)
		}
	}
}

// TestParseConfigRadixVariants: the issue's variants, each set holding the
// default range (255 ticks) with the planner's digits: 8 binary, 4 in radix
// 4, 3 in radix 8, 2 hex.
func TestParseConfigRadixVariants(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"-variants", "quorum-at-most-once,quorum-at-most-once-r16,quorum-at-least-once-r4,classic-r8"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range cfg.Variants {
		got = append(got, fmt.Sprintf("%s: radix %d, %d digits, baseline of %s", v.Name, v.Radix, cfg.levelsIn(v.Radix), v.Base))
	}
	want := []string{
		"quorum at-most-once: radix 2, 8 digits, baseline of quorum at-most-once",
		"quorum at-most-once r16: radix 16, 2 digits, baseline of quorum at-most-once",
		"quorum at-least-once r4: radix 4, 4 digits, baseline of quorum at-least-once",
		"classic r8: radix 8, 3 digits, baseline of classic",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("variants (-want +got):\n%s", diff)
	}
	// One baseline per queue kind, after the kind's first set.
	var plans []string
	for _, p := range trialPlans(cfg) {
		plans = append(plans, fmt.Sprintf("%s %t", p.variant.Name, p.baseline))
	}
	wantPlans := []string{
		"quorum at-most-once false", "quorum at-most-once true", "quorum at-most-once r16 false",
		"quorum at-least-once r4 false", "quorum at-least-once true", "classic r8 false", "classic true",
	}
	if diff := cmp.Diff(wantPlans, plans); diff != "" {
		t.Errorf("trial plans (-want +got):\n%s", diff)
	}
}

// TestParseConfigWarnsShortDuration: a duration under twice the longest
// delay is measured, with a warning that says the figures are not
// steady-state; one long enough is not.
func TestParseConfigWarnsShortDuration(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"-duration", "10s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Duration != 10*time.Second || cfg.SearchDuration != 10*time.Second {
		t.Errorf("-duration 10s gave %s, searches %s", cfg.Duration, cfg.SearchDuration)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "-duration 10s is shorter than twice the longest delay (51s)") ||
		!strings.Contains(cfg.Warnings[0], "not steady-state") {
		t.Errorf("warnings %q; want one about -duration not being steady-state", cfg.Warnings)
	}
	cfg, err = parseConfig([]string{"-duration", "60s", "-search-duration", "20s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.HasPrefix(cfg.Warnings[0], "-search-duration 20s") {
		t.Errorf("warnings %q; want one about -search-duration", cfg.Warnings)
	}
	// -quick at N = 4 (longest delay 1.5s) publishes for 3s: steady state.
	cfg, err = parseConfig([]string{"-quick"}, io.Discard)
	if err != nil || len(cfg.Warnings) != 0 {
		t.Errorf("-quick: %v, warnings %q; want none", err, cfg.Warnings)
	}
}

// TestEstimateRun checks the estimate against a run counted by hand: one
// variant and its baseline, no search, two idle radixes.
func TestEstimateRun(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"-variants", "quorum-at-most-once", "-steps", "", "-idle-radixes", "2,16"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// 5s idle; set: 5s pause + 51s + 25.5s + 1s settle + 8s; baseline: the same with 12.8s;
	// per idle radix 2·20s + 2·8s.
	want := 5*time.Second + (5*time.Second + 51*time.Second + 25500*ms + time.Second + trialOverhead) +
		(5*time.Second + 51*time.Second + 12800*ms + time.Second + trialOverhead) + 2*(40*time.Second+2*trialOverhead)
	if least, most := estimateRun(cfg); least != want || most != want {
		t.Errorf("estimateRun = %s, %s; want %s both", least, most, want)
	}
	cfg.Steps = []float64{500, 1000, 2000}
	least, most := estimateRun(cfg)
	fewest, longest := searchTrialsRange(cfg.Steps, cfg.Fine, cfg.Rate)
	set, base := 5*time.Second+51*time.Second+25500*ms+time.Second+trialOverhead, 5*time.Second+51*time.Second+12800*ms+time.Second+trialOverhead
	if least != want+time.Duration(fewest-1)*(set+base) || most != want+time.Duration(longest-1)*(set+base) {
		t.Errorf("estimateRun with a search = %s, %s; want the main trials' plus %d to %d search trials each, the main trial being the first", least, most, fewest, longest)
	}
}

func TestParseConfigQuickKeepsGivenFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"-quick", "-rate", "300", "-variants", "classic", "-steps", ""}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Levels != 4 || cfg.Duration != 3*time.Second || cfg.BaselineDelay != 800*ms {
		t.Errorf("-quick gave N=%d, %s, baseline %s; want N=4, 3s, 800ms", cfg.Levels, cfg.Duration, cfg.BaselineDelay)
	}
	if cfg.Fine || cfg.IdleWindow != 3*time.Second || len(cfg.IdleRadixes) != 2 {
		t.Errorf("-quick gave fine steps %t, idle radixes %v for %s; want none, 2 and 16 for 3s", cfg.Fine, cfg.IdleRadixes, cfg.IdleWindow)
	}
	if cfg.Rate != 300 || len(cfg.Steps) != 0 || len(cfg.Variants) != 1 || cfg.Variants[0].Slug != "classic" {
		t.Errorf("-quick overrode given flags: rate %g, steps %v, variants %v", cfg.Rate, cfg.Steps, cfg.Variants)
	}
}

func TestParseConfigRefuses(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-variants", "lazy"},
		{"-steps", "1000,x"},
		{"-steps", "-5"},
		{"-rate", "0"},
		{"-levels", "40"},
		{"-levels", "0"}, // refused before the baseline delay shifts by levels − 1
		{"-resolution", "1500us"},
		{"-baseline-delay", "1500us"},
		{"-variants", "quorum-at-most-once-r3"},
		{"-idle-radixes", "2,3"},
		{"-idle-radixes", "16", "-idle-window", "0s"},
		{"-tick", "20ms"}, // the published runs' pacing is fixed
		{"stray"},
	} {
		if _, err := parseConfig(args, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded", strings.Join(args, " "))
		}
	}
}

func TestParseRatesSortsAndDeduplicates(t *testing.T) {
	t.Parallel()
	got, err := parseRates("4000, 500,1000,500,")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{500, 1000, 4000}, got); diff != "" {
		t.Errorf("parseRates (-want +got):\n%s", diff)
	}
}

func TestCommandLineQuotes(t *testing.T) {
	t.Parallel()
	got := commandLine("benchdelays", []string{"-steps", "", "-out", "/tmp/my dir", "-rate", "1000", "-x", "it's"})
	want := `benchdelays -steps '' -out '/tmp/my dir' -rate 1000 -x 'it'\''s'`
	if got != want {
		t.Errorf("commandLine = %s, want %s", got, want)
	}
}

func TestDescribeRun(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig([]string{"-variants", "quorum-at-most-once,quorum-at-most-once-r16", "-steps", "", "-idle-radixes", "2,16"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	least, _ := estimateRun(cfg)
	got := describeRun(cfg)
	for _, want := range []string{
		"quorum at-most-once (8 digits), quorum at-most-once baseline, quorum at-most-once r16 (2 digits)",
		"delays 0…25.5s, main trials at 1,000 msg/s for 51s",
		"idle sets of radix 2, 16 for 20s",
		"; about " + formatMinutes(least) + "\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("describeRun = %q, lacks %q", got, want)
		}
	}
}
