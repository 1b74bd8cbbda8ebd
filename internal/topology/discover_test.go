package topology

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// discoverNoise is what a vhost holds beside delay sets: the broker's own
// exchanges, the default exchange's implicit bindings, and objects named
// like a set's entry and exit (".out", ".ingest", ".unroutable") or like
// the libraries' delivery exchanges, which alone make no set.
var discoverNoise = Topology{
	VHost: "/",
	Exchanges: []Exchange{
		{Name: "", Type: "direct"}, {Name: "amq.topic", Type: ExchangeTopic},
		{Name: "billing.out", Type: ExchangeTopic}, {Name: "orders.ingest", Type: "direct"},
		{Name: "nsb.v2.delay-delivery.audit", Type: ExchangeTopic},
	},
	Queues: []Queue{{Name: "orders"}, {Name: "orders.unroutable"}, {Name: "celery_delayed_05"}},
	Bindings: []Binding{
		{Source: "", Destination: "orders", DestinationType: DestinationQueue, RoutingKey: "orders"},
		{Source: "billing.out", Destination: "orders", DestinationType: DestinationQueue, RoutingKey: "#"},
	},
}

// vhostOf is the objects of every topology in one vhost, noise first.
func vhostOf(parts ...Topology) Topology {
	all := editTopology(discoverNoise, func(*Topology) {})
	for _, p := range parts {
		if p.VHost != "" {
			all.VHost = p.VHost
		}
		all.Exchanges = append(all.Exchanges, p.Exchanges...)
		all.Queues = append(all.Queues, p.Queues...)
		all.Bindings = append(all.Bindings, p.Bindings...)
	}
	return all
}

// foundLine spells a found set on one line.
func foundLine(f FoundSet) string {
	s := f.Spec
	return fmt.Sprintf("%s %s: %d levels of radix %d at %s, %s %s, %d routes, generation %d, %d draining",
		s.Name, s.Layout.OrDefault(), s.Levels, s.Radix, FormatDuration(s.Resolution), s.QueueType, s.DeadLetterStrategy,
		len(s.Routes), s.Generation, len(f.Draining))
}

// unreadableLine spells an unreadable set on one line: its name and
// layout, whether its objects describe a set, and its reasons.
func unreadableLine(u UnreadableSet) string {
	describes := "explains no set"
	if u.Inferred != nil {
		describes = fmt.Sprintf("describes %d levels of radix %d", u.Inferred.Levels, u.Inferred.Radix)
	}
	return fmt.Sprintf("%s %s, %s: %s", u.Name, u.Layout, describes, strings.Join(u.Reasons, "; "))
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	binary := Spec{Name: "orders.retry", VHost: "/", Levels: 3, Resolution: 5 * time.Second, QueueType: QueueTypeClassic,
		Routes: []Route{{Destination: "orders", Key: "orders"}}}
	radix16 := Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 16, Resolution: time.Second}
	nested := Spec{Name: "delay.r16", VHost: "/", Levels: 1, Radix: 4}
	nsb := Spec{Name: "x", VHost: "/", Layout: LayoutNServiceBus, Routes: []Route{{Destination: "orders", Key: "orders"}}}
	celery := Spec{Name: "x", VHost: "/", Layout: LayoutCelery, QueueType: QueueTypeClassic}
	twoLevels := Spec{Name: "part", VHost: "/", Levels: 3}
	tests := map[string]struct {
		vhost            Topology
		sets, unreadable []string
	}{
		"nothing but names like a set's entry and exit": {vhost: vhostOf()},
		"sets of every layout, and sets whose names extend each other": {
			vhost: vhostOf(mustPlan(t, binary), mustPlan(t, radix16), mustPlan(t, nested), mustPlan(t, nsb), mustPlan(t, celery)),
			sets: []string{
				"celery celery: 28 levels of radix 2 at 1s, classic at-most-once, 0 routes, generation 0, 0 draining",
				"delay default: 2 levels of radix 16 at 1s, quorum at-least-once, 0 routes, generation 0, 0 draining",
				"delay.r16 default: 1 levels of radix 4 at 1s, quorum at-least-once, 0 routes, generation 0, 0 draining",
				"nservicebus nservicebus: 28 levels of radix 2 at 1s, quorum at-least-once, 1 routes, generation 0, 0 draining",
				"orders.retry default: 3 levels of radix 2 at 5s, classic at-most-once, 1 routes, generation 0, 0 draining",
			},
		},
		"a set that exists only in part": {
			vhost: vhostOf(editTopology(mustPlan(t, twoLevels), func(t *Topology) {
				withoutQueue(t, "part.level.01")
				withoutExchange(t, "part.out")
			})),
			unreadable: []string{`part default, describes 3 levels of radix 2: exchange part.out is missing; queue part.level.01 is missing; ` +
				`binding part.level.00.done -> exchange part.out, key "#" is missing; binding part.level.01.done -> exchange part.out, key "#.0" is missing; binding part.level.02.done -> queue part.level.01, key "#.1.*" is missing; ` +
				`binding part.level.02.done -> exchange part.out, key "#.0.0" is missing; binding part.ingest -> queue part.level.01, key "#.0.1.*" is missing; ` +
				`binding part.ingest -> exchange part.out, key "#.0.0.0" is missing`},
		},
		"objects named as a set's, with other arguments": {
			vhost: vhostOf(
				Topology{Queues: []Queue{{Name: "plain.level.00"}, {Name: "plain.level.01"}}},
				editTopology(mustPlan(t, twoLevels), func(t *Topology) {
					queueNamed(t, "part.level.02").Arguments.MessageTTL = 5000
				}),
				editTopology(mustPlan(t, binary), func(t *Topology) {
					queueNamed(t, "orders.retry.level.00").Arguments.Other = map[string]string{"x-max-length": "10"}
				}),
			),
			unreadable: []string{
				`orders.retry default, describes 3 levels of radix 2: queue orders.retry.level.00 differs: x-max-length 10 → (none): queue arguments cannot change in place`,
				`part default, explains no set: the level queues disagree on the resolution: part.level.00 x-message-ttl 1000 (resolution 1s), ` +
					`part.level.01 x-message-ttl 2000 (resolution 1s), part.level.02 x-message-ttl 5000 (resolution 1.25s)`,
				`plain default, explains no set: no level queue has an x-message-ttl (plain.level.00, plain.level.01), so the resolution is unknown`,
			},
		},
		"a library's layout in part, and a stray binding": {
			vhost: vhostOf(
				editTopology(mustPlan(t, nsb), func(t *Topology) { withoutQueue(t, "nsb.v2.delay-level-27") }),
				editTopology(mustPlan(t, radix16), func(t *Topology) {
					t.Bindings = append(t.Bindings, Binding{Source: "delay.ingest", Destination: "orders", DestinationType: DestinationQueue, RoutingKey: "#"})
				}),
			),
			unreadable: []string{
				`delay default, describes 2 levels of radix 16: binding delay.ingest -> queue orders, key "#" is not the set's: the set has no such binding`,
				`nservicebus nservicebus, describes 28 levels of radix 2: queue nsb.v2.delay-level-27 is missing; ` +
					`binding nsb.v2.delay-level-27 -> queue nsb.v2.delay-level-27, key "1.#" is missing`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			found := Discover(tc.vhost)
			var sets, unreadable []string
			for _, s := range found.Sets {
				sets = append(sets, foundLine(s))
			}
			for _, u := range found.Unreadable {
				unreadable = append(unreadable, unreadableLine(u))
			}
			if d := cmp.Diff(tc.sets, sets); d != "" {
				t.Errorf("sets (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.unreadable, unreadable); d != "" {
				t.Errorf("unreadable (-want +got):\n%s", d)
			}
		})
	}
}

// TestDiscoverFindsEveryPlannedSet checks that every set Infer explains,
// and every generation case, alone in a vhost among the noise, is found as
// one set with its resolved spec and draining generations, and nothing
// else is.
func TestDiscoverFindsEveryPlannedSet(t *testing.T) {
	t.Parallel()
	cases := map[string]generationCase{}
	for name, s := range inferSpecs {
		cases["infer: "+name] = generationCase{spec: s}
	}
	for name, c := range generationCases {
		cases["generations: "+name] = c
	}
	for _, layout := range []Layout{LayoutNServiceBus, LayoutCelery} {
		cases[string(layout)] = generationCase{spec: Spec{Name: string(layout), VHost: "/", Layout: layout,
			Routes: []Route{{Destination: "orders", Key: "tasks.#"}}}}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := Resolve(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			found := Discover(vhostOf(mustPlanGenerations(t, c)))
			if len(found.Sets) != 1 || len(found.Unreadable) != 0 {
				t.Fatalf("found %d sets and %d unreadable, want one set: %+v", len(found.Sets), len(found.Unreadable), found)
			}
			if d := cmp.Diff(want, found.Sets[0].Spec); d != "" {
				t.Errorf("spec (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.draining, found.Sets[0].Draining); d != "" {
				t.Errorf("draining generations (-want +got):\n%s", d)
			}
		})
	}
}

// TestDiscoverNamesEveryMissingObject removes each exchange and queue of
// a set in turn, and each of its delay bindings: the set is unreadable,
// and its reasons name what was removed as missing. (Without a route's
// binding it is a set with one route fewer.)
func TestDiscoverNamesEveryMissingObject(t *testing.T) {
	t.Parallel()
	s := Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 4, Routes: []Route{{Destination: "orders"}}}
	full := mustPlan(t, s)
	removals := map[string]func(*Topology){}
	for _, e := range full.Exchanges {
		removals["exchange "+e.Name] = func(t *Topology) { withoutExchange(t, e.Name) }
	}
	for _, q := range full.Queues {
		removals["queue "+q.Name] = func(t *Topology) { withoutQueue(t, q.Name) }
	}
	for _, b := range full.Bindings {
		if b.Source == "delay.out" {
			continue
		}
		removals["binding "+b.String()] = func(t *Topology) { withoutBinding(t, b.Source, b.Destination, b.RoutingKey) }
	}
	for removed, edit := range removals {
		t.Run(removed, func(t *testing.T) {
			t.Parallel()
			found := Discover(vhostOf(editTopology(full, edit)))
			if len(found.Sets) != 0 || len(found.Unreadable) != 1 {
				t.Fatalf("found %d sets and %d unreadable, want one unreadable", len(found.Sets), len(found.Unreadable))
			}
			u := found.Unreadable[0]
			if u.Inferred == nil || !slices.Contains(u.Reasons, removed+" is missing") {
				t.Errorf("unreadable %s, want the reason %q", unreadableLine(u), removed+" is missing")
			}
		})
	}
}
