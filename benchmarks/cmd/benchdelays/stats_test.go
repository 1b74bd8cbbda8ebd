package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const ms = time.Millisecond

// arrival builds the arrival of a message that asked for delay and came
// lateness after it was due, with the routing key a set of levels at 100ms
// gives it.
func arrival(t *testing.T, id string, start time.Time, delay, lateness time.Duration, levels int) messaging.Arrival {
	t.Helper()
	key, err := topology.EncodeKey(routeKey, delay, levels, 100*ms)
	if err != nil {
		t.Fatal(err)
	}
	m := messaging.Message{ID: id, PublishedAt: start, Delay: delay}
	return messaging.Arrival{Message: m, RoutingKey: key, ArrivedAt: m.Due().Add(lateness), Lateness: lateness}
}

func TestHopsOf(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	for ticks := range 16 {
		a := arrival(t, "m", start, time.Duration(ticks)*100*ms, ms, 4)
		hops, err := hopsOf(a, binary4)
		want := strings.Count(fmt.Sprintf("%b", ticks), "1")
		if err != nil || hops != want {
			t.Errorf("hopsOf(%d ticks) = %d, %v; want %d", ticks, hops, err, want)
		}
	}
	// A delay between ticks is rounded up, as the publisher's key says.
	a := arrival(t, "m", start, 250*ms, ms, 4) // 3 ticks: 0.0.1.1
	if hops, err := hopsOf(a, binary4); err != nil || hops != 2 {
		t.Errorf("hopsOf(250ms at 100ms) = %d, %v; want 2 hops", hops, err)
	}
	wrongDelay := a
	wrongDelay.RoutingKey = "bench.0.1.1.1"
	if _, err := hopsOf(wrongDelay, binary4); err == nil || !strings.Contains(err.Error(), "700ms") {
		t.Errorf("hopsOf with another delay's key = %v; want an error saying the key's 700ms", err)
	}
	malformed := a
	malformed.RoutingKey = "bench.x"
	if _, err := hopsOf(malformed, binary4); err == nil {
		t.Error("hopsOf with a malformed key succeeded")
	}
}

// binary4 is the key format of a radix-2 set of 4 levels at 100ms.
var binary4 = topology.KeyFormat{Levels: 4, Resolution: 100 * ms}

// TestHopsOfRadix16 checks every delay of the benchmark's range in radix
// 16 (2 digits): the hops are the nonzero hex digits, and a key written
// in binary for the same delay is refused.
func TestHopsOfRadix16(t *testing.T) {
	t.Parallel()
	hex := topology.KeyFormat{Levels: 2, Radix: 16, Resolution: 100 * ms}
	start := time.Unix(1_700_000_000, 0)
	for ticks := range 256 {
		m := messaging.Message{ID: "m", PublishedAt: start, Delay: time.Duration(ticks) * 100 * ms}
		key, err := hex.Encode(routeKey, m.Delay)
		if err != nil {
			t.Fatal(err)
		}
		hops, err := hopsOf(messaging.Arrival{Message: m, RoutingKey: key, ArrivedAt: m.Due()}, hex)
		want := strings.Count(fmt.Sprintf("%02x", ticks), "0")
		if err != nil || hops != 2-want {
			t.Errorf("hopsOf(%d ticks, key %q) = %d, %v; want %d", ticks, key, hops, err, 2-want)
		}
	}
	binaryKey, err := topology.EncodeKey(routeKey, 300*ms, 8, 100*ms)
	if err != nil {
		t.Fatal(err)
	}
	m := messaging.Message{ID: "m", PublishedAt: start, Delay: 300 * ms}
	if _, err := hopsOf(messaging.Arrival{Message: m, RoutingKey: binaryKey}, hex); err == nil {
		t.Errorf("hopsOf in radix 16 took the binary key %q", binaryKey)
	}
}

func TestMeasure(t *testing.T) {
	t.Parallel()
	const levels, resolution = 2, 100 * ms // delays 0 … 300ms
	start := time.Unix(1_700_000_000, 0)
	acked := func(id string, delay time.Duration) messaging.Confirmation {
		m := messaging.Message{ID: id, PublishedAt: start, Delay: delay}
		return messaging.Confirmation{Message: m, Acked: true, ConfirmedAt: start.Add(4 * ms)}
	}
	nacked := messaging.Confirmation{Message: messaging.Message{ID: "n", PublishedAt: start}, Err: fmt.Errorf("nack")}
	on := func(id string, delay, lateness time.Duration) messaging.Arrival {
		return arrival(t, id, start, delay, lateness, levels)
	}
	misrouted := on("x", 100*ms, 5*ms)
	misrouted.RoutingKey = "bench.1.1"
	o := observations{
		format: topology.KeyFormat{Levels: levels, Resolution: resolution},
		confirmations: []messaging.Confirmation{
			acked("a", 0), acked("b", 100*ms), acked("c", 300*ms), acked("d", 200*ms),
			acked("early", 100*ms), acked("never", 300*ms), acked("overdue", 0), acked("x", 100*ms), nacked,
		},
		arrivals: []messaging.Arrival{
			on("a", 0, 2*ms), on("b", 100*ms, 4*ms), on("c", 300*ms, 8*ms), on("d", 200*ms, 6*ms),
			on("early", 100*ms, -time.Millisecond), on("overdue", 0, 11*time.Second), misrouted, on("stray", 0, ms),
		},
		duplicates:   []messaging.Arrival{on("b", 100*ms, 9*ms)},
		foreign:      3,
		unroutable:   2,
		start:        start,
		duration:     2 * time.Second,
		longestDelay: 100 * ms, // shorter than the set's, to test the window's edges
		lossWindow:   10 * time.Second,
	}
	got := measure(o)
	want := measurement{
		Acked: 8, Nacked: 1, Delivered: 8, Early: 1, MostEarly: ms, Lost: 2, Overdue: 1, Duplicates: 1, Unroutable: 2, Foreign: 3,
		Misrouted: 1, Unconfirmed: 1,
		FirstMisroute: `message x asked for 100ms and arrived with routing key "bench.1.1", which says 300ms`,
		Lateness:      messaging.PercentilesOf([]time.Duration{2 * ms, 4 * ms, 8 * ms, 6 * ms, -ms, 11 * time.Second, 5 * ms, ms}),
		ByHops: []hopStats{
			{Hops: 0, Percentiles: messaging.PercentilesOf([]time.Duration{2 * ms, 11 * time.Second, ms})},
			{Hops: 1, Percentiles: messaging.PercentilesOf([]time.Duration{4 * ms, 6 * ms, -ms})},
			{Hops: 2, Percentiles: messaging.PercentilesOf([]time.Duration{8 * ms})},
		},
		Confirm: messaging.PercentilesOf([]time.Duration{4 * ms, 4 * ms, 4 * ms, 4 * ms, 4 * ms, 4 * ms, 4 * ms, 4 * ms}),
		// Arrivals from 100ms to 2s after the start: b (104ms), c (308ms),
		// d (206ms) and x (105ms); not "early" (99ms) nor "overdue" (11s).
		DeliveryRate: 4 / 1.9,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(hopStats{})); diff != "" {
		t.Errorf("measure() mismatch (-want +got):\n%s", diff)
	}
}

func TestMeasureShortRunHasNoSteadyWindow(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_700_000_000, 0)
	got := measure(observations{format: topology.KeyFormat{Levels: 2, Resolution: 100 * ms}, start: start, duration: time.Second, longestDelay: 300 * ms,
		arrivals: []messaging.Arrival{arrival(t, "a", start, 300*ms, ms, 2)}})
	if got.DeliveryRate != 0 {
		t.Errorf("DeliveryRate over a 0.7s window = %g, want 0 (no figure)", got.DeliveryRate)
	}
}
