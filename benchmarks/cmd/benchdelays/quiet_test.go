package main

import (
	"context"
	"testing"
	"time"
)

// readings replays CPU readings, then stays at the last one.
func readings(values ...float64) func() float64 {
	i := 0
	return func() float64 {
		v := values[min(i, len(values)-1)]
		i++
		return v
	}
}

func TestWaitQuiet(t *testing.T) {
	t.Parallel()
	policy := quietPolicy{limit: 15, interval: time.Millisecond, streak: 3, maxWait: 200 * time.Millisecond}
	tests := map[string]struct {
		sample    func() float64
		wantQuiet bool
	}{
		"quiet at once":             {sample: readings(5), wantQuiet: true},
		"busy, then quiet":          {sample: readings(90, 80, 40, 12, 9, 8), wantQuiet: true},
		"a spike restarts the run":  {sample: readings(5, 5, 60, 5, 5, 5), wantQuiet: true},
		"never quiet: gives up":     {sample: readings(50), wantQuiet: false},
		"unknown: does not wait":    {sample: readings(-1), wantQuiet: false},
		"exactly the limit is calm": {sample: readings(15), wantQuiet: true},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			sample := func() float64 { calls++; return test.sample() }
			waited, quiet := policy.waitQuiet(context.Background(), sample)
			if quiet != test.wantQuiet {
				t.Errorf("waitQuiet = %v after %s and %d readings, want %v", quiet, waited, calls, test.wantQuiet)
			}
		})
	}
	if waited, _ := policy.waitQuiet(context.Background(), readings(50)); waited < policy.maxWait {
		t.Errorf("a broker never quiet: gave up after %s, before maxWait %s", waited, policy.maxWait)
	}
	// The spike case needs six readings: two calm, the spike, three calm.
	calls := 0
	sample := readings(5, 5, 60, 5, 5, 5)
	policy.waitQuiet(context.Background(), func() float64 { calls++; return sample() })
	if calls != 6 {
		t.Errorf("a spike after two calm readings: %d readings, want 6", calls)
	}
}

func TestWaitQuietStopsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	policy := quietPolicy{limit: 15, interval: time.Millisecond, streak: 3, maxWait: time.Hour}
	if _, quiet := policy.waitQuiet(ctx, readings(90)); quiet {
		t.Error("waitQuiet with a cancelled context reported quiet")
	}
}

func TestNewQuietPolicy(t *testing.T) {
	t.Parallel()
	if p := newQuietPolicy(4.9, time.Minute); p.limit != 14.9 || p.streak != 3 || p.interval != time.Second {
		t.Errorf("newQuietPolicy(4.9%%) = %+v, want a limit of 14.9%% over 3 one-second readings", p)
	}
	if p := newQuietPolicy(-1, time.Minute); p.limit != 10 {
		t.Errorf("newQuietPolicy(unknown) limit = %g, want 10", p.limit)
	}
}
