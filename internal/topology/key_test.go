package topology

import (
	"errors"
	"math"
	"strconv"
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

func TestKeyFormatRadix(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		key    string
		delay  time.Duration
		format KeyFormat
		want   string
	}{
		"radix 4":                        {"orders", 27 * time.Second, KeyFormat{Levels: 3, Radix: 4, Resolution: time.Second}, "orders.1.2.3"},
		"radix 8":                        {"", 64 * time.Millisecond, KeyFormat{Levels: 3, Radix: 8, Resolution: time.Millisecond}, "1.0.0"},
		"radix 16, two-byte digits":      {"k", 255 * time.Second, KeyFormat{Levels: 2, Radix: 16, Resolution: time.Second}, "k.15.15"},
		"radix 16, digit ten":            {"k", 170 * time.Second, KeyFormat{Levels: 2, Radix: 16, Resolution: time.Second}, "k.10.10"},
		"radix 16 rounds up":             {"k", 16*time.Second + 1, KeyFormat{Levels: 3, Radix: 16, Resolution: time.Second}, "k.0.1.1"},
		"zero radix is binary":           {"k", 5 * time.Second, KeyFormat{Levels: 4, Resolution: time.Second}, "k.0.1.0.1"},
		"explicit radix 2":               {"k", 5 * time.Second, KeyFormat{Levels: 4, Radix: 2, Resolution: time.Second}, "k.0.1.0.1"},
		"digit-like key words":           {"a.15.3", 3 * time.Millisecond, KeyFormat{Levels: 1, Radix: 4, Resolution: time.Millisecond}, "a.15.3.3"},
		"longest key, radix 16":          {strings.Repeat("k", 246), 0, KeyFormat{Levels: 3, Radix: 16, Resolution: time.Second}, strings.Repeat("k", 246) + ".0.0.0"},
		"most levels at 1ms, radix 16":   {"", MaxDelayFor(1, time.Millisecond), KeyFormat{Levels: 9, Radix: 16, Resolution: time.Millisecond}, "0.0.0.0.0.0.0.0.1"},
		"longest delay at 1ms, radix 16": {"", KeyFormat{Levels: 9, Radix: 16, Resolution: time.Millisecond}.MaxDelay(), KeyFormat{Levels: 9, Radix: 16, Resolution: time.Millisecond}, strings.Repeat("15.", 8) + "15"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.format.Encode(tc.key, tc.delay)
			if err != nil || got != tc.want {
				t.Fatalf("Encode() = %q, %v, want %q", got, err, tc.want)
			}
			key, delay, err := tc.format.Decode(got)
			if err != nil || key != tc.key || delay < tc.delay || delay-tc.delay >= tc.format.Resolution {
				t.Fatalf("Decode(%q) = %q, %s, %v; want %q and %s rounded up", got, key, delay, err, tc.key, tc.delay)
			}
			if err := tc.format.CheckKey(tc.key); err != nil {
				t.Fatalf("CheckKey(%q) = %v for a key Encode accepts", tc.key, err)
			}
		})
	}
}

func TestKeyFormatRadixRefuses(t *testing.T) {
	t.Parallel()
	r16 := KeyFormat{Levels: 3, Radix: 16, Resolution: time.Second}
	tests := map[string]struct {
		format     KeyFormat
		key        string
		delay      time.Duration
		routingKey string
		want       keyWantError
	}{
		"radix 3":                    {KeyFormat{Levels: 2, Radix: 3, Resolution: time.Second}, "k", 0, "k.0.0", keyWantError{"radix", "must be one of 2, 4, 8, 16, 256, got 3"}},
		"negative radix":             {KeyFormat{Levels: 2, Radix: -2, Resolution: time.Second}, "k", 0, "k.0.0", keyWantError{"radix", "must be one of 2, 4, 8, 16, 256, got -2"}},
		"radix checked first":        {KeyFormat{Levels: 0, Radix: 32, Resolution: 0}, "k", 0, "k", keyWantError{"radix", "got 32"}},
		"levels beyond the TTL":      {KeyFormat{Levels: 10, Radix: 16, Resolution: time.Millisecond}, "k", 0, "k.0", keyWantError{"levels", "10 levels of radix 16 at resolution 1ms give the top queue a TTL of 1ms·15·16^9, above the broker's largest message TTL 315360000000ms (10 years); at most 9 levels fit at this resolution and radix"}},
		"levels beyond the TTL, r=4": {KeyFormat{Levels: 20, Radix: 4, Resolution: time.Millisecond}, "k", 0, "k.0", keyWantError{"levels", "at most 19 levels fit"}},
		"levels beyond the TTL, r=8": {KeyFormat{Levels: 13, Radix: 8, Resolution: time.Millisecond}, "k", 0, "k.0", keyWantError{"levels", "at most 12 levels fit"}},
		"too many levels":            {KeyFormat{Levels: 33, Radix: 16, Resolution: time.Millisecond}, "k", 0, "k.0", keyWantError{"levels", "must be between 1 and 32, got 33"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.format.Encode(tc.key, tc.delay)
			if got != "" {
				t.Errorf("Encode() returned %q with its error", got)
			}
			keyCheckError(t, err, tc.want)
			key, delay, err := tc.format.Decode(tc.routingKey)
			if key != "" || delay != 0 {
				t.Errorf("Decode() returned %q, %s with its error", key, delay)
			}
			keyCheckError(t, err, tc.want)
		})
	}
	encodes := map[string]struct {
		key   string
		delay time.Duration
		want  keyWantError
	}{
		"delay past the longest": {"k", 4096 * time.Second, keyWantError{"delay", "1h8m16s is longer than 1h8m15s, the longest delay of 3 levels at resolution 1s in radix 16"}},
		"key too long":           {strings.Repeat("k", 247), 0, keyWantError{"key", "must be at most 246 bytes with 3 levels in radix 16 so that the routing key with its 3 delay digits fits AMQP's 255 bytes; got 247"}},
	}
	for name, tc := range encodes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := r16.Encode(tc.key, tc.delay)
			if got != "" {
				t.Errorf("Encode() returned %q with its error", got)
			}
			keyCheckError(t, err, tc.want)
		})
	}
	decodes := map[string]struct {
		routingKey string
		want       keyWantError
	}{
		"digit 16":       {"k.0.16.0", keyWantError{"routing_key", `word "16", digit 2 from the end, must be one of "0" … "15": the last 3 words are the delay in radix 16, each digit in decimal`}},
		"padded digit":   {"k.0.0.05", keyWantError{"routing_key", `word "05", digit 1 from the end`}},
		"hex letter":     {"k.a.0.0", keyWantError{"routing_key", `word "a", digit 3 from the end`}},
		"too few digits": {"15.15", keyWantError{"routing_key", "has 2 words, fewer than the 3 delay digits of 3 levels"}},
	}
	for name, tc := range decodes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			key, delay, err := r16.Decode(tc.routingKey)
			if key != "" || delay != 0 {
				t.Errorf("Decode() returned %q, %s with its error", key, delay)
			}
			keyCheckError(t, err, tc.want)
		})
	}
	// A digit of radix 16 is no digit of radix 4.
	_, _, err := KeyFormat{Levels: 2, Radix: 4, Resolution: time.Second}.Decode("k.4.0")
	keyCheckError(t, err, keyWantError{"routing_key", `word "4", digit 2 from the end, must be one of "0" … "3": the last 2 words are the delay in radix 4`})
}

func TestKeyFormatCheckKey(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		format KeyFormat
		key    string
		want   []string // messages, in order
	}{
		"fits":                      {KeyFormat{Levels: 4, Radix: 16}, strings.Repeat("k", 243), nil},
		"one byte too long":         {KeyFormat{Levels: 4, Radix: 16}, strings.Repeat("k", 244), []string{"must be at most 243 bytes with 4 levels in radix 16 so that the routing key with its 4 delay digits fits AMQP's 255 bytes; got 244"}},
		"radix 2 counts one byte":   {KeyFormat{Levels: 4}, strings.Repeat("k", 247), nil},
		"radix 2 too long":          {KeyFormat{Levels: 4}, strings.Repeat("k", 248), []string{"must be at most 247 bytes with 4 levels so that"}},
		"radix 8 counts one byte":   {KeyFormat{Levels: 4, Radix: 8}, strings.Repeat("k", 247), nil},
		"wildcard and too long":     {KeyFormat{Levels: 4, Radix: 16}, strings.Repeat("#", 244), []string{"must not contain '#' or '*'", "must be at most 243 bytes"}},
		"no levels: words only":     {KeyFormat{Radix: 16}, strings.Repeat("k", 300), nil},
		"bad radix: words only":     {KeyFormat{Levels: 4, Radix: 5}, "a..b", []string{"must not start or end with '.' nor contain an empty word"}},
		"the empty key always fits": {KeyFormat{Levels: 32}, "", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := tc.format.CheckKey(tc.key)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckKey() = %v, want nil", err)
				}
				return
			}
			var errs ValidationErrors
			if !errors.As(err, &errs) || len(errs) != len(tc.want) {
				t.Fatalf("CheckKey() = %v, want %d errors", err, len(tc.want))
			}
			for i, e := range errs {
				if e.Field != "key" || e.Route != -1 || !strings.Contains(e.Message, tc.want[i]) {
					t.Errorf("error %d = %q, want field key and a message containing %q", i, e, tc.want[i])
				}
			}
		})
	}
}

func TestKeyFormatEveryDelay(t *testing.T) {
	t.Parallel()
	// Every tick count of small sets of each radix: the digits are the
	// number in that base, most significant first, and decode back.
	for _, radix := range Radixes {
		for levels := 1; levels <= simLevels[radix]-2; levels++ {
			format := KeyFormat{Levels: levels, Radix: radix, Resolution: time.Second}
			for ticks := range int64(maxTicks(levels, radix)) + 1 {
				routingKey, err := format.Encode("k", time.Duration(ticks)*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				want := "k"
				for k := levels - 1; k >= 0; k-- {
					power := int64(1)
					for range k {
						power *= int64(radix)
					}
					want += "." + strconv.FormatInt(ticks/power%int64(radix), 10)
				}
				if routingKey != want {
					t.Fatalf("radix %d: Encode(%d ticks, %d levels) = %q, want %q", radix, ticks, levels, routingKey, want)
				}
				key, decoded, err := format.Decode(routingKey)
				if err != nil || key != "k" || decoded != time.Duration(ticks)*time.Second {
					t.Fatalf("radix %d: Decode(%q) = %q, %s, %v", radix, routingKey, key, decoded, err)
				}
			}
		}
	}
}

func TestKeyFormatMaxDelay(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		format KeyFormat
		want   time.Duration
	}{
		"radix 2 is MaxDelayFor": {KeyFormat{Levels: 8, Resolution: 100 * time.Millisecond}, MaxDelayFor(8, 100*time.Millisecond)},
		"255 ticks in radix 16":  {KeyFormat{Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond}, 25500 * time.Millisecond},
		"63 ticks in radix 4":    {KeyFormat{Levels: 3, Radix: 4, Resolution: time.Second}, 63 * time.Second},
		"511 ticks in radix 8":   {KeyFormat{Levels: 3, Radix: 8, Resolution: time.Millisecond}, 511 * time.Millisecond},
		"saturates":              {KeyFormat{Levels: 32, Radix: 16, Resolution: time.Millisecond}, math.MaxInt64},
		"saturates in the power": {KeyFormat{Levels: 16, Radix: 16, Resolution: 1}, math.MaxInt64},
		"just below saturation":  {KeyFormat{Levels: 15, Radix: 16, Resolution: 1}, 1<<60 - 1},
		"no levels":              {KeyFormat{Radix: 16, Resolution: time.Second}, 0},
		"no resolution":          {KeyFormat{Levels: 2, Radix: 16}, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := tc.format.MaxDelay(); got != tc.want {
				t.Errorf("MaxDelay() = %s, want %s", got, tc.want)
			}
		})
	}
}

func FuzzEncodeDecodeKey(f *testing.F) {
	// key, delay in ns, levels, resolution in ns; the radix is given by
	// radixChoice (0: the zero value, binary; 1–5: 2, 4, 8, 16, 256; any other:
	// itself, refused unless it happens to be allowed).
	f.Add("orders", int64(5*time.Second), 4, int64(time.Second), 0)           // the design's example
	f.Add("", int64(0), 1, int64(time.Millisecond), 0)                        // empty key, no delay: just "0"
	f.Add("a.1.0", int64(3*time.Millisecond), 2, int64(time.Millisecond), 0)  // key words that look like digits
	f.Add("k", int64(1), 4, int64(time.Second), 0)                            // a nanosecond rounds up to a whole tick
	f.Add("k", int64(15*time.Second+1), 4, int64(time.Second), 0)             // just past the longest delay: refused
	f.Add("k", int64(-1), 4, int64(time.Second), 0)                           // negative delay: refused
	f.Add(strings.Repeat("k", 247), int64(0), 4, int64(time.Second), 0)       // longest key for 4 levels
	f.Add(strings.Repeat("k", 248), int64(0), 4, int64(time.Second), 0)       // one byte too long: refused
	f.Add("", int64(math.MaxInt64), 32, int64(time.Millisecond), 0)           // largest Duration with 32 levels: refused
	f.Add("", int64(MaxDelayFor(29, time.Second)), 29, int64(time.Second), 0) // the longest delay of any set at 1s
	f.Add("x", int64(time.Hour), 29, int64(time.Second), 0)                   // the most levels at 1s
	f.Add("x", int64(time.Hour), 30, int64(time.Second), 0)                   // top TTL over ten years: refused
	f.Add("x", int64(time.Second), 3, int64(1500*time.Microsecond), 0)        // resolution not whole ms: refused
	f.Add("x", int64(time.Second), 3, int64(0), 0)                            // no resolution: refused
	f.Add("x", int64(2), 1, MaxTTL*int64(time.Millisecond), 0)                // longest resolution
	f.Add("a..b.", int64(time.Second), 2, int64(time.Second), 0)              // empty words in the key
	f.Add(".", int64(time.Second), 2, int64(time.Second), 0)                  // a key that is one dot
	f.Add("\xff\x00", int64(time.Second), 2, int64(time.Second), 0)           // bytes that are not text
	f.Add("orders", int64(27*time.Second), 3, int64(time.Second), 2)          // radix 4: "orders.1.2.3"
	f.Add("k", int64(255*time.Second), 2, int64(time.Second), 4)              // radix 16, two-byte digits: "k.15.15"
	f.Add("k", int64(256*time.Second), 2, int64(time.Second), 4)              // radix 16, just past the longest delay: refused
	f.Add(strings.Repeat("k", 246), int64(0), 3, int64(time.Second), 4)       // longest key with 3 digits of radix 16
	f.Add("", int64(time.Hour), 9, int64(time.Millisecond), 4)                // the most levels of radix 16 at 1ms
	f.Add("", int64(time.Hour), 10, int64(time.Millisecond), 4)               // one level too many: refused
	f.Add("x", int64(time.Second), 4, int64(time.Second), 3)                  // radix 8
	f.Add("x", int64(time.Second), 4, int64(time.Second), 5)                  // radix 5: refused
	f.Fuzz(func(t *testing.T, key string, delayNanos int64, levels int, resolutionNanos int64, radixChoice int) {
		delay, resolution := time.Duration(delayNanos), time.Duration(resolutionNanos)
		radix := radixChoice
		if radixChoice >= 1 && radixChoice <= len(Radixes) {
			radix = Radixes[radixChoice-1]
		}
		format := KeyFormat{Levels: levels, Radix: radix, Resolution: resolution}
		routingKey, err := format.Encode(key, delay)
		if err != nil {
			var fieldErr *FieldError
			if !errors.As(err, &fieldErr) || routingKey != "" {
				t.Fatalf("EncodeKey() = %q, %v (%T), want only a *FieldError", routingKey, err, err)
			}
			// DecodeKey must not panic on arbitrary input either, and what it
			// accepts must encode back to the same routing key.
			fuzzCheckDecodeReencodes(t, key, format)
			return
		}
		if len(routingKey) > MaxNameLength {
			t.Fatalf("EncodeKey() made a routing key of %d bytes", len(routingKey))
		}
		if radixOrDefault(radix) == 2 {
			// The radix-2 functions are the format with the zero radix.
			if binary, err := EncodeKey(key, delay, levels, resolution); err != nil || binary != routingKey {
				t.Fatalf("EncodeKey() = %q, %v; Encode gave %q", binary, err, routingKey)
			}
		}
		// Encode takes the key literally; CheckKey refuses only its words, never its length.
		if err := format.CheckKey(key); (err != nil) != (len(keyProblems(key)) > 0) {
			t.Fatalf("CheckKey(%q) = %v for a key Encode accepts", key, err)
		}
		gotKey, gotDelay, err := format.Decode(routingKey)
		if err != nil {
			t.Fatalf("Decode(Encode()) = %v", err)
		}
		if gotKey != key {
			t.Fatalf("key %q came back as %q", key, gotKey)
		}
		// Rounded up to a whole tick: never early, less than one tick late.
		if gotDelay < delay || gotDelay-delay >= resolution || gotDelay%resolution != 0 {
			t.Fatalf("delay %s came back as %s at resolution %s", delay, gotDelay, resolution)
		}
		fuzzCheckDecodeReencodes(t, routingKey, format)
	})
}

// fuzzCheckDecodeReencodes decodes routingKey and, when it is accepted,
// checks that encoding the result gives the routing key back: the only
// other spelling DecodeKey accepts is an empty word before the digits.
func fuzzCheckDecodeReencodes(t *testing.T, routingKey string, format KeyFormat) {
	t.Helper()
	key, delay, err := format.Decode(routingKey)
	if err != nil {
		var fieldErr *FieldError
		if !errors.As(err, &fieldErr) || key != "" || delay != 0 {
			t.Fatalf("DecodeKey(%q) = %q, %s, %v (%T), want only a *FieldError", routingKey, key, delay, err, err)
		}
		return
	}
	again, err := format.Encode(key, delay)
	if err != nil {
		t.Fatalf("Encode(Decode(%q)) = %v", routingKey, err)
	}
	if again != routingKey && "."+again != routingKey {
		t.Fatalf("DecodeKey(%q) = %q, %s, which encodes to %q", routingKey, key, delay, again)
	}
}
