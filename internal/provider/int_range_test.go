package provider

import (
	"math"
	"testing"
)

func TestIntOf(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		v       int64
		want    int
		ok      bool
		clamped int
	}{
		"zero":                  {v: 0, want: 0, ok: true, clamped: 0},
		"largest int32":         {v: math.MaxInt32, want: math.MaxInt32, ok: true, clamped: math.MaxInt32},
		"smallest int32":        {v: math.MinInt32, want: math.MinInt32, ok: true, clamped: math.MinInt32},
		"2^32 + 2, 2 on 32 bit": {v: 1<<32 + 2, ok: false, clamped: math.MaxInt32},
		"one past int32":        {v: math.MaxInt32 + 1, ok: false, clamped: math.MaxInt32},
		"one below int32":       {v: math.MinInt32 - 1, ok: false, clamped: math.MinInt32},
		"largest int64":         {v: math.MaxInt64, ok: false, clamped: math.MaxInt32},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := intOf(tc.v)
			if got != tc.want || ok != tc.ok {
				t.Errorf("intOf(%d) = %d, %v; want %d, %v", tc.v, got, ok, tc.want, tc.ok)
			}
			if got := clampedIntOf(tc.v); got != tc.clamped {
				t.Errorf("clampedIntOf(%d) = %d, want %d", tc.v, got, tc.clamped)
			}
		})
	}
}
