package broker_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// turnsCluster is a fake management API of one cluster, served at as many
// endpoints as the test likes, that deletes whatever it is asked to and
// records how many quorum queue deletions were in flight at most.
type turnsCluster struct {
	identity brokertest.Identity
	// hold is how long each queue deletion takes.
	hold time.Duration
	// deleting, when set, is sent each queue's name as its deletion arrives.
	deleting chan string
	// released, when set, holds each queue deletion until it is closed.
	released chan struct{}
	// overviews, when set, is signalled as each overview is answered.
	overviews chan struct{}

	mu               sync.Mutex
	inFlight, most   int
	deleted, entered int
	// checked are the queues read but not yet deleted: their deletions
	// check ahead of the turn; mostChecked is the most at once.
	checked     map[string]bool
	mostChecked int
}

// emptyQuorumQueue is how the fake shows each of its queues: an empty
// quorum queue of RabbitMQ 4.3, which a check peeks at.
const emptyQuorumQueue = `{"name":%q,"type":"quorum","arguments":{"x-queue-type":"quorum"},"leader":"rabbit@localhost",` +
	`"consumers":0,"messages":0,"messages_ready":0,"messages_unacknowledged":0,"reductions":1}`

// serveCheck answers a check's read of a queue, or its peek (an empty
// queue), and tells whether r was one.
func (f *turnsCluster) serveCheck(w http.ResponseWriter, r *http.Request, queue string) bool {
	if strings.HasSuffix(queue, "/get") && r.Method == http.MethodPost {
		_, _ = w.Write([]byte(`[]`))
		return true
	}
	if r.Method != http.MethodGet || strings.Contains(queue, "/") {
		return false
	}
	f.mu.Lock()
	if f.checked == nil {
		f.checked = map[string]bool{}
	}
	f.checked[queue] = true
	f.mostChecked = max(f.mostChecked, len(f.checked))
	f.mu.Unlock()
	_, _ = fmt.Fprintf(w, emptyQuorumQueue, queue)
	return true
}

// newTurnsCluster is a cluster of a name of its own, so that the turns of
// other tests, in this process or another, never meet its.
func newTurnsCluster() *turnsCluster {
	return &turnsCluster{identity: brokertest.Identity{Version: "4.3.6", Node: "rabbit@localhost",
		ClusterName: "rabbit@turns-" + acctest.RandString(12), Flags: []string{"rabbitmq_4.3.0"}}}
}

func (f *turnsCluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.identity.Serve(w, r) {
		if f.overviews != nil && r.URL.Path == "/api/overview" {
			f.overviews <- struct{}{}
		}
		return
	}
	queue, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/queues/%2F/")
	if ok && f.serveCheck(w, r, queue) {
		return
	}
	if ok && r.Method == http.MethodDelete && r.URL.Query().Has("if-unused") {
		// As RabbitMQ 4 answers for a quorum queue.
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"bad_request","reason":"if-unused and if-empty flag set are not supported"}`))
		return
	}
	if ok && r.Method == http.MethodDelete {
		f.mu.Lock()
		f.inFlight++
		f.entered++
		f.most = max(f.most, f.inFlight)
		f.mu.Unlock()
		if f.deleting != nil {
			f.deleting <- queue
		}
		if f.released != nil {
			<-f.released
		}
		time.Sleep(f.hold)
		f.mu.Lock()
		f.inFlight--
		f.deleted++
		delete(f.checked, queue)
		f.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// counts are the most queue deletions in flight at once, and how many
// were done.
func (f *turnsCluster) counts() (most, deleted int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.most, f.deleted
}

// endpoint serves the cluster at a new URL until the test ends.
func (f *turnsCluster) endpoint(t *testing.T) string {
	server := httptest.NewServer(f)
	t.Cleanup(server.Close)
	return server.URL
}

// testQuorumTeardown is the teardown of a quorum set of six levels, and
// how many queues it deletes.
func testQuorumTeardown(t *testing.T, name string) ([]topology.Change, int) {
	t.Helper()
	plan, err := topology.Plan(topology.Spec{Name: name, VHost: "/", Levels: 6, QueueType: topology.QueueTypeQuorum})
	if err != nil {
		t.Fatal(err)
	}
	teardown := topology.Teardown(plan)
	queues := 0
	for _, change := range teardown {
		if change.Kind == topology.DeleteQueue {
			queues++
		}
	}
	return teardown, queues
}

func testTurnsClient(t *testing.T, endpoint string) *broker.Client {
	t.Helper()
	client, err := broker.New(broker.Config{Endpoint: endpoint, DisableAMQPCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// TestQuorumDeletionsTakeTurnsAcrossClients deletes two quorum sets at once
// through two clients of one cluster, at two endpoints, as two provider
// aliases would: no two quorum queue deletions are ever in flight at once.
func TestQuorumDeletionsTakeTurnsAcrossClients(t *testing.T) {
	t.Parallel()
	cluster := newTurnsCluster()
	cluster.hold = 10 * time.Millisecond
	var wg sync.WaitGroup
	want := 0
	for _, name := range []string{"d", "e"} {
		teardown, queues := testQuorumTeardown(t, name)
		want += queues
		client := testTurnsClient(t, cluster.endpoint(t))
		wg.Go(func() {
			if err := client.Apply(t.Context(), "/", teardown, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most, deleted := cluster.counts(); most != 1 || deleted != want {
		t.Errorf("%d quorum queue deletions in flight at most, %d done; want 1 and %d", most, deleted, want)
	}
}

// TestQuorumChecksAheadOfTheTurnAreBounded deletes two quorum sets, each
// queue only once its check finds it empty, through two clients of one
// cluster: the deletions go one at a time, and no more than a few check
// ahead of the turn, however many the batches would run at once.
func TestQuorumChecksAheadOfTheTurnAreBounded(t *testing.T) {
	t.Parallel()
	cluster := newTurnsCluster()
	cluster.hold = 5 * time.Millisecond
	var wg sync.WaitGroup
	want := 0
	for _, name := range []string{"d", "e"} {
		teardown, queues := testQuorumTeardown(t, name)
		want += queues
		client := testTurnsClient(t, cluster.endpoint(t))
		wg.Go(func() {
			if err := client.Apply(t.Context(), "/", teardown, broker.ApplyOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	most, deleted := cluster.counts()
	cluster.mu.Lock()
	mostChecked := cluster.mostChecked
	cluster.mu.Unlock()
	if most != 1 || deleted != want || mostChecked > broker.QuorumChecksAhead || mostChecked < 2 {
		t.Errorf("%d quorum queue deletions in flight at most, %d done, %d checking ahead at most; want 1, %d and 2 to %d",
			most, deleted, mostChecked, want, broker.QuorumChecksAhead)
	}
}

// quorumQueueDeletion is the deletion of one quorum queue.
func quorumQueueDeletion(name string) []topology.Change {
	queue := &topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
	return []topology.Change{{Kind: topology.DeleteQueue, Queue: queue}}
}

// TestQuorumCheckAheadWaitIsLogged deletes quorum queues of one cluster,
// each through a client of its own, while the first deletion is held in
// flight: the next deletions check their queues and wait for the turn,
// until every place ahead of it is taken; the one after them waits before
// its check, and says so, as the others say that they wait for the turn.
func TestQuorumCheckAheadWaitIsLogged(t *testing.T) {
	t.Parallel()
	cluster := newTurnsCluster()
	cluster.deleting = make(chan string, broker.QuorumChecksAhead+1)
	cluster.released = make(chan struct{})
	endpoint := cluster.endpoint(t)
	release := sync.OnceFunc(func() { close(cluster.released) }) // before the server closes
	t.Cleanup(release)
	var wg sync.WaitGroup
	deleteAs := func(name string) *logged {
		log := &logged{}
		client, err := broker.New(broker.Config{Endpoint: endpoint, DisableAMQPCounts: true, Logf: log.logf, Timeout: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		// A client that knows the broker refuses if-empty for a quorum queue
		// goes straight to its check; one that does not first waits for the
		// turn to send a guarded DELETE.
		if _, _, err := broker.LeaderCount(t.Context(), client, "/", "learning-"+name); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := client.Apply(t.Context(), "/", quorumQueueDeletion(name), broker.ApplyOptions{}); err != nil {
				t.Errorf("deleting %s: %v", name, err)
			}
		})
		return log
	}
	awaitLogged := func(log *logged, name, want string) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !strings.Contains(log.text(), want); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("hung: the deletion of %s never logged %q:\n%s", name, want, log.text())
			}
		}
	}
	deleteAs("held")
	if queue := <-cluster.deleting; queue != "held" {
		t.Fatalf("the first deletion sent is %s's", queue)
	}
	for i := 1; i < broker.QuorumChecksAhead; i++ {
		name := fmt.Sprintf("checked-%d", i)
		awaitLogged(deleteAs(name), name, "waiting for another quorum queue deletion")
	}
	awaitLogged(deleteAs("last"), "last", "waiting for other quorum queue deletions on this cluster to check")
	cluster.mu.Lock()
	checkedEarly := cluster.checked["last"]
	cluster.mu.Unlock()
	if checkedEarly {
		t.Error("the last deletion read its queue while every place ahead of the turn was taken")
	}
	release()
	wg.Wait()
	if _, deleted := cluster.counts(); deleted != broker.QuorumChecksAhead+1 {
		t.Errorf("%d queues deleted, want %d", deleted, broker.QuorumChecksAhead+1)
	}
}

// turnsChildEndpoint, in the environment, makes
// TestQuorumDeletionsTakeTurnsAcrossProcesses the second process: it
// deletes a quorum set through the fake at that endpoint.
const turnsChildEndpoint = "BROKER_TEST_TURNS_CHILD_ENDPOINT"

// TestQuorumDeletionsTakeTurnsAcrossProcesses deletes two quorum sets of
// one cluster at once from two processes, as two terraform runs would: this
// test's, and the test binary run again as a second process (the child),
// both through one fake. The parent begins once the child's first queue
// deletion is in flight; no two are ever in flight at once.
func TestQuorumDeletionsTakeTurnsAcrossProcesses(t *testing.T) {
	if endpoint := os.Getenv(turnsChildEndpoint); endpoint != "" {
		teardown, _ := testQuorumTeardown(t, "child")
		if err := testTurnsClient(t, endpoint).Apply(t.Context(), "/", teardown, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Parallel()
	cluster := newTurnsCluster()
	cluster.hold = 20 * time.Millisecond
	cluster.deleting = make(chan string, 64)
	_, childQueues := testQuorumTeardown(t, "child")
	teardown, queues := testQuorumTeardown(t, "parent")

	child := exec.Command(os.Args[0], "-test.run=^TestQuorumDeletionsTakeTurnsAcrossProcesses$", "-test.count=1")
	child.Env = append(os.Environ(), turnsChildEndpoint+"="+cluster.endpoint(t))
	var childOutput strings.Builder
	child.Stdout, child.Stderr = &childOutput, &childOutput
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	if first := <-cluster.deleting; !strings.HasPrefix(first, "child.") {
		t.Fatalf("the first queue deleted is %s, want one of the child's", first)
	}
	if err := testTurnsClient(t, cluster.endpoint(t)).Apply(t.Context(), "/", teardown, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
		t.Error(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("the second process: %v\n%s", err, childOutput.String())
	}
	if most, deleted := cluster.counts(); most != 1 || deleted != queues+childQueues {
		t.Errorf("%d quorum queue deletions in flight at most, %d done; want 1 and %d", most, deleted, queues+childQueues)
	}
}

// TestQuorumDeletionTurnWaitEndsWithContext cancels an Apply whose quorum
// queue deletion waits for the turn that another client of the cluster
// holds: the Apply returns the cancellation's cause while the other
// deletion is still in flight, and deletes nothing.
func TestQuorumDeletionTurnWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	cluster := newTurnsCluster()
	cluster.deleting = make(chan string, 2)
	cluster.released = make(chan struct{})
	cluster.overviews = make(chan struct{}, 8)
	holder := testTurnsClient(t, cluster.endpoint(t))
	log := &logged{}
	waiter, err := broker.New(broker.Config{Endpoint: cluster.endpoint(t), DisableAMQPCounts: true, Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	// Before the servers close, which waits for the held deletion.
	release := sync.OnceFunc(func() { close(cluster.released) })
	t.Cleanup(release)
	held := make(chan error, 1)
	go func() {
		held <- holder.Apply(t.Context(), "/", quorumQueueDeletion("held"), broker.ApplyOptions{ForceDeleteQueues: true})
	}()
	<-cluster.deleting // the holder's deletion is in flight, its turn taken
	testDrain(cluster.overviews)

	ctx, cancel := context.WithCancelCause(t.Context())
	cause := errors.New("interrupted")
	waited := make(chan error, 1)
	go func() {
		waited <- waiter.Apply(ctx, "/", quorumQueueDeletion("waiting"), broker.ApplyOptions{ForceDeleteQueues: true})
	}()
	testWaitingForTurn(t, cluster, waited)
	cancel(cause)
	if err := testReturned(t, waited); !errors.Is(err, cause) {
		t.Errorf("the waiting Apply returned %v, want the cancellation's cause", err)
	}
	if !strings.Contains(log.text(), "waiting for another quorum queue deletion") {
		t.Errorf("the waiting deletion did not log its wait:\n%s", log.text())
	}
	release()
	if err := <-held; err != nil {
		t.Errorf("the holder's Apply: %v", err)
	}
	if _, deleted := cluster.counts(); deleted != 1 {
		t.Errorf("%d queues deleted, want the holder's alone", deleted)
	}
}

// TestQuorumDeletionTurnWaitForAnotherProcessEndsWithContext cancels an
// Apply whose quorum queue deletion waits for the turn that a second
// process holds (its deletion held in flight by the fake): the Apply
// returns the cancellation's cause while the other process still deletes.
func TestQuorumDeletionTurnWaitForAnotherProcessEndsWithContext(t *testing.T) {
	if endpoint := os.Getenv(turnsChildEndpoint + "_HOLD"); endpoint != "" {
		queue := &topology.Queue{Name: "child.held", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
		change := []topology.Change{{Kind: topology.DeleteQueue, Queue: queue}}
		if err := testTurnsClient(t, endpoint).Apply(t.Context(), "/", change, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Parallel()
	cluster := newTurnsCluster()
	cluster.deleting = make(chan string, 2)
	cluster.released = make(chan struct{})
	cluster.overviews = make(chan struct{}, 8)
	child := exec.Command(os.Args[0], "-test.run=^TestQuorumDeletionTurnWaitForAnotherProcessEndsWithContext$", "-test.count=1")
	child.Env = append(os.Environ(), turnsChildEndpoint+"_HOLD="+cluster.endpoint(t))
	waiter := testTurnsClient(t, cluster.endpoint(t))
	release := sync.OnceFunc(func() { close(cluster.released) })
	t.Cleanup(release)
	t.Cleanup(func() { _ = child.Process.Kill() }) // only if the test failed before it ended
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = child.Stdout
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var childOutput strings.Builder
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		for lines := bufio.NewScanner(stdout); lines.Scan(); {
			childOutput.WriteString(lines.Text() + "\n")
		}
	}()
	<-cluster.deleting // the child's deletion is in flight, its turn taken
	testDrain(cluster.overviews)

	ctx, cancel := context.WithCancelCause(t.Context())
	cause := errors.New("interrupted")
	waited := make(chan error, 1)
	queue := &topology.Queue{Name: "parent.waiting", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
	go func() {
		waited <- waiter.Apply(ctx, "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: queue}},
			broker.ApplyOptions{ForceDeleteQueues: true})
	}()
	testWaitingForTurn(t, cluster, waited)
	cancel(cause)
	if err := testReturned(t, waited); !errors.Is(err, cause) {
		t.Errorf("the waiting Apply returned %v, want the cancellation's cause", err)
	}
	release()
	<-copied
	if err := child.Wait(); err != nil {
		t.Fatalf("the second process: %v\n%s", err, childOutput.String())
	}
	if _, deleted := cluster.counts(); deleted != 1 {
		t.Errorf("%d queues deleted, want the second process's alone", deleted)
	}
}

// testDrain empties signals of what came before.
func testDrain(signals chan struct{}) {
	for {
		select {
		case <-signals:
		default:
			return
		}
	}
}

// testWaitingForTurn returns once the waiting client has read the
// cluster's name and then, for a moment, neither finished nor sent its
// deletion: it waits for the turn. Anything else fails the test.
func testWaitingForTurn(t *testing.T, cluster *turnsCluster, waited chan error) {
	t.Helper()
	select {
	case <-cluster.overviews:
	case err := <-waited:
		t.Fatalf("the waiting Apply ended before it read the cluster's name: %v", err)
	case queue := <-cluster.deleting:
		t.Fatalf("the deletion of %s was sent while another deletion held the turn", queue)
	}
	select {
	case err := <-waited:
		t.Fatalf("the waiting Apply ended while another deletion held the turn: %v", err)
	case queue := <-cluster.deleting:
		t.Fatalf("the deletion of %s was sent while another deletion held the turn", queue)
	case <-time.After(50 * time.Millisecond):
	}
}

// testReturned is the error that an Apply sends on done; it fails the test
// when none comes, rather than hang it.
func testReturned(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled Apply has not returned")
		return nil
	}
}
