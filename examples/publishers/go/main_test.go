package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestDelayRoutingKey checks the snippet the publishing guide shows against
// the provider's own encoder, in every radix, for every delay of small sets
// and the edges of large ones.
func TestDelayRoutingKey(t *testing.T) {
	t.Parallel()
	for _, c := range encoderCases() {
		format := topology.KeyFormat{Levels: c.levels, Radix: c.radix, Resolution: c.resolution}
		want, err := format.Encode(c.key, c.delay)
		if err != nil {
			t.Fatal(err)
		}
		if got := delayRoutingKey(c.key, c.delay, c.levels, c.resolution, c.radix); got != want {
			t.Errorf("delayRoutingKey(%q, %s, %d, %s, %d) = %q, want %q", c.key, c.delay, c.levels, c.resolution, c.radix, got, want)
		}
	}
}

// TestDelayRoutingKeyRefuses checks that the snippet panics where the
// provider's encoder refuses: a radix no set has, a negative delay, and a
// delay one millisecond beyond the longest of a set.
func TestDelayRoutingKeyRefuses(t *testing.T) {
	t.Parallel()
	type refusal struct {
		delay  time.Duration
		levels int
		radix  int
		want   string
	}
	tests := map[string]refusal{
		"radix 3":  {time.Second, 4, 3, "radix 3 is not 2, 4, 8 or 16"},
		"radix 10": {time.Second, 4, 10, "radix 10 is not 2, 4, 8 or 16"},
		"radix 32": {time.Second, 4, 32, "radix 32 is not 2, 4, 8 or 16"},
		"negative": {-time.Millisecond, 4, 2, "delay -1ms does not fit 4 levels of 1s in radix 2"},
	}
	for _, radix := range topology.Radixes {
		for _, levels := range []int{1, 2, 3} {
			beyond := topology.KeyFormat{Levels: levels, Radix: radix, Resolution: time.Second}.MaxDelay() + time.Millisecond
			tests[fmt.Sprintf("radix %d, %d levels, 1ms beyond", radix, levels)] = refusal{beyond, levels, radix,
				fmt.Sprintf("delay %s does not fit %d levels of 1s in radix %d", beyond, levels, radix)}
		}
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			format := topology.KeyFormat{Levels: test.levels, Radix: test.radix, Resolution: time.Second}
			if key, err := format.Encode("orders", test.delay); err == nil {
				t.Fatalf("the provider's encoder takes radix %d, delay %s (%q): not a refusal", test.radix, test.delay, key)
			}
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), test.want) {
					t.Errorf("delayRoutingKey(%s, %d levels, radix %d) panicked with %v, want %q", test.delay, test.levels, test.radix, r, test.want)
				}
			}()
			key := delayRoutingKey("orders", test.delay, test.levels, time.Second, test.radix)
			t.Errorf("delayRoutingKey(%s, %d levels, radix %d) = %q, want a panic", test.delay, test.levels, test.radix, key)
		})
	}
}

type encoderCase struct {
	key        string
	delay      time.Duration
	levels     int
	radix      int
	resolution time.Duration
}

// encoderCases are, for each radix and key, every whole number of ticks of
// a small set and one millisecond over each, and the shortest and longest
// delays of the largest sets a radix allows at 1ms and at 1s.
func encoderCases() []encoderCase {
	var cases []encoderCase
	for _, key := range []string{"orders", "", "billing.eu"} {
		for _, radix := range topology.Radixes {
			small := map[int]int{2: 5, 4: 3, 8: 2, 16: 2}[radix] // 32, 64, 64 and 256 ticks
			format := topology.KeyFormat{Levels: small, Radix: radix, Resolution: 100 * time.Millisecond}
			for delay := time.Duration(0); delay <= format.MaxDelay(); delay += format.Resolution {
				cases = append(cases, encoderCase{key, delay, small, radix, format.Resolution})
				if delay < format.MaxDelay() {
					cases = append(cases, encoderCase{key, delay + time.Millisecond, small, radix, format.Resolution})
				}
			}
			for _, resolution := range []time.Duration{time.Millisecond, time.Second} {
				levels := largestLevels(radix, resolution)
				longest := topology.KeyFormat{Levels: levels, Radix: radix, Resolution: resolution}.MaxDelay()
				for _, delay := range []time.Duration{0, time.Millisecond, resolution, longest - resolution + 1, longest} {
					cases = append(cases, encoderCase{key, delay, levels, radix, resolution})
				}
			}
		}
	}
	return cases
}

// largestLevels is the most levels the provider's encoder takes in radix
// at resolution.
func largestLevels(radix int, resolution time.Duration) int {
	levels := 1
	for {
		if _, err := (topology.KeyFormat{Levels: levels + 1, Radix: radix, Resolution: resolution}).Encode("", 0); err != nil {
			return levels
		}
		levels++
	}
}
