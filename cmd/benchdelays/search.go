package main

import (
	"fmt"
	"time"
)

// verdict says whether a trial held the promise at its rate: every message
// on time (none early, none lost, none misrouted or parked), p99 lateness
// under limit, and the publisher on schedule, since a broker that slows its
// publisher down has not taken the rate. why is empty when it held.
func verdict(t trialResult, limit time.Duration, lagLimit time.Duration) (held bool, why string) {
	m := t.Measurement
	switch {
	case t.Error != "":
		return false, "the trial failed: " + t.Error
	case !t.Pacing.keptUp(lagLimit):
		return false, fmt.Sprintf("the publisher fell behind: %.0f msg/s of %.0f, up to %s late",
			t.Pacing.achieved(), t.Pacing.Target, t.Pacing.MaxLag.Round(time.Millisecond))
	case m.Lost > 0:
		return false, fmt.Sprintf("%d lost", m.Lost)
	case m.Early > 0:
		return false, fmt.Sprintf("%d early", m.Early)
	case m.Nacked > 0:
		return false, fmt.Sprintf("%d refused by the broker", m.Nacked)
	case m.Misrouted > 0 || m.Unroutable > 0:
		return false, fmt.Sprintf("%d misrouted, %d unroutable", m.Misrouted, m.Unroutable)
	case m.Lateness.P99 >= limit:
		return false, fmt.Sprintf("p99 lateness %s ≥ %s", m.Lateness.P99.Round(time.Millisecond), limit)
	}
	return true, ""
}

// step is one rate a search tried.
type step struct {
	Rate float64       `json:"rate_per_s"`
	Held bool          `json:"held"`
	Why  string        `json:"why,omitempty"`
	P99  time.Duration `json:"p99_ns"`
}

// nextRate is the next rate of steps (ascending) a search should try, given
// the steps tried so far, assuming that a rate that holds means every lower
// one holds: the lowest step above the highest that held, or, when none has
// held, the highest below the lowest that failed; ok is false when there is
// no untried step between them. So a search that starts at the main rate
// goes up while the rates hold and down while they fail.
func nextRate(steps []float64, tried []step) (rate float64, ok bool) {
	highestHeld, lowestFailed := highestHeld(tried), -1.0
	for _, s := range tried {
		if !s.Held && (lowestFailed < 0 || s.Rate < lowestFailed) {
			lowestFailed = s.Rate
		}
	}
	isTried := func(r float64) bool {
		for _, s := range tried {
			if s.Rate == r {
				return true
			}
		}
		return false
	}
	below := func(r float64) bool { return lowestFailed < 0 || r < lowestFailed }
	if highestHeld > 0 {
		for _, r := range steps {
			if r > highestHeld && below(r) && !isTried(r) {
				return r, true
			}
		}
		return 0, false
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if r := steps[i]; below(r) && !isTried(r) {
			return r, true
		}
	}
	return 0, false
}

// highestHeld is the highest rate that held, or 0 when none did.
func highestHeld(tried []step) float64 {
	highest := 0.0
	for _, s := range tried {
		if s.Held && s.Rate > highest {
			highest = s.Rate
		}
	}
	return highest
}
