package brokertest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// setBroker is what a set needs of the broker (internal/delayset's Broker,
// spelled here so that this test does not import it): *broker.Client and
// the fake must both have it, with the same signatures.
type setBroker interface {
	ReadSetOf(ctx context.Context, vhost, name string, layout topology.Layout) (topology.Topology, error)
	ReadSetOfAnyLayout(ctx context.Context, vhost, name string) (topology.Topology, error)
	ReadSetNamed(ctx context.Context, vhost, name string, layout topology.Layout, known topology.Topology, opts broker.ReadOptions) (topology.Topology, error)
	Apply(ctx context.Context, vhost string, changes []topology.Change, opts broker.ApplyOptions) error
	HeldMessages(ctx context.Context, vhost string, queues []string) (map[string]int64, error)
	CountedMessages(ctx context.Context, vhost string, queues []string) (map[string]int64, error)
	ReadPlacements(ctx context.Context, vhost string, queues []string) (map[string]broker.Placement, error)
	Placements(vhost string, queues []string) map[string]broker.Placement
}

var (
	_ setBroker = (*broker.Client)(nil)
	_ setBroker = (*brokertest.Broker)(nil)
)

// planned is the plan of a small set of the default layout.
func planned(t *testing.T, name string, queueType topology.QueueType) topology.Topology {
	t.Helper()
	plan, err := topology.Plan(topology.Spec{Name: name, VHost: "/", Levels: 3, QueueType: queueType,
		Routes: []topology.Route{{Destination: name + ".target"}}})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// create applies what Diff orders to create plan on b, once the route's
// destination (planned) exists.
func create(t *testing.T, b *brokertest.Broker, name string, plan topology.Topology) {
	t.Helper()
	b.Declare(topology.Topology{VHost: plan.VHost, Queues: []topology.Queue{{Name: name + ".target"}}})
	if err := b.Apply(t.Context(), plan.VHost, topology.Diff(plan, topology.Topology{VHost: plan.VHost}), broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestApplyThenRead(t *testing.T) {
	t.Parallel()
	b := brokertest.New("/")
	plan := planned(t, "delay", topology.QueueTypeQuorum)
	create(t, b, "delay", plan)
	// Another set, and one whose name the pattern would match ignoring case.
	create(t, b, "delay2", planned(t, "delay2", topology.QueueTypeQuorum))

	read, err := b.ReadSetOf(t.Context(), "/", "delay", topology.LayoutDefault)
	if err != nil {
		t.Fatal(err)
	}
	if diff := topology.Diff(plan, read); len(diff) != 0 {
		t.Errorf("Diff(plan, read) = %v, want nothing", diff)
	}
	anyLayout, err := b.ReadSetOfAnyLayout(t.Context(), "/", "delay")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(read, anyLayout); d != "" {
		t.Errorf("ReadSetOfAnyLayout differs from ReadSetOf (-of +any):\n%s", d)
	}
	named, err := b.ReadSetNamed(t.Context(), "/", "delay", topology.LayoutDefault,
		topology.Topology{VHost: "/", Exchanges: plan.Exchanges[:1]}, broker.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(read, named); d != "" {
		t.Errorf("ReadSetNamed from the ingest differs from ReadSetOf (-of +named):\n%s", d)
	}
	if _, err := b.ReadSetOf(t.Context(), "other", "delay", topology.LayoutDefault); !errors.Is(err, broker.ErrVHostNotFound) {
		t.Errorf("ReadSetOf in a vhost that does not exist: %v, want ErrVHostNotFound", err)
	}

	queue := plan.Queues[0].Name
	if got := b.Placements("/", []string{queue, "nowhere"}); len(got) != 1 || got[queue].Leader != brokertest.DefaultNode {
		t.Errorf("Placements = %v, want %s on %s", got, queue, brokertest.DefaultNode)
	}
	b.SetPlacement("/", queue, broker.Placement{Leader: "rabbit@two"})
	if got, err := b.ReadPlacements(t.Context(), "/", []string{queue}); err != nil || got[queue].Leader != "rabbit@two" {
		t.Errorf("ReadPlacements = %v, %v, want %s on rabbit@two", got, err, queue)
	}

	if err := b.Apply(t.Context(), "/", topology.Teardown(read), broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if gone, err := b.ReadSetOf(t.Context(), "/", "delay", ""); err != nil || len(gone.Exchanges)+len(gone.Queues)+len(gone.Bindings) != 0 {
		t.Errorf("after the teardown: %v, %v, want nothing", gone, err)
	}
	if calls := b.CallsOf(brokertest.MethodApply); len(calls) != 3 || calls[2].VHost != "/" || len(calls[2].Changes) == 0 {
		t.Errorf("Apply calls = %v, want the three applies", calls)
	}
}

func TestApplyRefusesAQueueThatHoldsMessages(t *testing.T) {
	t.Parallel()
	b := brokertest.New("/")
	plan := planned(t, "delay", topology.QueueTypeClassic)
	create(t, b, "delay", plan)
	held := plan.Queues[1].Name
	b.Script("/", held, brokertest.Messages{Counted: []int64{0}, Held: []int64{2}})

	read, err := b.ReadSetOf(t.Context(), "/", "delay", "")
	if err != nil {
		t.Fatal(err)
	}
	err = b.Apply(t.Context(), "/", topology.Teardown(read), broker.ApplyOptions{})
	var notEmpty *broker.QueueNotEmptyError
	if !errors.As(err, &notEmpty) || notEmpty.Queue != held || notEmpty.Messages != 2 {
		t.Fatalf("Apply = %v, want a QueueNotEmptyError of %s with 2 messages", err, held)
	}
	after, _ := b.Topology("/")
	if len(after.Exchanges) == 0 {
		t.Error("the exchanges, deleted after the queues, are gone: want them kept after the refusal")
	}
	if _, err := b.ReadSetOf(t.Context(), "/", "delay", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := b.CountedMessages(t.Context(), "/", []string{held}); err != nil || len(got) != 0 {
		t.Errorf("CountedMessages = %v, %v, want nothing counted", got, err)
	}
	if got, err := b.HeldMessages(t.Context(), "/", []string{held, "nowhere"}); err != nil || got[held] != 2 || len(got) != 1 {
		t.Errorf("HeldMessages = %v, %v, want %s holding 2", got, err, held)
	}

	if err := b.Apply(t.Context(), "/", topology.Teardown(read), broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
		t.Fatalf("forced Apply: %v", err)
	}
	if after, _ := b.Topology("/"); len(after.Queues) != 1 { // the route's destination
		t.Errorf("after the forced teardown: %v, want only the destination queue", after.Queues)
	}
}

func TestScriptedAnswersChangeBetweenCalls(t *testing.T) {
	t.Parallel()
	b := brokertest.New("/")
	b.Declare(topology.Topology{VHost: "/", Queues: []topology.Queue{{Name: "q"}}})
	b.Script("/", "q", brokertest.Messages{Counted: []int64{3, 1, 0}})
	var got []int64
	for range 4 {
		counts, err := b.CountedMessages(t.Context(), "/", []string{"q"})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, counts["q"])
	}
	if d := cmp.Diff([]int64{3, 1, 0, 0}, got); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
	if _, err := b.HeldMessages(t.Context(), "gone", []string{"q"}); !errors.Is(err, broker.ErrVHostNotFound) {
		t.Errorf("HeldMessages in a vhost that does not exist: %v, want ErrVHostNotFound", err)
	}
}

func TestUncountedQueue(t *testing.T) {
	t.Parallel()
	b := brokertest.New("/")
	quorum := topology.Queue{Name: "q", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
	b.Declare(topology.Topology{VHost: "/", Queues: []topology.Queue{quorum, {Name: "empty"}}})
	b.Script("/", "q", brokertest.Messages{Uncounted: "no statistics yet"})

	held, err := b.HeldMessages(t.Context(), "/", []string{"q", "empty"})
	if !broker.IsUncounted(err) || broker.Uncounted(err)["q"] == nil || held["q"] != 1 || len(held) != 1 {
		t.Errorf("HeldMessages = %v, %v, want q uncounted, holding 1", held, err)
	}
	if counted, err := b.CountedMessages(t.Context(), "/", []string{"q"}); err != nil || len(counted) != 0 {
		t.Errorf("CountedMessages = %v, %v, want q counted by statistics, empty", counted, err)
	}
	err = b.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &quorum}}, broker.ApplyOptions{})
	var uncounted *broker.UncountedError
	if !errors.As(err, &uncounted) || uncounted.Queue != "q" {
		t.Errorf("deleting it: %v, want its UncountedError", err)
	}
	if _, found := b.Topology("/"); !found {
		t.Fatal("the vhost is gone")
	}
	if calls := b.CallsOf(brokertest.MethodHeldMessages); len(calls) != 1 || cmp.Diff([]string{"q", "empty"}, calls[0].Queues) != "" {
		t.Errorf("HeldMessages calls = %v", calls)
	}
}

func TestSetError(t *testing.T) {
	t.Parallel()
	b := brokertest.New("/")
	unreachable := &broker.UnreachableError{Endpoint: "http://localhost:15672", Err: errors.New("refused")}
	b.SetError(brokertest.MethodReadSetOf, unreachable)
	if _, err := b.ReadSetOf(t.Context(), "/", "delay", ""); !errors.Is(err, unreachable) {
		t.Errorf("ReadSetOf = %v, want the error set", err)
	}
	b.SetError(brokertest.MethodReadSetOf, nil)
	if _, err := b.ReadSetOf(t.Context(), "/", "delay", ""); err != nil {
		t.Errorf("ReadSetOf after the error was undone: %v", err)
	}
}
