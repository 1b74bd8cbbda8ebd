package messaging

import (
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestSetRoutingKeyRadix2Unchanged: a set that names no radix writes the
// binary keys of topology.EncodeKey, as before sets had a radix, for every
// delay of a small set.
func TestSetRoutingKeyRadix2Unchanged(t *testing.T) {
	t.Parallel()
	const levels, resolution = 4, 100 * time.Millisecond
	for _, radix := range []int{0, 2} {
		set := Set{IngestExchange: "x.ingest", Levels: levels, Resolution: resolution, Radix: radix}
		for ticks := range 1 << levels {
			delay := time.Duration(ticks) * resolution
			want, err := topology.EncodeKey("orders", delay, levels, resolution)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := set.RoutingKey("orders", delay); got != want || err != nil {
				t.Errorf("radix %d, %s: RoutingKey = %q, %v; want %q", radix, delay, got, err, want)
			}
		}
	}
}

func TestSetRoutingKeyRadix(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		set   Set
		delay time.Duration
		want  string
	}{
		"radix 16, 255 ticks":      {Set{Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond}, 25500 * time.Millisecond, "bench.15.15"},
		"radix 16, 17 ticks":       {Set{Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond}, 1700 * time.Millisecond, "bench.1.1"},
		"radix 4, rounded up to 7": {Set{Levels: 4, Radix: 4, Resolution: time.Second}, 6500 * time.Millisecond, "bench.0.0.1.3"},
		"radix 8, zero":            {Set{Levels: 3, Radix: 8, Resolution: time.Second}, 0, "bench.0.0.0"},
		"radix 2 named, 5 ticks":   {Set{Levels: 3, Radix: 2, Resolution: time.Second}, 5 * time.Second, "bench.1.0.1"},
		"radix 16, three digits":   {Set{Levels: 3, Radix: 16, Resolution: time.Millisecond}, 4095 * time.Millisecond, "bench.15.15.15"},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := test.set.RoutingKey("bench", test.delay)
			if err != nil || got != test.want {
				t.Fatalf("RoutingKey = %q, %v; want %q", got, err, test.want)
			}
			key, delay, err := test.set.KeyFormat().Decode(got)
			if err != nil || key != "bench" || delay < test.delay || delay-test.delay >= test.set.Resolution {
				t.Errorf("Decode(%q) = %q, %s, %v; want bench and %s rounded up to ticks", got, key, delay, err, test.delay)
			}
		})
	}
}

func TestSetRoutingKeyRefuses(t *testing.T) {
	t.Parallel()
	for name, set := range map[string]Set{
		"radix 3":              {Levels: 2, Radix: 3, Resolution: time.Second},
		"delay past radix 16":  {Levels: 1, Radix: 16, Resolution: time.Second},
		"levels of no set":     {Levels: 0, Radix: 16, Resolution: time.Second},
		"resolution of no set": {Levels: 2, Radix: 4, Resolution: time.Microsecond},
	} {
		if got, err := set.RoutingKey("k", 20*time.Second); err == nil {
			t.Errorf("%s: RoutingKey = %q, want an error", name, got)
		}
	}
}

// TestSetLibraryLayout: a set of a library's layout writes the library's
// keys and picks the library's entry exchange for each delay.
func TestSetLibraryLayout(t *testing.T) {
	t.Parallel()
	bits := func(ticks int) string {
		key := ""
		for k := 27; k >= 0; k-- {
			key += string(rune('0'+ticks>>k&1)) + "."
		}
		return key
	}
	tests := map[string]struct {
		set           Set
		delay         time.Duration
		key, exchange string
	}{
		"nservicebus rounds 4.2s up to 5, enters at bit 2": {Set{Layout: topology.LayoutNServiceBus}, 4200 * time.Millisecond, bits(5) + "Sales", "nsb.v2.delay-level-02"},
		"nservicebus no delay enters at level 00":          {Set{Layout: topology.LayoutNServiceBus}, 0, bits(0) + "Sales", "nsb.v2.delay-level-00"},
		"celery truncates 4.9s to 4, enters at the top":    {Set{Layout: topology.LayoutCelery}, 4900 * time.Millisecond, bits(4) + "Sales", "celery_delayed_27"},
		"default layout keeps its ingest exchange":         {Set{IngestExchange: "d.ingest", Levels: 3, Resolution: time.Second}, 5 * time.Second, "Sales.1.0.1", "d.ingest"},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			key, err := test.set.RoutingKey("Sales", test.delay)
			if err != nil || key != test.key {
				t.Errorf("RoutingKey = %q, %v; want %q", key, err, test.key)
			}
			exchange, err := test.set.Exchange(test.delay)
			if err != nil || exchange != test.exchange {
				t.Errorf("Exchange = %q, %v; want %q", exchange, err, test.exchange)
			}
		})
	}
}
