package main

import (
	"fmt"
	"math"
	"time"
)

// verdict says whether a trial held at its rate: none early, lost, misrouted or
// parked, p99 under limit, and the publisher on schedule; why says what failed.
func verdict(t trialResult, limit time.Duration, lagLimit time.Duration) (held bool, why string) {
	m := t.Measurement
	switch {
	case t.Error != "":
		return false, "the trial failed: " + t.Error
	case t.Pacing.Abandoned:
		return false, fmt.Sprintf("the publisher fell more than %s behind and stopped after %d messages",
			t.Pacing.MaxLag.Truncate(time.Second), t.Pacing.Sent)
	case !t.Pacing.KeptUp(lagLimit):
		return false, fmt.Sprintf("the publisher fell behind: %.0f msg/s of %.0f, up to %s late",
			t.Pacing.Achieved(), t.Pacing.Target, t.Pacing.MaxLag.Round(time.Millisecond))
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

// fineStep is the ratio of the rates a search tries once the steps bracket the
// limit, so that the highest rate found is within 10 % of it whatever the steps.
const fineStep = 1.1

// nextRate is the next rate to try, a rate that holds meaning every lower one
// holds: up the steps, down while they fail, then up by fineStep; false when done.
func nextRate(steps []float64, tried []step, fine bool) (rate float64, ok bool) {
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
		if next := math.Round(highestHeld * fineStep); fine && lowestFailed > 0 && next < 0.98*lowestFailed && !isTried(next) {
			return next, true
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

// searchTrials is how many trials a search from start runs when every rate up
// to limit holds and every rate above fails, the start included.
func searchTrials(steps []float64, fine bool, start, limit float64) int {
	try := func(rate float64) step { return step{Rate: rate, Held: rate <= limit} }
	tried := []step{try(start)}
	for rate, ok := nextRate(steps, tried, fine); ok; rate, ok = nextRate(steps, tried, fine) {
		tried = append(tried, try(rate))
	}
	return len(tried)
}

// searchTrialsRange is the fewest and the most trials a search from start runs,
// over every limit the broker may have.
func searchTrialsRange(steps []float64, fine bool, start float64) (fewest, most int) {
	limits := []float64{0, math.Inf(1)}
	for _, r := range append([]float64{start}, steps...) {
		limits = append(limits, r, r*0.999)
	}
	fewest = math.MaxInt
	for _, limit := range limits {
		n := searchTrials(steps, fine, start, limit)
		fewest, most = min(fewest, n), max(most, n)
	}
	return fewest, most
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
