package delaykey_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/delaykey"
)

// These tests need nothing but the module itself, so they run wherever it
// is downloaded. The provider's repository holds every result against its
// own encoder (internal/delaykeycheck).

// TestErrorsSayWhich checks the sentinel each refusal wraps.
func TestErrorsSayWhich(t *testing.T) {
	t.Parallel()
	binary := delaykey.Format{Levels: 4, Resolution: time.Second}
	tests := map[string]struct {
		err  error
		want error
	}{
		"radix 3":             {delaykey.Format{Levels: 4, Radix: 3, Resolution: time.Second}.Check(), delaykey.ErrFormat},
		"celery levels":       {delaykey.Format{Levels: 12, Layout: delaykey.Celery}.Check(), delaykey.ErrFormat},
		"negative":            {second(binary.RoutingKey("orders", -time.Second)), delaykey.ErrDelay},
		"beyond":              {second(binary.RoutingKey("orders", 16*time.Second)), delaykey.ErrDelay},
		"long key":            {second(binary.RoutingKey(strings.Repeat("k", 248), 0)), delaykey.ErrKey},
		"empty library key":   {second(delaykey.Format{Layout: delaykey.NServiceBus}.RoutingKey("", time.Second)), delaykey.ErrKey},
		"wildcard":            {binary.CheckKey("orders.#"), delaykey.ErrKey},
		"padded digit":        {third(binary.Parse("orders.00.0.0.1")), delaykey.ErrRoutingKey},
		"bad format on parse": {third(delaykey.Format{}.Parse("orders.1")), delaykey.ErrFormat},
	}
	for name, test := range tests {
		if !errors.Is(test.err, test.want) {
			t.Errorf("%s: %v does not wrap %v", name, test.err, test.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func third[T, U any](_ T, _ U, err error) error { return err }

// FuzzRoundTrip checks, for any key and delay, that a routing key RoutingKey
// writes parses back to the key and to the delay rounded to the tick the
// layout counts in: never earlier than asked (later by less than a tick),
// except in Celery's layout, which truncates as Celery does (earlier by
// less than a tick, never later). The seeds: a radix-16 key, the empty key,
// a delay just past a tick, a negative delay.
func FuzzRoundTrip(f *testing.F) {
	f.Add("orders", int64(37*time.Second))
	f.Add("", int64(0))
	f.Add("billing.eu", int64(255*time.Second+1))
	f.Add("x", int64(-1))
	formats := []delaykey.Format{{Levels: 2, Radix: 16, Resolution: time.Second}, {Levels: 12, Resolution: 100 * time.Millisecond},
		{Layout: delaykey.Celery}, {Layout: delaykey.NServiceBus}}
	f.Fuzz(func(t *testing.T, key string, nanoseconds int64) {
		delay := time.Duration(nanoseconds)
		for _, format := range formats {
			routingKey, err := format.RoutingKey(key, delay)
			if err != nil {
				continue
			}
			gotKey, gotDelay, err := format.Parse(routingKey)
			if err != nil || gotKey != key {
				t.Fatalf("%+v: Parse(%q) = %q, %v; want the key %q", format, routingKey, gotKey, err, key)
			}
			tick := format.Resolution
			if tick == 0 {
				tick = time.Second // the libraries' layouts count whole seconds
			}
			off := gotDelay - delay // how much later than asked the key delays the message
			if format.Layout == delaykey.Celery {
				off = -off // how much earlier: Celery truncates
			}
			if off < 0 || off >= tick {
				t.Fatalf("%+v: RoutingKey(%q, %s) = %q, which parses to %s", format, key, delay, routingKey, gotDelay)
			}
		}
	})
}

func ExampleFormat_RoutingKey() {
	// The set's Terraform outputs: levels, radix, resolution.
	format := delaykey.Format{Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond}
	routingKey, err := format.RoutingKey("orders", 3700*time.Millisecond)
	if err != nil {
		panic(err)
	}
	fmt.Println(routingKey)
	_, err = format.RoutingKey("orders", time.Minute)
	fmt.Println(errors.Is(err, delaykey.ErrDelay))
	// Output:
	// orders.2.5
	// true
}

func ExampleFormat_Parse() {
	format := delaykey.Format{Layout: delaykey.NServiceBus}
	key, delay, err := format.Parse(strings.Repeat("0.", 25) + "1.0.1.Sales")
	fmt.Println(key, delay, err)
	// Output:
	// Sales 5s <nil>
}
