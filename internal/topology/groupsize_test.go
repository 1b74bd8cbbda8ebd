package topology

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// groupSizeSpec is a quorum set of radix 16 whose TTL queues have replicas
// on size nodes.
func groupSizeSpec(size int) Spec {
	return Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond,
		QueueLeaderLocator: LeaderLocatorBalanced, QuorumInitialGroupSize: size,
		Routes: []Route{{Destination: "orders", Key: "orders"}}}
}

// TestGroupSizeOnTheTTLQueues checks where the argument goes: on every TTL
// queue of a quorum set, as an integer, in their lines too, and never on the
// parking lot, whose arguments outlive the set's changes.
func TestGroupSizeOnTheTTLQueues(t *testing.T) {
	t.Parallel()
	planned := mustPlan(t, groupSizeSpec(3))
	for _, q := range planned.Queues {
		want := 3
		if q.Name == "delay.unroutable" {
			want = 0
		}
		if q.Arguments.QuorumInitialGroupSize != want {
			t.Errorf("%s: x-quorum-initial-group-size %d, want %d", q.Name, q.Arguments.QuorumInitialGroupSize, want)
		}
	}
	wantLine := `delay.r16.00.1: x-queue-type "quorum", x-message-ttl 100, x-dead-letter-exchange "delay.r16.00.done", ` +
		`x-dead-letter-strategy "at-least-once", x-overflow "reject-publish", x-queue-leader-locator "balanced", x-quorum-initial-group-size 3`
	if got := planned.Queues[0].String(); got != wantLine {
		t.Errorf("line:\n%s\nwant:\n%s", got, wantLine)
	}
	if got := mustPlan(t, groupSizeSpec(0)).Queues[0].String(); strings.Contains(got, ArgQuorumInitialGroupSize) {
		t.Errorf("a set without a group size declares one: %s", got)
	}
}

// TestGroupSizeDiff checks that a queue with another group size is
// replaced, as the broker cannot change it in place, with the reason.
func TestGroupSizeDiff(t *testing.T) {
	t.Parallel()
	desired := mustPlan(t, groupSizeSpec(2))
	tests := map[string]struct {
		actualSize int
		want       []string
	}{
		"same size": {actualSize: 2},
		"3 to 2": {actualSize: 3, want: []string{
			"delete_queue delay.r16.00.1: x-quorum-initial-group-size 3 → 2: queue arguments cannot change in place",
			"create_queue delay.r16.00.1: re-created with x-quorum-initial-group-size 2",
		}},
		"none to 2": {actualSize: 0, want: []string{
			"delete_queue delay.r16.00.1: x-quorum-initial-group-size (none) → 2: queue arguments cannot change in place",
			"create_queue delay.r16.00.1: re-created with x-quorum-initial-group-size 2",
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			actual := editTopology(desired, func(top *Topology) {
				queueNamed(top, "delay.r16.00.1").Arguments.QuorumInitialGroupSize = tc.actualSize
			})
			var got []string
			for _, line := range changeLines(Diff(desired, actual)) {
				if strings.Contains(line, "_queue ") {
					got = append(got, line)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("queue changes (-want +got):\n%s", d)
			}
		})
	}
}

// TestGroupSizeInfer checks that import reads the size back from the level
// queues, and refuses queues that disagree on it.
func TestGroupSizeInfer(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 1, 2, 5} {
		spec := groupSizeSpec(size)
		got, err := Infer("delay", mustPlan(t, spec))
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if d := cmp.Diff(mustResolve(t, spec), got); d != "" {
			t.Errorf("size %d: Infer(Plan) differs from Resolve (-want +got):\n%s", size, d)
		}
	}
	disagreeing := editTopology(mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 2, QuorumInitialGroupSize: 3}), func(top *Topology) {
		queueNamed(top, "delay.level.01").Arguments.QuorumInitialGroupSize = 0
	})
	_, err := Infer("delay", disagreeing)
	var inferErr *InferError
	want := []string{"the level queues disagree on x-quorum-initial-group-size: delay.level.00 is 3; delay.level.01 is none"}
	if !errors.As(err, &inferErr) || !cmp.Equal(inferErr.Reasons, want) {
		t.Errorf("Infer of queues that disagree = %v, want the reasons %q", err, want)
	}
}

// TestGroupSizeChangeDrains checks that a change of the size is a new
// generation of the same key format, beside which the old one drains with
// its own size, and that a draining queue of another size drains as it is.
func TestGroupSizeChangeDrains(t *testing.T) {
	t.Parallel()
	current := mustResolve(t, groupSizeSpec(3))
	next, err := NextGeneration(groupSizeSpec(2), current, nil)
	if err != nil {
		t.Fatal(err)
	}
	if next.Generation != 1 || next.FormatGeneration != 0 {
		t.Fatalf("a new size: generation %d with the exchanges of %d, want 1 with those of 0", next.Generation, next.FormatGeneration)
	}
	both, err := PlanGenerations(next, []Generation{current.CurrentGeneration()})
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[int]int{} // size → queues
	for _, q := range both.Queues {
		sizes[q.Arguments.QuorumInitialGroupSize]++
	}
	if want := map[int]int{3: 30, 2: 30, 0: 1}; !cmp.Equal(sizes, want) {
		t.Errorf("queues by size = %v, want %v (each generation its own, the parking lot none)", sizes, want)
	}
	spec, draining, err := InferGenerations("delay", both)
	if err != nil {
		t.Fatal(err)
	}
	if spec.QuorumInitialGroupSize != 2 || len(draining) != 1 || draining[0].QuorumInitialGroupSize != 3 {
		t.Errorf("InferGenerations: current size %d, draining %+v; want 2, and one generation of 3", spec.QuorumInitialGroupSize, draining)
	}
}
