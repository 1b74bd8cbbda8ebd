package main

import (
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
	if cfg.Levels != 8 || cfg.Resolution != 100*ms || cfg.Rate != 1000 || cfg.Duration != 30*time.Second ||
		cfg.LossWindow != 10*time.Second || cfg.P99Limit != time.Second || cfg.SearchDuration != cfg.Duration {
		t.Errorf("defaults %+v; want N=8, R=100ms, 1000/s for 30s, loss window 10s, p99 limit 1s, searches as long as the main run", cfg)
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
