package main

import (
	"context"
	"time"
)

// quietPolicy says when the broker has settled after a trial, whose backlog a
// trial started too soon would measure: at most limit % of a CPU, streak times.
type quietPolicy struct {
	limit    float64 // percent of one CPU
	interval time.Duration
	streak   int
	maxWait  time.Duration
}

// newQuietPolicy allows the broker its background work, measured idle
// before the first trial, plus 10 % of a CPU.
func newQuietPolicy(idlePercent float64, maxWait time.Duration) quietPolicy {
	return quietPolicy{limit: max(idlePercent, 0) + 10, interval: time.Second, streak: 3, maxWait: maxWait}
}

// waitQuiet samples the broker's CPU use until it is quiet, maxWait passes, ctx
// ends or a reading is unknown; it returns how long it waited and whether it got quiet.
func (p quietPolicy) waitQuiet(ctx context.Context, sample func() float64) (waited time.Duration, quiet bool) {
	start := time.Now()
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	calm := 0
	for calm < p.streak {
		if time.Since(start) >= p.maxWait {
			return time.Since(start), false
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return time.Since(start), false
		}
		use := sample()
		switch {
		case use < 0:
			return time.Since(start), false
		case use <= p.limit:
			calm++
		default:
			calm = 0
		}
	}
	return time.Since(start), true
}

// brokerCPUSampler returns a function that reports the broker's CPU use,
// in percent of a CPU, since its previous call.
func brokerCPUSampler(pids []int) func() float64 {
	last, lastAt := sampleCPU(pids), time.Now()
	return func() float64 {
		now, nowAt := sampleCPU(pids), time.Now()
		_, seconds := last.cpuUse(now)
		elapsed := nowAt.Sub(lastAt).Seconds()
		last, lastAt = now, nowAt
		if seconds < 0 || elapsed <= 0 {
			return -1
		}
		return 100 * seconds / elapsed
	}
}
