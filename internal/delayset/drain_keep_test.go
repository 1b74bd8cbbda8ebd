package delayset

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestKeep checks which generations an update keeps: each older one that
// holds a message by the exact count, and the current one when the update
// switches from it, which is not counted.
func TestKeep(t *testing.T) {
	t.Parallel()
	next := spec
	next.Generation, next.FormatGeneration = 4, 4
	tests := map[string]struct {
		spec, current topology.Spec
		draining      []topology.Generation
		held          map[string]int64

		want      []topology.Generation
		wantCalls []call
	}{
		"keep: generations holding messages are kept": {
			spec: spec, current: spec, draining: []topology.Generation{g1, g2},
			held:      holding(1, g1, g2),
			want:      []topology.Generation{g1, g2},
			wantCalls: []call{{"held", queuesIn(g1, g2), 0}},
		},
		"keep: an empty older generation is not": {
			spec: spec, current: spec, draining: []topology.Generation{g1, g2},
			held:      holding(2, g2),
			want:      []topology.Generation{g2},
			wantCalls: []call{{"held", queuesIn(g1, g2), 0}},
		},
		"switch: the current generation is kept, uncounted, and drains": {
			spec: next, current: spec, draining: []topology.Generation{g1},
			want:      []topology.Generation{g3},
			wantCalls: []call{{"held", queuesIn(g1), 0}},
		},
		"nothing drains and nothing switches: nothing is asked": {
			spec: spec, current: spec,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			counter := &fakeCounter{clock: newFakeClock(), held: tt.held}
			got, err := Keep(context.Background(), counter, tt.spec, tt.current, tt.draining)
			checkAnswer(t, counter, "kept", tt.want, got, err, tt.wantCalls)
		})
	}
}

// TestSettled checks when the statistics of the generation switched from
// are trusted: from broker.StatisticsLag after the switch, and always when
// no switch is noted.
func TestSettled(t *testing.T) {
	t.Parallel()
	switched := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		now, switched time.Time
		want          bool
	}{
		"no switch noted":       {now: switched, want: true},
		"at the switch":         {now: switched, switched: switched, want: false},
		"just before the lag":   {now: switched.Add(broker.StatisticsLag - time.Millisecond), switched: switched, want: false},
		"the lag after":         {now: switched.Add(broker.StatisticsLag), switched: switched, want: true},
		"long after the switch": {now: switched.Add(time.Hour), switched: switched, want: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := Settled(tt.now, tt.switched); got != tt.want {
				t.Errorf("Settled(%s after the switch) = %t, want %t", tt.now.Sub(tt.switched), got, tt.want)
			}
		})
	}
}

// TestCalledEmpty checks which generations a plan may call empty from the
// last refresh's statistics.
func TestCalledEmpty(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		messages []int64
		settled  bool
		want     []topology.Generation
	}{
		"settled: every generation that counts none":       {messages: []int64{0, 0}, settled: true, want: []topology.Generation{g1, g2}},
		"switch: not the last one before the lag":          {messages: []int64{0, 0}, want: []topology.Generation{g1}},
		"keep: none that counts a message":                 {messages: []int64{3, 0}, settled: true, want: []topology.Generation{g2}},
		"keep: the last one holds, the older one is empty": {messages: []int64{0, 7}, want: []topology.Generation{g1}},
		"none empty": {messages: []int64{1, 1}, settled: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, CalledEmpty([]topology.Generation{g1, g2}, tt.messages, tt.settled)); diff != "" {
				t.Errorf("called empty (-want +got):\n%s", diff)
			}
		})
	}
}
