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
		// exact is what the exact count without statistics finds; inexact:
		// it cannot count so.
		exact   map[string]int64
		inexact bool
		// wantExactWaits: how long the exact count may wait for statistics,
		// each time it is asked (not checked when nil).
		wantExactWaits []time.Duration

		wantCounts map[string]int64
		wantEmpty  []topology.Generation
		wantCalls  []call
	}{
		"switch, inexact: the generation just switched from is not checked exactly before the lag": {
			draining: []topology.Generation{g2}, switchedAgo: ago(2 * time.Second), inexact: true,
			wantCounts: map[string]int64{},
			wantCalls:  []call{{"exact", queuesIn(g2), 0}, {"counted", queuesIn(g2), 0}},
		},
		"switch: it is checked once the lag has passed since the switch": {
			draining: []topology.Generation{g2}, switchedAgo: ago(broker.StatisticsLag),
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g2},
			wantCalls:  []call{{"counted", queuesIn(g2), 0}, {"held", queuesIn(g2), 0}},
		},
		"switch, inexact: within the wait, the lag is waited out, then the generation checked": {
			draining: []topology.Generation{g2}, switchedAgo: ago(0), wait: time.Minute, inexact: true,
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g2},
			wantCalls: append(append([]call{{"exact", queuesIn(g2), 0}}, polls(queuesIn(g2), broker.StatisticsLag)...),
				call{"held", queuesIn(g2), broker.StatisticsLag}),
		},
		"switch, inexact: an older generation is checked while the one just switched from is not": {
			draining: []topology.Generation{g1, g2}, switchedAgo: ago(0), inexact: true,
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g1},
			wantCalls:  []call{{"exact", queuesIn(g2), 0}, {"counted", queuesIn(g1, g2), 0}, {"held", queuesIn(g1), 0}},
		},
		"switch, exact: the generation just switched from, found empty, is empty at once, waiting for nothing": {
			draining: []topology.Generation{g2}, switchedAgo: ago(3 * time.Second), wait: time.Minute,
			wantExactWaits: []time.Duration{broker.StatisticsLag - 3*time.Second}, // no longer than the statistics take to settle
			counted:        []map[string]int64{holding(1, g2)},                    // statistics that lag are not asked
			wantCounts:     map[string]int64{},
			wantEmpty:      []topology.Generation{g2},
			wantCalls:      []call{{"exact", queuesIn(g2), 0}},
		},
		"switch, exact: found empty, and the older generations are watched as settled": {
			draining: []topology.Generation{g1, g2}, switchedAgo: ago(0), wait: time.Minute,
			counted:    []map[string]int64{holding(2, g1), {}},
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g1, g2},
			wantCalls: []call{{"exact", queuesIn(g2), 0}, {"counted", queuesIn(g1), 0}, {"counted", queuesIn(g1), time.Second},
				{"held", queuesIn(g1), time.Second}},
		},
		"switch, exact: a message found keeps the generation, watched until the lag, then checked and kept": {
			draining: []topology.Generation{g2}, switchedAgo: ago(0), wait: time.Minute,
			exact:      map[string]int64{g2.Queues(spec.Name)[0]: 1},
			held:       map[string]int64{g2.Queues(spec.Name)[0]: 1},
			wantCounts: map[string]int64{g2.Queues(spec.Name)[0]: 1},
			wantCalls: append(append([]call{{"exact", queuesIn(g2), 0}}, polls(queuesIn(g2), broker.StatisticsLag)...),
				call{"held", queuesIn(g2), broker.StatisticsLag}),
		},
		"switch, exact: a message found keeps the generation, even with no wait": {
			draining: []topology.Generation{g2}, switchedAgo: ago(0), wantExactWaits: []time.Duration{0},
			exact:      map[string]int64{g2.Queues(spec.Name)[1]: 3},
			wantCounts: map[string]int64{},
			wantCalls:  []call{{"exact", queuesIn(g2), 0}, {"counted", queuesIn(g2), 0}},
		},
		"switch, exact: settled, the exact count without statistics is not asked": {
			draining: []topology.Generation{g2}, switchedAgo: ago(broker.StatisticsLag),
			exact:      map[string]int64{g2.Queues(spec.Name)[1]: 3},
			wantCounts: map[string]int64{},
			wantEmpty:  []topology.Generation{g2},
			wantCalls:  []call{{"counted", queuesIn(g2), 0}, {"held", queuesIn(g2), 0}},
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
			counter := &fakeCounter{clock: clock, counted: tt.counted, held: tt.held, exact: tt.exact, inexact: tt.inexact}
			var switched time.Time
			if tt.switchedAgo != nil {
				switched = clock.start.Add(-*tt.switchedAgo)
			}
			counts, empty, err := Empty(context.Background(), counter, clock, spec, tt.draining, tt.wait, switched)
			checkAnswer(t, counter, "counts", tt.wantCounts, counts, err, tt.wantCalls)
			if diff := cmp.Diff(tt.wantEmpty, empty); diff != "" {
				t.Errorf("empty generations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantExactWaits, counter.exactWaits); tt.wantExactWaits != nil && diff != "" {
				t.Errorf("the exact count's waits for statistics (-want +got):\n%s", diff)
			}
			if waited := clock.now.Sub(clock.start); waited > tt.wait {
				t.Errorf("waited %s, longer than the wait of %s", waited, tt.wait)
			}
		})
	}
}

func ago(d time.Duration) *time.Duration { return &d }
