package messaging

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(values ...int) []time.Duration {
		out := make([]time.Duration, len(values))
		for i, v := range values {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := map[string]struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		"empty":                       {nil, 50, 0},
		"one value":                   {ms(7), 99, 7 * time.Millisecond},
		"median of odd count":         {ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		"median of even count is low": {ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		"p99 of 100 is the 99th":      {ms(hundred...), 99, 99 * time.Millisecond},
		"p100 is the max":             {ms(hundred...), 100, 100 * time.Millisecond},
		"p99 of 10 is the max":        {ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		"tiny p is the min":           {ms(1, 2, 3), 0.1, 1 * time.Millisecond},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := Percentile(test.sorted, test.p); got != test.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", test.sorted, test.p, got, test.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	arrival := func(lateness time.Duration) Arrival { return Arrival{Lateness: lateness} }
	tests := map[string]struct {
		arrivals []Arrival
		want     Summary
	}{
		"none": {nil, Summary{}},
		"unsorted with one early": {
			[]Arrival{arrival(30 * time.Millisecond), arrival(-2 * time.Millisecond), arrival(5 * time.Millisecond)},
			Summary{Count: 3, Early: 1, Min: -2 * time.Millisecond, P50: 5 * time.Millisecond, P99: 30 * time.Millisecond, Max: 30 * time.Millisecond},
		},
		"less than the broker's clock before due is not early": {
			[]Arrival{arrival(-999 * time.Microsecond), arrival(-time.Millisecond), arrival(time.Millisecond)},
			Summary{Count: 3, Early: 1, WithinClock: 1, Min: -time.Millisecond, P50: -999 * time.Microsecond, P99: time.Millisecond, Max: time.Millisecond},
		},
		"zero lateness is on time": {
			[]Arrival{arrival(0)},
			Summary{Count: 1, Early: 0},
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(test.want, Summarize(test.arrivals)); diff != "" {
				t.Errorf("Summarize (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPercentilesOf(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * ms // descending: summarize must sort
	}
	tests := map[string]struct {
		values []time.Duration
		want   Percentiles
	}{
		"none":  {values: nil, want: Percentiles{}},
		"one":   {values: []time.Duration{7 * ms}, want: Percentiles{Count: 1, P50: 7 * ms, P90: 7 * ms, P99: 7 * ms, Max: 7 * ms}},
		"1…100": {values: hundred, want: Percentiles{Count: 100, P50: 50 * ms, P90: 90 * ms, P99: 99 * ms, Max: 100 * ms}},
		"ten":   {values: []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, want: Percentiles{Count: 10, P50: 5, P90: 9, P99: 10, Max: 10}},
		"early": {values: []time.Duration{-2 * ms, 3 * ms}, want: Percentiles{Count: 2, P50: -2 * ms, P90: 3 * ms, P99: 3 * ms, Max: 3 * ms}},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			before := fmt.Sprint(test.values)
			if diff := cmp.Diff(test.want, PercentilesOf(test.values)); diff != "" {
				t.Errorf("summarize() mismatch (-want +got):\n%s", diff)
			}
			if fmt.Sprint(test.values) != before {
				t.Error("summarize reordered its argument")
			}
		})
	}
}

func TestSummaryString(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		summary Summary
		want    string
	}{
		"none": {Summary{}, "no messages"},
		"rounded to 0.1ms": {
			Summary{Count: 3, Early: 1, Min: -1234567, P50: 31204518, P99: 999999, Max: 2 * time.Second},
			"3 messages, 1 early; lateness min -1.2ms, p50 31.2ms, p99 1ms, max 2s",
		},
		"within the clock": {
			Summary{Count: 2, WithinClock: 1, Min: -370 * time.Microsecond, P50: -370 * time.Microsecond, P99: 3 * time.Millisecond, Max: 3 * time.Millisecond},
			"2 messages, 0 early (1 less than the broker's 1ms clock before due); lateness min -370µs, p50 -370µs, p99 3ms, max 3ms",
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(test.want, test.summary.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
		})
	}
}
