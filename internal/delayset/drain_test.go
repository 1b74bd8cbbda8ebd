package delayset

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestErrors checks that the counter's errors, and a cancelled context
// while Empty waits, end the decisions with that error.
func TestErrors(t *testing.T) {
	t.Parallel()
	broken := errors.New("broker unreachable")
	tests := map[string]struct {
		counter func(*fakeClock) *fakeCounter
		frozen  bool
		cancel  bool
		decide  func(context.Context, *fakeCounter, *fakeClock) error
	}{
		"Counted: the statistics fail": {
			counter: func(c *fakeClock) *fakeCounter {
				return &fakeCounter{clock: c, countedErrs: map[int]error{0: broken}}
			},
			decide: func(ctx context.Context, f *fakeCounter, _ *fakeClock) error {
				_, err := Counted(ctx, f, spec, []topology.Generation{g1})
				return err
			},
		},
		"Keep: the exact count fails": {
			counter: func(c *fakeClock) *fakeCounter { return &fakeCounter{clock: c, heldErr: broken} },
			decide: func(ctx context.Context, f *fakeCounter, _ *fakeClock) error {
				_, err := Keep(ctx, f, spec, spec, []topology.Generation{g1})
				return err
			},
		},
		"Empty: the first statistics fail": {
			counter: func(c *fakeClock) *fakeCounter {
				return &fakeCounter{clock: c, countedErrs: map[int]error{0: broken}}
			},
			decide: emptyError,
		},
		"Empty: the statistics fail while it waits": {
			counter: func(c *fakeClock) *fakeCounter {
				return &fakeCounter{clock: c, counted: []map[string]int64{holding(1, g1)}, countedErrs: map[int]error{3: broken}}
			},
			decide: emptyError,
		},
		"Empty: the exact check fails": {
			counter: func(c *fakeClock) *fakeCounter { return &fakeCounter{clock: c, heldErr: broken} },
			decide:  emptyError,
		},
		"Empty: the context ends while it waits": {
			counter: func(c *fakeClock) *fakeCounter {
				return &fakeCounter{clock: c, counted: []map[string]int64{holding(1, g1)}}
			},
			frozen: true,
			cancel: true,
			decide: emptyError,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tt.cancel {
				cancel(broken)
			}
			clock := newFakeClock()
			clock.frozen = tt.frozen
			if err := tt.decide(ctx, tt.counter(clock), clock); !errors.Is(err, broken) {
				t.Errorf("error = %v, want %v", err, broken)
			}
		})
	}
}

func emptyError(ctx context.Context, f *fakeCounter, clock *fakeClock) error {
	counts, empty, err := Empty(ctx, f, clock, spec, []topology.Generation{g1}, time.Minute, time.Time{})
	if counts != nil || empty != nil {
		return errors.New("counts or generations returned with the error")
	}
	return err
}

// TestCountedAsksOnce checks that Counted asks the statistics about every
// queue of the draining generations in one call, and nothing when none
// drains.
func TestCountedAsksOnce(t *testing.T) {
	t.Parallel()
	counter := &fakeCounter{clock: newFakeClock(), counted: []map[string]int64{holding(2, g1, g2)}}
	got, err := Counted(context.Background(), counter, spec, []topology.Generation{g1, g2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(holding(2, g1, g2), got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got, err := Counted(context.Background(), counter, spec, nil); err != nil || got != nil {
		t.Errorf("Counted of no generation = %v, %v; want nil, nil", got, err)
	}
	want := []call{{"counted", queuesIn(g1, g2), 0}}
	if diff := cmp.Diff(want, counter.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestRefreshed checks a refresh's counts: the statistics where they count
// messages, the exact count where they count none in a generation a plan
// would call empty, and no exact check of the generation switched from last
// before its statistics settle.
func TestRefreshed(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		counted, held map[string]int64
		settled       bool
		want          map[string]int64
		wantCalls     []call
	}{
		"the statistics count every generation: no exact check": {
			counted: holding(2, g1, g2), held: holding(5, g1, g2), settled: true,
			want:      holding(2, g1, g2),
			wantCalls: []call{{"counted", queuesIn(g1, g2), 0}},
		},
		"a generation the statistics count nothing in is counted exactly": {
			// Its messages moved from one queue to the next, whose
			// statistics have not counted them yet.
			counted: holding(2, g1), held: holding(20, g2), settled: true,
			want:      mergeCounts(holding(2, g1), holding(20, g2)),
			wantCalls: []call{{"counted", queuesIn(g1, g2), 0}, {"held", queuesIn(g2), 0}},
		},
		"an empty generation stays empty": {
			counted: holding(2, g1), settled: true,
			want:      holding(2, g1),
			wantCalls: []call{{"counted", queuesIn(g1, g2), 0}, {"held", queuesIn(g2), 0}},
		},
		"the generation switched from last, before its statistics settle": {
			counted: nil, held: holding(20, g1, g2), settled: false,
			want:      holding(20, g1),
			wantCalls: []call{{"counted", queuesIn(g1, g2), 0}, {"held", queuesIn(g1), 0}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			counter := &fakeCounter{clock: newFakeClock(), counted: []map[string]int64{tt.counted}, held: tt.held}
			got, err := Refreshed(t.Context(), counter, spec, []topology.Generation{g1, g2}, tt.settled)
			checkAnswer(t, counter, "counts", tt.want, got, err, tt.wantCalls)
		})
	}
}

func mergeCounts(counts ...map[string]int64) map[string]int64 {
	merged := map[string]int64{}
	for _, c := range counts {
		maps.Copy(merged, c)
	}
	return merged
}

// TestUncountedQueuesHold checks that a queue the broker cannot count (see
// broker.UncountedError) holds a message for every decision: its
// generation is kept, never called empty, and Empty waits for it until its
// wait runs out.
func TestUncountedQueuesHold(t *testing.T) {
	t.Parallel()
	uncounted := g1.Queues(spec.Name)[:1]
	counter := &fakeCounter{clock: newFakeClock(), uncounted: uncounted}
	kept, err := Keep(context.Background(), counter, spec, spec, []topology.Generation{g1, g2})
	if err != nil || !slices.Equal(kept, []topology.Generation{g1}) {
		t.Errorf("Keep() = %v, %v; want g1 kept, g2 not", kept, err)
	}
	counts, empty, err := Empty(context.Background(), counter, counter.clock, spec, []topology.Generation{g1, g2}, 5*time.Second, time.Time{})
	if err != nil || !slices.Equal(empty, []topology.Generation{g2}) || counts[uncounted[0]] != 1 {
		t.Errorf("Empty() = %v, %v, %v; want g2 alone empty, %s counted as 1", counts, empty, err, uncounted[0])
	}
	if waited := counter.clock.now.Sub(counter.clock.start); waited != 5*time.Second {
		t.Errorf("Empty waited %s, want its whole wait, 5s: the uncounted queue holds a message", waited)
	}
	refreshed, err := Refreshed(context.Background(), counter, spec, []topology.Generation{g1}, true)
	if err != nil || refreshed[uncounted[0]] != 1 {
		t.Errorf("Refreshed() = %v, %v; want %s counted as 1", refreshed, err, uncounted[0])
	}
}
