package topology

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// radixInvalidCases are specs with a radix that Validate must refuse, with
// every error it must report, in order.
var radixInvalidCases = map[string]struct {
	spec Spec
	want []specWantError
}{
	"radix 3": {specBase(func(s *Spec) { s.Radix = 3 }), []specWantError{
		{"radix", -1, "must be one of 2, 4, 8, 16, 256, got 3"},
	}},
	"radix 32": {specBase(func(s *Spec) { s.Radix = 32 }), []specWantError{
		{"radix", -1, "must be one of 2, 4, 8, 16, 256, got 32"},
	}},
	"negative radix": {specBase(func(s *Spec) { s.Radix = -16 }), []specWantError{
		{"radix", -1, "must be one of 2, 4, 8, 16, 256, got -16"},
	}},
	"radix after resolution, before queue_type": {specBase(func(s *Spec) {
		s.Radix, s.Resolution, s.QueueType = 1, time.Microsecond, "lazy"
	}), []specWantError{
		{"resolution", -1, "must be at least 1ms"},
		{"radix", -1, "got 1"},
		{"queue_type", -1, "must be one of"},
	}},
	"a bad radix skips the TTL check, not the range check": {specBase(func(s *Spec) { s.Radix, s.Levels = 5, 40 }), []specWantError{
		{"levels", -1, "must be between 1 and 32, got 40"},
		{"radix", -1, "got 5"},
	}},
	"a bad radix leaves max_delay unchecked": {specBase(func(s *Spec) { s.Radix, s.Levels, s.MaxDelay = 5, 0, 1<<62 }), []specWantError{
		{"radix", -1, "got 5"},
	}},
	"too many levels of radix 16 at 1s": {specBase(func(s *Spec) { s.Radix, s.Levels = 16, 9 }), []specWantError{
		{"levels", -1, "9 levels of radix 16 at resolution 1s give the top queue a TTL of 1000ms·15·16^8, above the broker's largest message TTL 315360000000ms (10 years); at most 7 levels fit at this resolution and radix"},
	}},
	"too many levels of radix 4 at 1ms": {specBase(func(s *Spec) { s.Radix, s.Levels, s.Resolution = 4, 20, time.Millisecond }), []specWantError{
		{"levels", -1, "TTL of 1ms·3·4^19, above"},
	}},
	"max_delay beyond radix 16 at 1s": {specBase(func(s *Spec) { s.Radix, s.Levels, s.MaxDelay = 16, 0, 16*16*16*16*16*16*16*time.Second+1 }), []specWantError{
		{"max_delay", -1, "needs more levels than fit at resolution 1s with radix 16 (at most 7, each level's TTL at most 315360000000ms); the largest max_delay at this resolution is 74565h24m15s"},
	}},
	"route key too long for radix 16": {specBase(func(s *Spec) {
		s.Radix = 16
		s.Routes = []Route{{Destination: "q", Key: strings.Repeat("k", 244)}}
	}), []specWantError{
		{"route.key", 0, "must be at most 243 bytes with 4 levels"},
	}},
	"radix 16 names are the set's own objects": {specBase(func(s *Spec) {
		s.Radix = 16
		s.Routes = []Route{{Destination: "delay.r16.00.15"}, {Destination: "delay.r4.01.done"}}
	}), []specWantError{
		{"route.destination", 0, `"delay.r16.00.15" is one of the set's own objects`},
		{"route.destination", 1, `"delay.r4.01.done" is one of the set's own objects`},
	}},
}

func TestValidateRadixRefuses(t *testing.T) {
	t.Parallel()
	for name, tc := range radixInvalidCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := Validate(tc.spec)
			var errs ValidationErrors
			if !errors.As(err, &errs) {
				t.Fatalf("Validate() = %v, want ValidationErrors", err)
			}
			var got []specWantError
			for i, e := range errs {
				fragment := ""
				if i < len(tc.want) {
					fragment = tc.want[i].Fragment
				}
				if !strings.Contains(e.Message, fragment) {
					fragment = e.Message
				}
				got = append(got, specWantError{e.Field, e.Route, fragment})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got, got fragments replaced by the whole message when missing):\n%s", diff)
			}
		})
	}
}

func TestResolveRadix(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		spec, want Spec
	}{
		"zero radix is 2": {
			Spec{Name: "d", VHost: "/", Levels: 4},
			Spec{Name: "d", VHost: "/", Levels: 4, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
		},
		"radix 16 kept": {
			Spec{Name: "d", VHost: "/", Levels: 2, Radix: 16},
			Spec{Name: "d", VHost: "/", Levels: 2, Radix: 16, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
		},
		"255 ticks are 2 hex digits": {
			Spec{Name: "d", VHost: "/", MaxDelay: 25500 * time.Millisecond, Resolution: 100 * time.Millisecond, Radix: 16},
			Spec{Name: "d", VHost: "/", Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
		},
		"256 ticks are 3 hex digits": {
			Spec{Name: "d", VHost: "/", MaxDelay: 25600 * time.Millisecond, Resolution: 100 * time.Millisecond, Radix: 16},
			Spec{Name: "d", VHost: "/", Levels: 3, Radix: 16, Resolution: 100 * time.Millisecond, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
		},
		"an hour at 1s in radix 4": {
			Spec{Name: "d", VHost: "/", MaxDelay: time.Hour, Radix: 4},
			Spec{Name: "d", VHost: "/", Levels: 6, Radix: 4, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
		},
		"largest max_delay of radix 16 at 1ms": {
			Spec{Name: "d", VHost: "/", MaxDelay: KeyFormat{Levels: 9, Radix: 16, Resolution: time.Millisecond}.MaxDelay(), Resolution: time.Millisecond, Radix: 16},
			Spec{Name: "d", VHost: "/", Levels: 9, Radix: 16, Resolution: time.Millisecond, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
		},
		"longest route key of radix 16": {
			Spec{Name: "d", VHost: "/", Levels: 4, Radix: 16, Routes: []Route{{Destination: "q", Key: strings.Repeat("k", 243)}}},
			Spec{Name: "d", VHost: "/", Levels: 4, Radix: 16, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce,
				Routes: []Route{{Destination: "q", DestinationType: DestinationQueue, Key: strings.Repeat("k", 243)}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := Resolve(tc.spec)
			if err != nil {
				t.Fatalf("Resolve() = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve() (-want +got):\n%s", diff)
			}
			// Smallest: one level fewer does not reach max_delay.
			if tc.spec.MaxDelay != 0 && got.Levels > 1 &&
				(KeyFormat{Levels: got.Levels - 1, Radix: got.Radix, Resolution: got.Resolution}).MaxDelay() >= tc.spec.MaxDelay {
				t.Errorf("%d levels already reach %s", got.Levels-1, tc.spec.MaxDelay)
			}
			if format := got.KeyFormat(); format != (KeyFormat{Levels: got.Levels, Radix: got.Radix, Resolution: got.Resolution}) {
				t.Errorf("KeyFormat() = %+v", format)
			}
		})
	}
}

func TestValidateLevelLimitEveryRadix(t *testing.T) {
	t.Parallel()
	// For each radix and resolutions of many sizes, the largest accepted
	// levels has a top queue's TTL, (r−1)·r^(N−1) ticks, within MaxTTL, and
	// one more level does not.
	for _, radix := range Radixes {
		for _, resolution := range []time.Duration{time.Millisecond, 73 * time.Millisecond, time.Second, time.Minute, time.Hour, 24 * time.Hour, 365 * 24 * time.Hour} {
			largest := 0
			for levels := MinLevels; levels <= MaxLevels; levels++ {
				if Validate(Spec{Name: "d", VHost: "/", Levels: levels, Radix: radix, Resolution: resolution}) == nil {
					largest = levels
				}
			}
			top := func(levels int) float64 {
				power := 1.0
				for range levels - 1 {
					power *= float64(radix)
				}
				return float64(resolution.Milliseconds()) * float64(radix-1) * power
			}
			if largest > 0 && top(largest) > float64(MaxTTL) || largest < MaxLevels && top(largest+1) <= float64(MaxTTL) {
				t.Errorf("radix %d, resolution %s: largest levels %d with top TTL %.0fms", radix, resolution, largest, top(largest))
			}
		}
	}
}
