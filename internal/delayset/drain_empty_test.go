package delayset

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestEmpty checks Empty's decisions, each against a fake counter and clock:
// when it switches to the exact check, how long it waits, which generations
// it calls empty for certain and which it keeps.
func TestEmpty(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		draining []topology.Generation
		wait     time.Duration
		// switchedAgo is how long before the start the last switch was;
		// none when unset.
		switchedAgo *time.Duration
		counted     []map[string]int64
		held        map[string]int64

		wantCounts map[string]int64
		wantEmpty  []topology.Generation
		wantCalls  []call
	}{
		"switch: the generation just switched from is not checked exactly before the lag": {
			draining: []topology.Generation{g2}, switchedAgo: ago(2 * time.Second),
			wantCounts: map[string]int64{},
			wantCalls:  []call{{"counted", queuesIn(g2), 0}},
		},
		"switch: it is checked once the lag has passed since the switch": {
			draining: []topology.Generation{g2}, switchedAgo: ago(broker.StatisticsLag),
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g2},
			wantCalls:  []call{{"counted", queuesIn(g2), 0}, {"held", queuesIn(g2), 0}},
		},
		"switch: within the wait, the lag is waited out, then the generation checked": {
			draining: []topology.Generation{g2}, switchedAgo: ago(0), wait: time.Minute,
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g2},
			wantCalls: append(polls(queuesIn(g2), broker.StatisticsLag),
				call{"held", queuesIn(g2), broker.StatisticsLag}),
		},
		"switch: an older generation is checked while the one just switched from is not": {
			draining: []topology.Generation{g1, g2}, switchedAgo: ago(0),
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g1},
			wantCalls:  []call{{"counted", queuesIn(g1, g2), 0}, {"held", queuesIn(g1), 0}},
		},
		"wait: the statistics count messages, then none within the wait: checked and empty": {
			draining: []topology.Generation{g1}, wait: time.Minute,
			counted:    []map[string]int64{holding(5, g1), holding(3, g1), {}},
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g1},
			wantCalls:  append(polls(queuesIn(g1), 2*time.Second), call{"held", queuesIn(g1), 2 * time.Second}),
		},
		"wait: still counting messages at the deadline: kept, not checked": {
			draining: []topology.Generation{g1}, wait: 2500 * time.Millisecond,
			counted:    []map[string]int64{holding(5, g1)},
			wantCounts: holding(5, g1),
			wantCalls: append(polls(queuesIn(g1), 2*time.Second),
				call{"counted", queuesIn(g1), 2500 * time.Millisecond}),
		},
		"wait: a wait of 0 counts once": {
			draining:   []topology.Generation{g1},
			counted:    []map[string]int64{holding(5, g1)},
			wantCounts: holding(5, g1),
			wantCalls:  []call{{"counted", queuesIn(g1), 0}},
		},
		"wait: ten minutes pass on the clock, not on the machine": {
			draining: []topology.Generation{g1}, wait: 10 * time.Minute,
			counted:    []map[string]int64{holding(1, g1)},
			wantCounts: holding(1, g1),
			wantCalls:  polls(queuesIn(g1), 10*time.Minute),
		},
		"keep: only the generation the statistics count empty is checked": {
			draining: []topology.Generation{g1, g2}, wait: 0,
			counted:    []map[string]int64{holding(4, g2)},
			wantCounts: holding(4, g2),
			wantEmpty:  []topology.Generation{g1},
			wantCalls:  []call{{"counted", queuesIn(g1, g2), 0}, {"held", queuesIn(g1), 0}},
		},
		"delete: the exact check finds nothing in either generation": {
			draining:   []topology.Generation{g1, g2},
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g1, g2},
			wantCalls:  []call{{"counted", queuesIn(g1, g2), 0}, {"held", queuesIn(g1, g2), 0}},
		},
		"refuse: the exact check finds a message the statistics missed": {
			draining:   []topology.Generation{g1, g2},
			held:       map[string]int64{g2.Queues(spec.Name)[1]: 1},
			wantCounts: map[string]int64{g2.Queues(spec.Name)[1]: 1},
			wantEmpty:  []topology.Generation{g1},
			wantCalls:  []call{{"counted", queuesIn(g1, g2), 0}, {"held", queuesIn(g1, g2), 0}},
		},
		"nothing drains: nothing is asked": {
			wait: time.Minute,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			counter := &fakeCounter{clock: clock, counted: tt.counted, held: tt.held}
			var switched time.Time
			if tt.switchedAgo != nil {
				switched = clock.start.Add(-*tt.switchedAgo)
			}
			counts, empty, err := Empty(context.Background(), counter, clock, spec, tt.draining, tt.wait, switched)
			checkAnswer(t, counter, "counts", tt.wantCounts, counts, err, tt.wantCalls)
			if diff := cmp.Diff(tt.wantEmpty, empty); diff != "" {
				t.Errorf("empty generations (-want +got):\n%s", diff)
			}
			if waited := clock.now.Sub(clock.start); waited > tt.wait {
				t.Errorf("waited %s, longer than the wait of %s", waited, tt.wait)
			}
		})
	}
}

func ago(d time.Duration) *time.Duration { return &d }
