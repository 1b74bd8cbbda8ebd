package delayset

import (
	"context"
	"errors"
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
	// exact is what ExactMessages finds; inexact makes it count every
	// queue as uncounted, as where only statistics still to come could.
	exact   map[string]int64
	inexact bool
	// exactWaits is how long each ExactMessages call might wait for statistics.
	exactWaits []time.Duration
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

func (f *fakeCounter) ExactMessages(_ context.Context, _ string, queues []string, wait time.Duration) (map[string]int64, error) {
	f.record("exact", queues)
	f.exactWaits = append(f.exactWaits, wait)
	if f.inexact {
		f.uncounted = append(f.uncounted, queues...)
		defer func() { f.uncounted = f.uncounted[:len(f.uncounted)-len(queues)] }()
	}
	return f.withUncounted(answer(f.exact, queues), queues)
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
