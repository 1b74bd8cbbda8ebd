package topology

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestEncodeKey(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		key        string
		delay      time.Duration
		levels     int
		resolution time.Duration
		want       string
	}{
		"design example":                   {"orders", 5 * time.Second, 4, time.Second, "orders.0.1.0.1"},
		"empty key is just the digits":     {"", 5 * time.Second, 4, time.Second, "0.1.0.1"},
		"no delay":                         {"orders.eu", 0, 4, time.Second, "orders.eu.0.0.0.0"},
		"longest delay":                    {"k", 15 * time.Second, 4, time.Second, "k.1.1.1.1"},
		"a nanosecond rounds up to a tick": {"k", 1, 4, time.Second, "k.0.0.0.1"},
		"just over a tick rounds up":       {"k", time.Second + 1, 4, time.Second, "k.0.0.1.0"},
		"rounds up to the longest delay":   {"k", 14*time.Second + 500*time.Millisecond, 4, time.Second, "k.1.1.1.1"},
		"one level":                        {"", time.Second, 1, time.Second, "1"},
		"digit-like key words":             {"a.1.0", 2 * time.Millisecond, 2, time.Millisecond, "a.1.0.1.0"},
		"key taken literally":              {"a.*.#", time.Millisecond, 1, time.Millisecond, "a.*.#.1"},
		"32 levels":                        {"", MaxDelayFor(32, time.Millisecond), 32, time.Millisecond, strings.Repeat("1.", 31) + "1"},
		"longest key for 4 levels":         {strings.Repeat("k", 247), 0, 4, time.Second, strings.Repeat("k", 247) + ".0.0.0.0"},
		"longest key for 32 levels":        {strings.Repeat("k", 191), 0, 32, time.Millisecond, strings.Repeat("k", 191) + strings.Repeat(".0", 32)},
		"ten-year resolution":              {"", 2, 1, time.Duration(MaxTTL) * time.Millisecond, "1"},
		"longest delay at 1s":              {"", MaxDelayFor(29, time.Second), 29, time.Second, strings.Repeat("1.", 28) + "1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := EncodeKey(tc.key, tc.delay, tc.levels, tc.resolution)
			if err != nil || got != tc.want {
				t.Fatalf("EncodeKey() = %q, %v, want %q", got, err, tc.want)
			}
			key, delay, err := DecodeKey(got, tc.levels, tc.resolution)
			if err != nil || key != tc.key || delay < tc.delay || delay-tc.delay >= tc.resolution {
				t.Fatalf("DecodeKey(%q) = %q, %s, %v; want %q and %s rounded up to %s", got, key, delay, err, tc.key, tc.delay, tc.resolution)
			}
		})
	}
}

// keyWantError is the field and a fragment of the message of an expected error.
type keyWantError struct {
	field, fragment string
}

func keyCheckError(t *testing.T, err error, want keyWantError) {
	t.Helper()
	var fieldErr *FieldError
	if !errors.As(err, &fieldErr) {
		t.Fatalf("error %v (%T), want a *FieldError", err, err)
	}
	if fieldErr.Field != want.field || fieldErr.Route != -1 || !strings.Contains(fieldErr.Message, want.fragment) {
		t.Fatalf("error %q (route %d), want field %q, route -1 and message containing %q", err, fieldErr.Route, want.field, want.fragment)
	}
}

func TestEncodeKeyRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		key        string
		delay      time.Duration
		levels     int
		resolution time.Duration
		want       keyWantError
	}{
		"negative delay":                   {"k", -1, 4, time.Second, keyWantError{"delay", "must not be negative, got -1ns"}},
		"delay past the longest":           {"k", 15*time.Second + 1, 4, time.Second, keyWantError{"delay", "15.000000001s is longer than 15s, the longest delay of 4 levels at resolution 1s"}},
		"largest Duration":                 {"k", math.MaxInt64, 32, time.Millisecond, keyWantError{"delay", "is longer than 1193h2m47.295s"}},
		"key too long":                     {strings.Repeat("k", 248), 0, 4, time.Second, keyWantError{"key", "must be at most 247 bytes with 4 levels so that the routing key with its 4 delay digits fits AMQP's 255 bytes; got 248"}},
		"no levels":                        {"k", 0, 0, time.Second, keyWantError{"levels", "must be between 1 and 32, got 0"}},
		"too many levels":                  {"k", 0, 33, time.Millisecond, keyWantError{"levels", "must be between 1 and 32, got 33"}},
		"levels beyond the TTL limit":      {"k", 0, 30, time.Second, keyWantError{"levels", "at most 29 levels fit"}},
		"zero resolution":                  {"k", 0, 4, 0, keyWantError{"resolution", "must be at least 1ms, got 0s"}},
		"resolution not whole ms":          {"k", 0, 4, 2500 * time.Microsecond, keyWantError{"resolution", "whole number of milliseconds"}},
		"resolution beyond the TTL limit":  {"k", 0, 1, time.Duration(math.MaxInt64).Truncate(time.Millisecond), keyWantError{"resolution", "must be at most"}},
		"levels checked before the delay":  {"k", -1, 0, time.Second, keyWantError{"levels", "between 1 and 32"}},
		"delay checked before the key":     {strings.Repeat("k", 300), -1, 4, time.Second, keyWantError{"delay", "negative"}},
		"resolution checked before levels": {"k", 0, 99, -1, keyWantError{"resolution", "at least 1ms"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := EncodeKey(tc.key, tc.delay, tc.levels, tc.resolution)
			if got != "" {
				t.Errorf("EncodeKey() returned %q with its error", got)
			}
			keyCheckError(t, err, tc.want)
		})
	}
}

func TestDecodeKey(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		routingKey string
		levels     int
		resolution time.Duration
		wantKey    string
		wantDelay  time.Duration
	}{
		"key and digits":           {"orders.eu.0.1.0.1", 4, time.Second, "orders.eu", 5 * time.Second},
		"just digits":              {"1.1", 2, time.Minute, "", 3 * time.Minute},
		"digit-like key words":     {"a.1.0.0.1", 2, time.Millisecond, "a.1.0", time.Millisecond},
		"an empty word as key":     {".0.1", 2, time.Second, "", time.Second},
		"a key ending in a dot":    {"a..0.1", 2, time.Second, "a.", time.Second},
		"one level":                {"k.1", 1, time.Millisecond, "k", time.Millisecond},
		"32 levels, longest delay": {strings.Repeat("1.", 31) + "1", 32, time.Millisecond, "", MaxDelayFor(32, time.Millisecond)},
		"a 255-byte routing key":   {strings.Repeat("k", 253) + ".1", 1, time.Second, strings.Repeat("k", 253), time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			key, delay, err := DecodeKey(tc.routingKey, tc.levels, tc.resolution)
			if err != nil || key != tc.wantKey || delay != tc.wantDelay {
				t.Fatalf("DecodeKey() = %q, %s, %v, want %q, %s", key, delay, err, tc.wantKey, tc.wantDelay)
			}
		})
	}
}

func TestDecodeKeyRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		routingKey string
		levels     int
		resolution time.Duration
		want       keyWantError
	}{
		"too few words":                  {"0.1", 3, time.Second, keyWantError{"routing_key", "has 2 words, fewer than the 3 delay digits of 3 levels"}},
		"one word for two levels":        {"1", 2, time.Second, keyWantError{"routing_key", "has 1 words, fewer than the 2 delay digits"}},
		"key but too few digits":         {"orders.1.0", 3, time.Second, keyWantError{"routing_key", "word \"orders\", digit 3 from the end, must be \"0\" or \"1\": the last 3 words are the delay in binary"}},
		"non-digit last word":            {"orders.0.1.2", 3, time.Second, keyWantError{"routing_key", "word \"2\", digit 1 from the end"}},
		"padded digit":                   {"orders.01.1", 2, time.Second, keyWantError{"routing_key", "word \"01\", digit 2 from the end"}},
		"empty digit word":               {"orders..1", 2, time.Second, keyWantError{"routing_key", "word \"\", digit 2 from the end"}},
		"trailing dot":                   {"orders.1.", 2, time.Second, keyWantError{"routing_key", "word \"\", digit 1 from the end"}},
		"empty routing key":              {"", 1, time.Second, keyWantError{"routing_key", "word \"\", digit 1 from the end"}},
		"longer than AMQP allows":        {strings.Repeat("k", 254) + ".1", 1, time.Second, keyWantError{"routing_key", "must be at most 255 bytes, got 256"}},
		"no levels":                      {"1", 0, time.Second, keyWantError{"levels", "between 1 and 32"}},
		"levels beyond the TTL limit":    {"1", 32, time.Second, keyWantError{"levels", "at most 29 levels fit"}},
		"resolution under a millisecond": {"1", 1, time.Microsecond, keyWantError{"resolution", "at least 1ms"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			key, delay, err := DecodeKey(tc.routingKey, tc.levels, tc.resolution)
			if key != "" || delay != 0 {
				t.Errorf("DecodeKey() returned %q, %s with its error", key, delay)
			}
			keyCheckError(t, err, tc.want)
		})
	}
}

func TestEncodeDecodeEveryDelay(t *testing.T) {
	t.Parallel()
	// Every tick count of small sets, at and just after each tick: the digits
	// are the binary number, decoding gives the tick rounded up.
	for levels := 1; levels <= 8; levels++ {
		for ticks := range int64(1) << levels {
			for _, delay := range []time.Duration{time.Duration(ticks) * time.Second, time.Duration(ticks)*time.Second - time.Nanosecond} {
				if delay < 0 {
					continue
				}
				routingKey, err := EncodeKey("k.1", delay, levels, time.Second)
				if err != nil {
					t.Fatal(err)
				}
				var want strings.Builder
				want.WriteString("k.1")
				for bit := levels - 1; bit >= 0; bit-- {
					want.WriteString("." + string(rune('0'+ticks>>bit&1)))
				}
				if routingKey != want.String() {
					t.Fatalf("EncodeKey(%s, %d levels) = %q, want %q", delay, levels, routingKey, want.String())
				}
				key, decoded, err := DecodeKey(routingKey, levels, time.Second)
				if err != nil || key != "k.1" || decoded != time.Duration(ticks)*time.Second {
					t.Fatalf("DecodeKey(%q) = %q, %s, %v", routingKey, key, decoded, err)
				}
			}
		}
	}
}

func FuzzEncodeDecodeKey(f *testing.F) {
	// key, delay in ns, levels, resolution in ns.
	f.Add("orders", int64(5*time.Second), 4, int64(time.Second))           // the design's example
	f.Add("", int64(0), 1, int64(time.Millisecond))                        // empty key, no delay: just "0"
	f.Add("a.1.0", int64(3*time.Millisecond), 2, int64(time.Millisecond))  // key words that look like digits
	f.Add("k", int64(1), 4, int64(time.Second))                            // a nanosecond rounds up to a whole tick
	f.Add("k", int64(15*time.Second+1), 4, int64(time.Second))             // just past the longest delay: refused
	f.Add("k", int64(-1), 4, int64(time.Second))                           // negative delay: refused
	f.Add(strings.Repeat("k", 247), int64(0), 4, int64(time.Second))       // longest key for 4 levels
	f.Add(strings.Repeat("k", 248), int64(0), 4, int64(time.Second))       // one byte too long: refused
	f.Add("", int64(math.MaxInt64), 32, int64(time.Millisecond))           // largest Duration with 32 levels: refused
	f.Add("", int64(MaxDelayFor(29, time.Second)), 29, int64(time.Second)) // the longest delay of any set at 1s
	f.Add("x", int64(time.Hour), 29, int64(time.Second))                   // the most levels at 1s
	f.Add("x", int64(time.Hour), 30, int64(time.Second))                   // top TTL over ten years: refused
	f.Add("x", int64(time.Second), 3, int64(1500*time.Microsecond))        // resolution not whole ms: refused
	f.Add("x", int64(time.Second), 3, int64(0))                            // no resolution: refused
	f.Add("x", int64(2), 1, MaxTTL*int64(time.Millisecond))                // longest resolution
	f.Add("a..b.", int64(time.Second), 2, int64(time.Second))              // empty words in the key
	f.Add(".", int64(time.Second), 2, int64(time.Second))                  // a key that is one dot
	f.Add("\xff\x00", int64(time.Second), 2, int64(time.Second))           // bytes that are not text
	f.Fuzz(func(t *testing.T, key string, delayNanos int64, levels int, resolutionNanos int64) {
		delay, resolution := time.Duration(delayNanos), time.Duration(resolutionNanos)
		routingKey, err := EncodeKey(key, delay, levels, resolution)
		if err != nil {
			var fieldErr *FieldError
			if !errors.As(err, &fieldErr) || routingKey != "" {
				t.Fatalf("EncodeKey() = %q, %v (%T), want only a *FieldError", routingKey, err, err)
			}
			// DecodeKey must not panic on arbitrary input either, and what it
			// accepts must encode back to the same routing key.
			fuzzCheckDecodeReencodes(t, key, levels, resolution)
			return
		}
		if len(routingKey) > MaxNameLength {
			t.Fatalf("EncodeKey() made a routing key of %d bytes", len(routingKey))
		}
		gotKey, gotDelay, err := DecodeKey(routingKey, levels, resolution)
		if err != nil {
			t.Fatalf("DecodeKey(EncodeKey()) = %v", err)
		}
		if gotKey != key {
			t.Fatalf("key %q came back as %q", key, gotKey)
		}
		// Rounded up to a whole tick: never early, less than one tick late.
		if gotDelay < delay || gotDelay-delay >= resolution || gotDelay%resolution != 0 {
			t.Fatalf("delay %s came back as %s at resolution %s", delay, gotDelay, resolution)
		}
		fuzzCheckDecodeReencodes(t, routingKey, levels, resolution)
	})
}

// fuzzCheckDecodeReencodes decodes routingKey and, when it is accepted,
// checks that encoding the result gives the routing key back: the only
// other spelling DecodeKey accepts is an empty word before the digits.
func fuzzCheckDecodeReencodes(t *testing.T, routingKey string, levels int, resolution time.Duration) {
	t.Helper()
	key, delay, err := DecodeKey(routingKey, levels, resolution)
	if err != nil {
		var fieldErr *FieldError
		if !errors.As(err, &fieldErr) || key != "" || delay != 0 {
			t.Fatalf("DecodeKey(%q) = %q, %s, %v (%T), want only a *FieldError", routingKey, key, delay, err, err)
		}
		return
	}
	again, err := EncodeKey(key, delay, levels, resolution)
	if err != nil {
		t.Fatalf("EncodeKey(DecodeKey(%q)) = %v", routingKey, err)
	}
	if again != routingKey && "."+again != routingKey {
		t.Fatalf("DecodeKey(%q) = %q, %s, which encodes to %q", routingKey, key, delay, again)
	}
}
