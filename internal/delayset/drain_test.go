package delayset

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The set the tests drain: generation 3 is current; 1 and 2 drain, 2 the
// one switched from last. Each has two queues (levels 2, radix 2).
var (
	spec = topology.Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 2, Resolution: time.Millisecond,
		QueueType: topology.QueueTypeQuorum, DeadLetterStrategy: topology.AtLeastOnce, Generation: 3, FormatGeneration: 3}
	g1 = generation(1)
	g2 = generation(2)
	g3 = spec.CurrentGeneration()
)

func generation(n int) topology.Generation {
	g := spec.CurrentGeneration()
	g.Number, g.Format = n, n
	return g
}

// holding is the counts of generations each of whose queues holds n
// messages.
func holding(n int64, generations ...topology.Generation) map[string]int64 {
	counts := map[string]int64{}
	for _, g := range generations {
		for _, q := range g.Queues(spec.Name) {
			counts[q] = n
		}
	}
	return counts
}

// queuesIn is the queues of generations, in their order.
func queuesIn(generations ...topology.Generation) []string {
	var queues []string
	for _, g := range generations {
		queues = append(queues, g.Queues(spec.Name)...)
	}
	return queues
}

// fakeClock is a clock whose After advances it at once: nothing sleeps. A
// frozen one never fires.
type fakeClock struct {
	start, now time.Time
	frozen     bool
}

func newFakeClock() *fakeClock {
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	return &fakeClock{start: start, now: start}
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	if c.frozen {
		return nil
	}
	c.now = c.now.Add(d)
	fired := make(chan time.Time, 1)
	fired <- c.now
	return fired
}

// call is a question the counter was asked: which method, about which
// queues, and when on the clock (since its start).
type call struct {
	Method string
	Queues []string
	At     time.Duration
}

// fakeCounter answers from scripts: the statistics' answer to each call in
// turn (the last one stands for every later call), and the exact counts. It
// records every call.
type fakeCounter struct {
	clock       *fakeClock
	counted     []map[string]int64
	held        map[string]int64
	countedErrs map[int]error // by call, from 0
	heldErr     error
	// uncounted are queues the broker cannot count: both methods count
	// them as holding one message, and say so in an error beside the counts.
	uncounted []string
	calls     []call
}

// withUncounted adds f's uncounted queues among queues to counts, as
// broker.Client does.
func (f *fakeCounter) withUncounted(counts map[string]int64, queues []string) (map[string]int64, error) {
	var errs []error
	for _, q := range queues {
		if slices.Contains(f.uncounted, q) {
			counts[q] = 1
			errs = append(errs, &broker.UncountedError{VHost: "/", Queue: q, Version: "4.0.5", Reason: "another node leads it"})
		}
	}
	return counts, errors.Join(errs...)
}

func (f *fakeCounter) record(method string, queues []string) int {
	f.calls = append(f.calls, call{Method: method, Queues: slices.Clone(queues), At: f.clock.now.Sub(f.clock.start)})
	n := 0
	for _, c := range f.calls {
		if c.Method == method {
			n++
		}
	}
	return n - 1
}

// answer is the script's counts of queues, as the broker answers: a new
// map, with the queues that hold messages.
func answer(script map[string]int64, queues []string) map[string]int64 {
	counts := map[string]int64{}
	for _, q := range queues {
		if n := script[q]; n > 0 {
			counts[q] = n
		}
	}
	return counts
}

func (f *fakeCounter) CountedMessages(_ context.Context, _ string, queues []string) (map[string]int64, error) {
	i := f.record("counted", queues)
	if err := f.countedErrs[i]; err != nil {
		return nil, err
	}
	if len(f.counted) == 0 {
		return f.withUncounted(answer(nil, queues), queues)
	}
	return f.withUncounted(answer(f.counted[min(i, len(f.counted)-1)], queues), queues)
}

func (f *fakeCounter) HeldMessages(_ context.Context, _ string, queues []string) (map[string]int64, error) {
	f.record("held", queues)
	if f.heldErr != nil {
		return nil, f.heldErr
	}
	return f.withUncounted(answer(f.held, queues), queues)
}

// checkAnswer stops the test at err, and reports how got, the answer a
// decision gave (what says which), differs from want, and how the questions
// it asked the counter differ from wantCalls.
func checkAnswer[T any](t *testing.T, counter *fakeCounter, what string, want, got T, err error, wantCalls []call) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
	if diff := cmp.Diff(wantCalls, counter.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// polls is the statistics' calls about queues every second from the start
// until to, the way Empty watches.
func polls(queues []string, to time.Duration) []call {
	var calls []call
	for at := time.Duration(0); at <= to; at += time.Second {
		calls = append(calls, call{Method: "counted", Queues: queues, At: at})
	}
	return calls
}

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
