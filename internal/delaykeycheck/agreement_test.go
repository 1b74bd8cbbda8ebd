package delaykeycheck

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/delaykey"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// planner is the provider's own key format for f: what the delay queue set
// the provider declares routes by.
func planner(f delaykey.Format) topology.KeyFormat {
	return topology.KeyFormat{Levels: f.Levels, Radix: f.Radix, Resolution: f.Resolution, Layout: topology.Layout(f.Layout)}
}

// keys are message keys of every kind: ordinary, empty, several words,
// with wildcards and empty words, and at and beyond the longest a routing
// key of a large set leaves room for.
var keys = []string{"orders", "", "billing.eu", "a#", "*", ".x", "x..y", "x.",
	strings.Repeat("k", 190), strings.Repeat("k", 199), strings.Repeat("k", 200), strings.Repeat("k", 223), strings.Repeat("k", 254)}

// formats are valid formats of every layout and radix: the small sets whose
// every delay the tests try, and the largest each radix allows at 1ms and
// at 1s.
func formats(t *testing.T) []delaykey.Format {
	t.Helper()
	formats := []delaykey.Format{{Layout: delaykey.NServiceBus}, {Layout: delaykey.Celery},
		{Layout: delaykey.Celery, Levels: 28, Radix: 2, Resolution: time.Second}}
	for _, radix := range []int{0, 2, 4, 8, 16, 256} {
		for _, resolution := range []time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second} {
			for levels := 1; levels <= 32; levels++ {
				f := delaykey.Format{Levels: levels, Radix: radix, Resolution: resolution}
				if f.Check() != nil {
					break
				}
				if levels <= 3 || (levels < 32 && (delaykey.Format{Levels: levels + 1, Radix: radix, Resolution: resolution}).Check() != nil) || levels == 32 {
					formats = append(formats, f)
				}
			}
		}
	}
	if len(formats) < 40 {
		t.Fatalf("only %d formats: Check refuses sets the provider declares", len(formats))
	}
	return formats
}

// tick is f's resolution: a second in a library's layout.
func tick(f delaykey.Format) time.Duration {
	if f.Resolution == 0 {
		return time.Second
	}
	return f.Resolution
}

// delays of f: every tick and a millisecond either side while there are
// few, then the edges of each power of the radix, the longest, and beyond.
func delays(f delaykey.Format) []time.Duration {
	tick := tick(f)
	longest := f.MaxDelay()
	var delays []time.Duration
	for d := time.Duration(0); d <= longest && d <= 300*tick; d += tick {
		delays = append(delays, d, d+time.Millisecond, d-time.Millisecond, d+tick/2)
	}
	radix := int64(max(f.Radix, 2))
	for ticks := int64(1); ticks <= int64(longest/tick); ticks *= radix {
		power := time.Duration(ticks) * tick
		delays = append(delays, power-tick, power-time.Millisecond, power, power+time.Millisecond)
	}
	return append(delays, longest-time.Millisecond, longest, longest+time.Millisecond, longest+tick, -time.Nanosecond, -tick)
}

// TestRoutingKeyAgreesWithPlanner checks every key and delay of every
// format against the provider's encoder: the same routing key, or a
// refusal where it refuses; and that parsing the key gives back what the
// provider's decoder does.
func TestRoutingKeyAgreesWithPlanner(t *testing.T) {
	t.Parallel()
	for _, f := range formats(t) {
		t.Run(fmt.Sprintf("%+v", f), func(t *testing.T) {
			t.Parallel()
			checked := 0
			for _, key := range keys {
				for _, delay := range delays(f) {
					want, wantErr := planner(f).Encode(key, delay)
					got, err := f.RoutingKey(key, delay)
					if got != want || (err == nil) != (wantErr == nil) {
						t.Fatalf("RoutingKey(%q, %s) = %q, %v; the provider's encoder gives %q, %v", key, delay, got, err, want, wantErr)
					}
					if err != nil {
						continue
					}
					checked++
					gotKey, gotDelay, err := f.Parse(got)
					wantKey, wantDelay, wantErr := planner(f).Decode(got)
					if err != nil || wantErr != nil || gotKey != wantKey || gotDelay != wantDelay || gotKey != key {
						t.Fatalf("Parse(%q) = %q, %s, %v; the provider's decoder gives %q, %s, %v", got, gotKey, gotDelay, err, wantKey, wantDelay, wantErr)
					}
					if gotDelay <= delay-tick(f) || (f.Layout != delaykey.Celery && gotDelay < delay) {
						t.Fatalf("Parse(RoutingKey(%q, %s)) is %s: early", key, delay, gotDelay)
					}
				}
			}
			if checked < 20 {
				t.Fatalf("only %d routing keys written", checked)
			}
		})
	}
}

// TestCheckAgreesWithPlanner checks that Check accepts exactly the formats
// whose keys the provider's encoder writes, and MaxDelay is its longest.
func TestCheckAgreesWithPlanner(t *testing.T) {
	t.Parallel()
	accepted := 0
	for _, layout := range []delaykey.Layout{"", delaykey.Default, delaykey.NServiceBus, delaykey.Celery, "Celery", "bogus"} {
		for _, radix := range []int{-2, 0, 1, 2, 3, 4, 8, 10, 16, 32} {
			for _, resolution := range []time.Duration{-time.Second, 0, time.Microsecond, time.Millisecond, 1500 * time.Microsecond,
				100 * time.Millisecond, time.Second, time.Hour, 10 * 365 * 24 * time.Hour, 10*365*24*time.Hour + time.Millisecond} {
				for levels := -1; levels <= 33; levels++ {
					f := delaykey.Format{Levels: levels, Radix: radix, Resolution: resolution, Layout: layout}
					_, wantErr := planner(f).Encode("k", 0)
					err := f.Check()
					if (err == nil) != (wantErr == nil) {
						t.Fatalf("%+v: Check() = %v; the provider's encoder says %v", f, err, wantErr)
					}
					if err != nil {
						if !errors.Is(err, delaykey.ErrFormat) {
							t.Fatalf("%+v: Check() = %v, not ErrFormat", f, err)
						}
						continue
					}
					accepted++
					if got, want := f.MaxDelay(), planner(f).MaxDelay(); got != want {
						t.Fatalf("%+v: MaxDelay() = %s, the provider's is %s", f, got, want)
					}
				}
			}
		}
	}
	if accepted < 100 {
		t.Fatalf("Check accepted only %d formats", accepted)
	}
}

// TestCheckKeyAgreesWithPlanner checks every key of every format against
// the provider's own check.
func TestCheckKeyAgreesWithPlanner(t *testing.T) {
	t.Parallel()
	for _, f := range formats(t) {
		for _, key := range keys {
			err, wantErr := f.CheckKey(key), planner(f).CheckKey(key)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%+v: CheckKey(%q) = %v; the provider says %v", f, key, err, wantErr)
			}
			if err != nil && !errors.Is(err, delaykey.ErrKey) {
				t.Fatalf("%+v: CheckKey(%q) = %v, not ErrKey", f, key, err)
			}
		}
	}
}

// routingKeys are malformed and well-formed routing keys for every format.
var routingKeys = []string{"", ".", "0", "1", "orders", "orders.1", ".0.1", "orders.0.1", "orders.1.0.1", "orders.01.1",
	"orders.2.1", "orders.15.15", "orders.16.0", "orders.-1.0", "orders.+1.0", "orders.1. 1", "a.b.c.0.0.0",
	strings.Repeat("0.", 28) + "orders", strings.Repeat("1.", 28) + "orders", strings.Repeat("1.", 27) + "1", strings.Repeat("1.", 28),
	strings.Repeat("0.", 27) + "2.orders", strings.Repeat("1.", 29) + "x", strings.Repeat("k", 253) + ".0", strings.Repeat("k", 254) + ".0"}

// TestParseAgreesWithPlanner checks Parse against the provider's decoder on
// routing keys of every shape, for every format.
func TestParseAgreesWithPlanner(t *testing.T) {
	t.Parallel()
	for _, f := range formats(t) {
		for _, routingKey := range routingKeys {
			key, delay, err := f.Parse(routingKey)
			wantKey, wantDelay, wantErr := planner(f).Decode(routingKey)
			if key != wantKey || delay != wantDelay || (err == nil) != (wantErr == nil) {
				t.Fatalf("%+v: Parse(%q) = %q, %s, %v; the provider's decoder gives %q, %s, %v", f, routingKey, key, delay, err, wantKey, wantDelay, wantErr)
			}
			if err != nil && !errors.Is(err, delaykey.ErrRoutingKey) {
				t.Fatalf("%+v: Parse(%q) = %v, not ErrRoutingKey", f, routingKey, err)
			}
		}
	}
}

// FuzzRoutingKey checks, for any key and delay, that RoutingKey agrees with
// the provider's encoder in radix 16 and Celery's layout, and that Parse
// reverses it.
func FuzzRoutingKey(f *testing.F) {
	f.Add("orders", int64(37*time.Second))
	f.Add("", int64(0))
	f.Add("billing.eu", int64(255*time.Second+1))
	f.Add("x", int64(-1))
	f.Fuzz(func(t *testing.T, key string, delay int64) {
		for _, format := range []delaykey.Format{{Levels: 2, Radix: 16, Resolution: time.Second}, {Layout: delaykey.Celery}} {
			got, err := format.RoutingKey(key, time.Duration(delay))
			want, wantErr := planner(format).Encode(key, time.Duration(delay))
			if got != want || (err == nil) != (wantErr == nil) {
				t.Fatalf("%+v: RoutingKey(%q, %d) = %q, %v; the provider's encoder gives %q, %v", format, key, delay, got, err, want, wantErr)
			}
			if err != nil {
				continue
			}
			if gotKey, _, err := format.Parse(got); err != nil || gotKey != key {
				t.Fatalf("%+v: Parse(%q) = %q, %v; want the key %q", format, got, gotKey, err, key)
			}
		}
	})
}

// FuzzParse checks, for any routing key, that Parse agrees with the
// provider's decoder in radix 2 and NServiceBus's layout.
func FuzzParse(f *testing.F) {
	f.Add("orders.0.1.0.1")
	f.Add(strings.Repeat("0.", 28) + "Sales")
	f.Add(".0.1")
	f.Fuzz(func(t *testing.T, routingKey string) {
		for _, format := range []delaykey.Format{{Levels: 4, Resolution: time.Second}, {Layout: delaykey.NServiceBus}} {
			key, delay, err := format.Parse(routingKey)
			wantKey, wantDelay, wantErr := planner(format).Decode(routingKey)
			if key != wantKey || delay != wantDelay || (err == nil) != (wantErr == nil) {
				t.Fatalf("%+v: Parse(%q) = %q, %s, %v; the provider's decoder gives %q, %s, %v", format, routingKey, key, delay, err, wantKey, wantDelay, wantErr)
			}
		}
	})
}
