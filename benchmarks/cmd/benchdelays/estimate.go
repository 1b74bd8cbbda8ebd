package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// measured is what one series of trials measures: a variant's set, or its
// queue kind's one-hop baseline.
type measured struct {
	variant  variant
	baseline bool
}

// trialPlans are the run's series in order: each variant's set, then its kind's
// baseline the first time the kind comes.
func trialPlans(cfg config) []measured {
	var plans []measured
	baselined := map[string]bool{}
	for _, v := range cfg.Variants {
		plans = append(plans, measured{variant: v})
		if cfg.BaselineDelay > 0 && !baselined[v.Base] {
			baselined[v.Base] = true
			plans = append(plans, measured{variant: kindOf(v), baseline: true})
		}
	}
	return plans
}

// trialOverhead is what a trial takes besides publishing, the delays and the settle time.
const trialOverhead = 5 * time.Second

// steadyState is twice the longest delay: for half the trial the broker holds
// messages of every delay while new ones arrive, as under a constant load.
func steadyState(longestDelay time.Duration) time.Duration { return 2 * longestDelay }

// trialTime estimates one trial: the pause before it, the publishing, the
// longest delay after it, the settle time and the overhead.
func trialTime(cfg config, baseline bool, duration time.Duration) time.Duration {
	longest := cfg.maxDelay()
	if baseline {
		longest = cfg.BaselineDelay
	}
	return cfg.Pause + duration + longest + cfg.Settle + trialOverhead
}

// idleTime estimates the idle measurement of one radix, without and with the set.
func idleTime(cfg config) time.Duration { return 2*cfg.IdleWindow + 2*trialOverhead }

// estimateRun is how long the run should take, at least and at most, the
// searches as short or as long as the steps allow.
func estimateRun(cfg config) (least, most time.Duration) {
	total := 5 * time.Second // the broker's idle CPU, before the first trial
	total += time.Duration(len(cfg.IdleRadixes)) * idleTime(cfg)
	least, most = total, total
	for _, p := range trialPlans(cfg) {
		main := trialTime(cfg, p.baseline, cfg.Duration)
		least, most = least+main, most+main
		if len(cfg.Steps) == 0 {
			continue
		}
		fewest, longest := searchTrialsRange(cfg.Steps, cfg.Fine, cfg.Rate)
		if cfg.SearchDuration == cfg.Duration { // the main trial is the search's first step
			fewest, longest = fewest-1, longest-1
		}
		step := trialTime(cfg, p.baseline, cfg.SearchDuration)
		least += time.Duration(fewest) * step
		most += time.Duration(longest) * step
	}
	return least, most
}

// formatMinutes writes a duration in whole minutes, or seconds under two.
func formatMinutes(d time.Duration) string {
	if d < 2*time.Minute {
		return fmt.Sprintf("%.0f s", math.Ceil(d.Seconds()))
	}
	return fmt.Sprintf("%.0f min", math.Ceil(d.Minutes()))
}

// describeRun says what the run measures and how long it should take.
func describeRun(cfg config) string {
	var b strings.Builder
	plans := trialPlans(cfg)
	var names []string
	for _, p := range plans {
		name := p.variant.Name
		if p.baseline {
			name += " baseline"
		} else {
			name += fmt.Sprintf(" (%d digits)", cfg.levelsIn(p.variant.Radix))
		}
		names = append(names, name)
	}
	fmt.Fprintf(&b, "benchdelays: %s; delays 0…%s, main trials at %s msg/s for %s", strings.Join(names, ", "),
		topology.FormatDuration(cfg.maxDelay()), results.Rate(cfg.Rate), topology.FormatDuration(cfg.Duration))
	if len(cfg.Steps) > 0 {
		fmt.Fprintf(&b, ", searches over %s msg/s for %s each", results.Join(cfg.Steps, ", ", results.Rate), topology.FormatDuration(cfg.SearchDuration))
	}
	if len(cfg.IdleRadixes) > 0 {
		fmt.Fprintf(&b, ", idle sets of radix %s for %s", results.Join(cfg.IdleRadixes, ", ", strconv.Itoa), topology.FormatDuration(cfg.IdleWindow))
	}
	least, most := estimateRun(cfg)
	if least == most {
		fmt.Fprintf(&b, "; about %s\n", formatMinutes(most))
	} else {
		fmt.Fprintf(&b, "; %s to %s (the searches' length depends on where the limits lie)\n", formatMinutes(least), formatMinutes(most))
	}
	return b.String()
}
