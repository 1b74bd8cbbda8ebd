package main

import (
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestDelayRoutingKey checks the snippet the publishing guide shows against
// the provider's own encoder, for every delay of small sets and the edges of large ones.
func TestDelayRoutingKey(t *testing.T) {
	t.Parallel()
	for _, c := range encoderCases() {
		want, err := topology.EncodeKey(c.key, c.delay, c.levels, c.resolution)
		if err != nil {
			t.Fatal(err)
		}
		if got := delayRoutingKey(c.key, c.delay, c.levels, c.resolution); got != want {
			t.Errorf("delayRoutingKey(%q, %s, %d, %s) = %q, want %q", c.key, c.delay, c.levels, c.resolution, got, want)
		}
	}
}

type encoderCase struct {
	key        string
	delay      time.Duration
	levels     int
	resolution time.Duration
}

func encoderCases() []encoderCase {
	var cases []encoderCase
	for _, key := range []string{"orders", "", "billing.eu"} {
		for delay := time.Duration(0); delay <= 1500*time.Millisecond; delay += 100 * time.Millisecond {
			cases = append(cases, encoderCase{key, delay, 4, 100 * time.Millisecond}, encoderCase{key, delay + time.Millisecond, 5, 250 * time.Millisecond})
		}
		for _, levels := range []int{1, 17, 29} {
			longest := topology.MaxDelayFor(levels, time.Second)
			for _, delay := range []time.Duration{0, time.Millisecond, time.Second, longest - time.Second + 1, longest} {
				cases = append(cases, encoderCase{key, delay, levels, time.Second})
			}
		}
	}
	return cases
}
