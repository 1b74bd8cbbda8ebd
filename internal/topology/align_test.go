package topology

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAlign(t *testing.T) {
	t.Parallel()
	desired, err := Plan(Spec{Name: "delay", VHost: "/", Levels: 3, Resolution: time.Second,
		Routes: []Route{{Destination: "work"}}})
	if err != nil {
		t.Fatal(err)
	}
	reversed := func(t Topology) Topology {
		t.Exchanges, t.Queues, t.Bindings = slices.Clone(t.Exchanges), slices.Clone(t.Queues), slices.Clone(t.Bindings)
		slices.Reverse(t.Exchanges)
		slices.Reverse(t.Queues)
		slices.Reverse(t.Bindings)
		return t
	}
	extra := reversed(desired)
	extra.Queues = append(extra.Queues, Queue{Name: "delay.level.09"}, Queue{Name: "delay.level.05"})
	extra.Bindings = append([]Binding{{Source: "delay.out", Destination: "old", RoutingKey: "x.*.*.*"}}, extra.Bindings...)
	extra.Queues[0].Arguments.MessageTTL = 7 // drifted values are kept

	tests := map[string]struct {
		actual Topology
		want   func() Topology
	}{
		"same objects in another order read back as planned": {
			actual: reversed(desired),
			want:   func() Topology { return desired },
		},
		"extra objects follow, sorted; actual values kept": {
			actual: extra,
			want: func() Topology {
				want := desired
				want.Queues = slices.Clone(desired.Queues)
				want.Queues[len(want.Queues)-1].Arguments.MessageTTL = 7
				want.Queues = append(want.Queues, Queue{Name: "delay.level.05"}, Queue{Name: "delay.level.09"})
				want.Bindings = append(slices.Clone(desired.Bindings), Binding{Source: "delay.out", Destination: "old", RoutingKey: "x.*.*.*"})
				return want
			},
		},
		"missing objects are simply absent": {
			actual: Topology{VHost: "/", Queues: []Queue{desired.Queues[2], desired.Queues[0]}},
			want: func() Topology {
				return Topology{VHost: "/", Queues: []Queue{desired.Queues[0], desired.Queues[2]}}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := Align(tc.actual, desired)
			if diff := cmp.Diff(tc.want(), got); diff != "" {
				t.Errorf("Align (-want +got):\n%s", diff)
			}
		})
	}
}
