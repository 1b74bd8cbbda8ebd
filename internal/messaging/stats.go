package messaging

import (
	"fmt"
	"slices"
	"time"
)

// Summary describes the lateness of a set of arrivals.
type Summary struct {
	Count int
	Early int // arrivals more than the broker's clock granularity before their delay was over
	// WithinClock counts the arrivals before their delay was over by less
	// than the broker's clock granularity (see [BrokerClock]).
	WithinClock int
	Min         time.Duration
	P50         time.Duration
	P99         time.Duration
	Max         time.Duration
}

// Summarize computes the lateness summary of arrivals; percentiles use the
// nearest-rank method, so every reported value is one that was measured.
func Summarize(arrivals []Arrival) Summary {
	if len(arrivals) == 0 {
		return Summary{}
	}
	lateness := make([]time.Duration, len(arrivals))
	s := Summary{Count: len(arrivals)}
	for i, a := range arrivals {
		lateness[i] = a.Lateness
		if a.Early() {
			s.Early++
		}
		if a.WithinClock() {
			s.WithinClock++
		}
	}
	slices.Sort(lateness)
	s.Min, s.Max = lateness[0], lateness[len(lateness)-1]
	s.P50, s.P99 = Percentile(lateness, 50), Percentile(lateness, 99)
	return s
}

// Percentiles are nearest-rank percentiles of a set of durations, so
// every figure is one that was measured.
type Percentiles struct {
	Count int           `json:"count"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// PercentilesOf computes the percentiles of values, which it does not modify.
func PercentilesOf(values []time.Duration) Percentiles {
	if len(values) == 0 {
		return Percentiles{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return Percentiles{
		Count: len(sorted),
		P50:   Percentile(sorted, 50),
		P90:   Percentile(sorted, 90),
		P99:   Percentile(sorted, 99),
		Max:   sorted[len(sorted)-1],
	}
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// sorted, which must be in ascending order; 0 for an empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// rank = ⌈p/100 · n⌉, computed in integers to avoid float rounding at exact ranks.
	n := len(sorted)
	permille := int(p * 10)
	rank := (permille*n + 999) / 1000
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

func (s Summary) String() string {
	if s.Count == 0 {
		return "no messages"
	}
	within := ""
	if s.WithinClock > 0 {
		within = fmt.Sprintf(" (%d less than the broker's %s clock before due)", s.WithinClock, BrokerClock)
	}
	return fmt.Sprintf("%d messages, %d early%s; lateness min %s, p50 %s, p99 %s, max %s",
		s.Count, s.Early, within, round(s.Min), round(s.P50), round(s.P99), round(s.Max))
}

// round keeps a lateness readable: 31.2ms rather than 31.204518ms.
func round(d time.Duration) time.Duration {
	if d > time.Millisecond || d < -time.Millisecond {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
