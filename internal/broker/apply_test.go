package broker_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// quorumDeletionBroker answers the requests of a quorum queue's deletion,
// as RabbitMQ 4.3.6, where a peek is no delivery (brokertest.Identity):
// it refuses if-empty as RabbitMQ does, and serves canned statistics of the
// queue and peek answers. It serves no listing: the check must read the
// queue alone.
type quorumDeletionBroker struct {
	statistics       string // the queue's own statistics, a JSON object; "": the queue is missing (404)
	statisticsStatus int    // when set, the status of the statistics read, with an error answer
	peekStatus       int
	peekAnswer       string

	mu       sync.Mutex
	requests []string // "METHOD path?query"
	peekBody string
}

func (f *quorumDeletionBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if (brokertest.Identity{}).Serve(w, r) {
		return // not recorded: the client learns its broker once (TestCheckRuleLearnedOnce)
	}
	body, _ := io.ReadAll(r.Body)
	path := r.URL.EscapedPath()
	f.mu.Lock()
	request := r.Method + " " + path
	if r.Method != http.MethodGet && r.URL.RawQuery != "" {
		request += "?" + r.URL.RawQuery
	}
	f.requests = append(f.requests, request)
	if r.Method == http.MethodPost {
		f.peekBody = string(body)
	}
	f.mu.Unlock()

	switch {
	case r.Method == http.MethodDelete && r.URL.Query().Get("if-empty") == "true":
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"bad_request","reason":"cannot delete queue 'q' in vhost '/'. queue.delete operations with if-empty flag set are not supported by quorum queues"}`)
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && path == "/api/queues/%2F/q" && f.statisticsStatus != 0:
		w.WriteHeader(f.statisticsStatus)
		_, _ = io.WriteString(w, `{"error":"internal","reason":"boom"}`)
	case r.Method == http.MethodGet && path == "/api/queues/%2F/q" && f.statistics != "":
		_, _ = io.WriteString(w, f.statistics)
	case r.Method == http.MethodGet && path == "/api/vhosts/%2F":
		_, _ = io.WriteString(w, `{"name":"/"}`)
	case r.Method == http.MethodPost && path == "/api/queues/%2F/q/get":
		w.WriteHeader(f.peekStatus)
		_, _ = io.WriteString(w, f.peekAnswer)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"Object Not Found","reason":"Not Found"}`)
	}
}

// TestApplyDeletesAQuorumQueueOnlyIfStatisticsAndPeekFindNothing checks the
// requests of a quorum queue's deletion, one by one: the check reads the
// statistics of that queue alone, never a listing of its vhost.
func TestApplyDeletesAQuorumQueueOnlyIfStatisticsAndPeekFindNothing(t *testing.T) {
	t.Parallel()
	const (
		ifEmpty    = "DELETE /api/queues/%2F/q?if-empty=true&if-unused=true"
		statistics = "GET /api/queues/%2F/q"
		vhost      = "GET /api/vhosts/%2F"
		peek       = "POST /api/queues/%2F/q/get"
		unguarded  = "DELETE /api/queues/%2F/q"
		emptyStats = `{"name":"q","type":"quorum","messages_ready":0,"messages_unacknowledged":0,"messages_dlx":0}`
		notFound   = `{"error":"not_found","reason":"NOT_FOUND - no queue 'q' in vhost '/'"}`
	)
	tests := map[string]struct {
		force            bool
		statistics       string
		statisticsStatus int
		peekStatus       int
		peekAnswer       string
		wantRequests     []string
		wantMessages     int64 // of the *QueueNotEmptyError; 0: none
		wantStale        int64 // of an *UncountedError: what lagging statistics count
		wantErr          string
	}{
		"both find nothing": {
			statistics: emptyStats, peekStatus: http.StatusOK, peekAnswer: `[]`,
			wantRequests: []string{ifEmpty, statistics, peek, unguarded},
		},
		"the statistics count unacknowledged and dead-lettering messages": {
			// Only they see such messages, and they lag: the queue may hold them.
			statistics: `{"name":"q","type":"quorum","messages_ready":0,"messages_unacknowledged":2,"messages_dlx":1}`,
			peekStatus: http.StatusOK, peekAnswer: `[]`,
			wantRequests: []string{ifEmpty, statistics, peek}, wantStale: 3,
		},
		"the peek finds a message the statistics miss": {
			statistics: emptyStats, peekStatus: http.StatusOK,
			peekAnswer:   `[{"payload":"x","payload_encoding":"string","message_count":4,"redelivered":false}]`,
			wantRequests: []string{ifEmpty, statistics, peek}, wantMessages: 5,
		},
		"the peek, not the lagging statistics, counts ready messages": {
			statistics: `{"name":"q","type":"quorum","messages_ready":7,"messages_unacknowledged":0,"messages_dlx":0}`,
			peekStatus: http.StatusOK, peekAnswer: `[{"payload":"x","message_count":2}]`,
			wantRequests: []string{ifEmpty, statistics, peek}, wantMessages: 3,
		},
		"ready messages the statistics still count have left": {
			statistics: `{"name":"q","type":"quorum","messages_ready":7,"messages_unacknowledged":0,"messages_dlx":0}`,
			peekStatus: http.StatusOK, peekAnswer: `[]`,
			wantRequests: []string{ifEmpty, statistics, peek, unguarded},
		},
		"a queue too new for the statistics is peeked": {
			statistics: `{"name":"q","type":"quorum"}`, peekStatus: http.StatusOK, peekAnswer: `[]`,
			wantRequests: []string{ifEmpty, statistics, peek, unguarded},
		},
		"a queue gone before the check is deleted already": {
			wantRequests: []string{ifEmpty, statistics, vhost},
		},
		"a queue gone before the peek is deleted already": {
			statistics: emptyStats, peekStatus: http.StatusNotFound, peekAnswer: notFound,
			wantRequests: []string{ifEmpty, statistics, peek, vhost},
		},
		"a failed statistics read deletes nothing": {
			statisticsStatus: http.StatusInternalServerError,
			wantRequests:     []string{ifEmpty, statistics}, wantErr: "checking it for messages failed",
		},
		"a failed peek deletes nothing": {
			statistics: emptyStats, peekStatus: http.StatusInternalServerError, peekAnswer: `{"error":"internal","reason":"boom"}`,
			wantRequests: []string{ifEmpty, statistics, peek}, wantErr: `looking for a message in queue "q"`,
		},
		"force deletes without looking": {
			force: true, wantRequests: []string{unguarded},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := &quorumDeletionBroker{statistics: tt.statistics, statisticsStatus: tt.statisticsStatus,
				peekStatus: tt.peekStatus, peekAnswer: tt.peekAnswer}
			client := brokertest.NewClient(t, fake, broker.Config{})
			queue := topology.Queue{Name: "q"}
			err := client.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{ForceDeleteQueues: tt.force})

			var notEmpty *broker.QueueNotEmptyError
			var stale *broker.UncountedError
			switch {
			case tt.wantMessages > 0:
				if !errors.As(err, &notEmpty) || notEmpty.Queue != "q" || notEmpty.Messages != tt.wantMessages {
					t.Errorf("Apply() error = %v, want a *QueueNotEmptyError for q with %d messages", err, tt.wantMessages)
				}
			case tt.wantStale > 0:
				if !errors.As(err, &stale) || stale.Messages != tt.wantStale || !strings.Contains(err.Error(), "may have left") {
					t.Errorf("Apply() error = %v, want an *UncountedError for q's %d messages counted by statistics alone", err, tt.wantStale)
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.As(err, &notEmpty) {
					t.Errorf("Apply() error = %v, want one saying %q", err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("Apply() error = %v, want nil", err)
			}
			if diff := gocmp.Diff(tt.wantRequests, fake.requests); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if slices.Contains(fake.requests, peek) {
				var body map[string]any
				if err := json.Unmarshal([]byte(fake.peekBody), &body); err != nil {
					t.Fatal(err)
				}
				want := map[string]any{"count": 1.0, "ackmode": "ack_requeue_true", "encoding": "auto", "truncate": 50.0}
				if diff := gocmp.Diff(want, body); diff != "" {
					t.Errorf("peek body (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// orderBroker serves the bindings of a topology and records the order of the
// requests that delete things.
type orderBroker struct {
	bindings map[string]string // binding path → JSON array of its bindings

	mu           sync.Mutex
	deletions    []string // "DELETE path", in arrival order
	declarations int      // exchanges and queues declared
	creations    []string // "start path" and "end path" of each binding created, in order
}

func (f *orderBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	switch r.Method {
	case http.MethodGet:
		if answer, ok := f.bindings[path]; ok {
			_, _ = io.WriteString(w, answer)
			return
		}
		http.NotFound(w, r)
	case http.MethodPost:
		if !strings.HasPrefix(path, "/api/bindings/") {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		f.creations = append(f.creations, "start "+path)
		f.mu.Unlock()
		time.Sleep(2 * time.Millisecond) // long enough for concurrent requests to overlap
		f.mu.Lock()
		f.creations = append(f.creations, "end "+path)
		f.mu.Unlock()
		w.Header().Set("Location", path+"/key")
		w.WriteHeader(http.StatusCreated)
	case http.MethodPut:
		f.mu.Lock()
		f.declarations++
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	case http.MethodDelete:
		f.mu.Lock()
		if strings.HasPrefix(path, "/api/bindings/") {
			path = path[:strings.LastIndex(path, "/")] // the properties key says no more than the routing key
		}
		f.deletions = append(f.deletions, r.Method+" "+path)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// newOrderClient serves newOrderBroker over HTTP and returns a client of it.
func newOrderClient(t *testing.T, plan topology.Topology) (*orderBroker, *broker.Client) {
	t.Helper()
	fake := newOrderBroker(t, plan)
	return fake, brokertest.NewClient(t, fake, broker.Config{})
}

func newOrderBroker(t *testing.T, plan topology.Topology) *orderBroker {
	t.Helper()
	type bindingJSON struct {
		RoutingKey    string `json:"routing_key"`
		PropertiesKey string `json:"properties_key"`
	}
	byPath := map[string][]bindingJSON{}
	for i, b := range plan.Bindings {
		kind := "/q/"
		if b.DestinationType == topology.DestinationExchange {
			kind = "/e/"
		}
		path := "/api/bindings/%2F/e/" + b.Source + kind + b.Destination
		byPath[path] = append(byPath[path], bindingJSON{RoutingKey: b.RoutingKey, PropertiesKey: fmt.Sprint("key", i)})
	}
	f := &orderBroker{bindings: map[string]string{}}
	for path, list := range byPath {
		encoded, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		f.bindings[path] = string(encoded)
	}
	return f
}

// TestApplyDeletesTheParkingLotLast checks that a destroy, as Diff orders it
// and Apply runs it in batches, keeps the binding into <name>.unroutable
// until every other queue is gone: a message that expires out of a level
// queue meanwhile is parked, not dropped.
func TestApplyDeletesTheParkingLotLast(t *testing.T) {
	t.Parallel()
	plan, err := topology.Plan(topology.Spec{Name: "d", VHost: "/", Levels: 3, Resolution: time.Second, QueueType: topology.QueueTypeClassic})
	if err != nil {
		t.Fatal(err)
	}
	names := topology.Names("d")
	parkingBinding := "DELETE /api/bindings/%2F/e/d.unroutable/q/d.unroutable"
	parkingQueue := "DELETE /api/queues/%2F/d.unroutable"
	levelQueues := []string{"DELETE /api/queues/%2F/d.level.00", "DELETE /api/queues/%2F/d.level.01", "DELETE /api/queues/%2F/d.level.02"}

	t.Run("destroy", func(t *testing.T) {
		t.Parallel()
		fake, client := newOrderClient(t, plan)
		changes := topology.Diff(topology.Topology{VHost: "/"}, plan)
		if err := client.Apply(t.Context(), "/", changes, broker.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		position := map[string]int{}
		for i, d := range fake.deletions {
			position[d] = i
		}
		firstQueue := len(fake.deletions)
		for _, q := range append(slices.Clone(levelQueues), parkingQueue) {
			firstQueue = min(firstQueue, position[q])
		}
		bindingDeletions := 0
		for i, d := range fake.deletions {
			if strings.HasPrefix(d, "DELETE /api/bindings/") && d != parkingBinding {
				bindingDeletions++
				if i > firstQueue {
					t.Errorf("%s came after a queue deletion", d)
				}
			}
		}
		if bindingDeletions != len(plan.Bindings)-1 {
			t.Errorf("%d other bindings deleted, want %d", bindingDeletions, len(plan.Bindings)-1)
		}
		parking, ok := position[parkingBinding]
		if !ok {
			t.Fatalf("the binding into %s was never deleted: %v", names.Unroutable(), fake.deletions)
		}
		for _, q := range levelQueues {
			if position[q] > parking {
				t.Errorf("%s came after the parking-lot binding's deletion", q)
			}
		}
		if position[parkingQueue] < parking {
			t.Errorf("the parking lot was deleted before its binding")
		}
		for _, e := range plan.Exchanges {
			if position["DELETE /api/exchanges/%2F/"+e.Name] < position[parkingQueue] {
				t.Errorf("exchange %s was deleted before the parking lot", e.Name)
			}
		}
		t.Logf("deletions in order:\n%s", strings.Join(fake.deletions, "\n"))
	})
}

// TestApplyOpensIngestLast checks that the bindings from the ingest, which
// let messages into the chain, start only once every other binding of the
// set has been created, although Apply creates bindings eight at a time.
func TestApplyOpensIngestLast(t *testing.T) {
	t.Parallel()
	plan, err := topology.Plan(topology.Spec{Name: "d", VHost: "/", Levels: 4, Resolution: time.Second,
		Routes: []topology.Route{{Destination: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	fake, client := newOrderClient(t, topology.Topology{VHost: "/"})
	var bindings []topology.Change
	for _, c := range topology.Diff(plan, topology.Topology{VHost: "/"}) {
		if c.Kind == topology.CreateBinding {
			bindings = append(bindings, c)
		}
	}
	if err := client.Apply(t.Context(), "/", bindings, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	fromIngest := "/api/bindings/%2F/e/" + topology.Names("d").Ingest() + "/"
	lastOtherEnd, firstIngestStart, ingestStarts := -1, len(fake.creations), 0
	for i, event := range fake.creations {
		start, isStart := strings.CutPrefix(event, "start ")
		switch {
		case isStart && strings.HasPrefix(start, fromIngest):
			firstIngestStart = min(firstIngestStart, i)
			ingestStarts++
		case !isStart && !strings.HasPrefix(strings.TrimPrefix(event, "end "), fromIngest):
			lastOtherEnd = i
		}
	}
	if ingestStarts != 5 || lastOtherEnd < 0 || firstIngestStart < lastOtherEnd {
		t.Errorf("%d ingest bindings, the first started at event %d, before the last other binding ended at %d:\n%s",
			ingestStarts, firstIngestStart, lastOtherEnd, strings.Join(fake.creations, "\n"))
	}
}

// closingServer serves handler, but closes the connection without an answer
// instead of serving a request that drop chooses by the count of the
// requests its connection has carried (1 for the first) and the count of
// the connections before it (0 for the first).
func closingServer(t *testing.T, handler http.Handler, drop func(connection, request int64) bool) (*broker.Client, *atomic.Int64) {
	t.Helper()
	type connectionState struct{ number, requests int64 }
	type connectionKey struct{}
	var connections, dropped atomic.Int64
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		state, ok := r.Context().Value(connectionKey{}).(*connectionState)
		if !ok {
			t.Error("a request without its connection's state")
			return
		}
		state.requests++ // HTTP/1.1: one request of a connection at a time
		if drop(state.number, state.requests) {
			dropped.Add(1)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close()
			return
		}
		handler.ServeHTTP(w, r)
	}))
	server.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connectionKey{}, &connectionState{number: connections.Add(1) - 1})
	}
	server.Start()
	t.Cleanup(server.Close)
	client, err := broker.New(broker.Config{Endpoint: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	return client, &dropped
}

// TestApplyResendsChangesOnClosedConnections checks that a connection the
// broker closes before answering costs no change: Apply creates and then
// deletes every object and binding of a set while the server closes, unanswered,
// the second request of every kept-alive connection (as an HTTP server whose
// keep-alive timeout ends as the client reuses the connection), or the first
// request of every other new connection (as a listener that restarts).
// A CI run on RabbitMQ 4.3.6 once failed a destroy so: 20 deletions, "EOF".
func TestApplyResendsChangesOnClosedConnections(t *testing.T) {
	t.Parallel()
	plan, err := topology.Plan(topology.Spec{Name: "d", VHost: "/", Levels: 4, Resolution: time.Second,
		QueueType: topology.QueueTypeClassic, Routes: []topology.Route{{Destination: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	empty := topology.Topology{VHost: "/"}
	create, destroy := topology.Diff(plan, empty), topology.Diff(empty, plan)
	for _, tc := range []struct {
		name string
		drop func(connection, request int64) bool
	}{
		{"kept-alive connection closed", func(_, request int64) bool { return request == 2 }},
		{"new connection closed", func(connection, request int64) bool { return request == 1 && connection%2 == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newOrderBroker(t, plan)
			client, dropped := closingServer(t, fake, tc.drop)
			for _, changes := range [][]topology.Change{create, destroy} {
				if err := client.Apply(t.Context(), "/", changes, broker.ApplyOptions{}); err != nil {
					t.Fatalf("Apply: %v", err)
				}
			}
			if dropped.Load() == 0 {
				t.Fatal("the server closed no connection: the test tests nothing")
			}
			bindingsCreated := 0
			for _, event := range fake.creations {
				if strings.HasPrefix(event, "end ") {
					bindingsCreated++
				}
			}
			objects := len(plan.Exchanges) + len(plan.Queues)
			if fake.declarations != objects || bindingsCreated != len(plan.Bindings) || len(fake.deletions) != len(destroy) {
				t.Errorf("%d of %d objects declared, %d of %d bindings created, %d of %d deletions (%d requests closed unanswered)",
					fake.declarations, objects, bindingsCreated, len(plan.Bindings), len(fake.deletions), len(destroy), dropped.Load())
			}
		})
	}
}

// TestApplyDeletesOneAtATime: the teardowns of two sets at once through one
// client delete each set's exchanges, bound to each other, one after
// another; their quorum queues one after another too, across both sets; and
// their classic queues as many at a time as Apply allows.
func TestApplyDeletesOneAtATime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		queueType    topology.QueueType
		queuesAtOnce func(int) bool
		queuesWanted string
	}{
		{topology.QueueTypeClassic, func(n int) bool { return n >= 2 }, "several"},
		{topology.QueueTypeQuorum, func(n int) bool { return n == 1 }, "1"},
	} {
		t.Run(string(tc.queueType), func(t *testing.T) {
			t.Parallel()
			var teardowns [][]topology.Change
			for _, name := range []string{"d", "e"} {
				plan, err := topology.Plan(topology.Spec{Name: name, VHost: "/", Levels: 6, QueueType: tc.queueType})
				if err != nil {
					t.Fatal(err)
				}
				teardowns = append(teardowns, topology.Teardown(plan))
			}
			var mu sync.Mutex
			inFlight, most := map[string]int{}, map[string]int{}
			client := brokertest.NewClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// "exchanges d" for set d's exchanges, "queues" for every set's queues
				parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/api/"), "/")
				kind := parts[0]
				if kind == "exchanges" && len(parts) > 2 {
					kind += " " + strings.SplitN(parts[2], ".", 2)[0]
				}
				if r.Method == http.MethodDelete {
					mu.Lock()
					inFlight[kind]++
					most[kind] = max(most[kind], inFlight[kind])
					mu.Unlock()
					time.Sleep(20 * time.Millisecond)
					mu.Lock()
					inFlight[kind]--
					mu.Unlock()
				}
				w.WriteHeader(http.StatusNoContent)
			}), broker.Config{})
			var wg sync.WaitGroup
			for _, teardown := range teardowns {
				wg.Go(func() {
					if err := client.Apply(t.Context(), "/", teardown, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if most["exchanges d"] != 1 || most["exchanges e"] != 1 || !tc.queuesAtOnce(most["queues"]) {
				t.Errorf("at most %d and %d exchange deletions of a set at once, want 1; %d queue deletions, want %s",
					most["exchanges d"], most["exchanges e"], most["queues"], tc.queuesWanted)
			}
		})
	}
}

// TestApplyDeclaresBalancedQueuesOneAtATime declares the queues of a set
// whose leaders the broker balances one at a time, so that each counts the
// ones before, and others as many at a time as Apply allows.
func TestApplyDeclaresBalancedQueuesOneAtATime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		locator topology.LeaderLocator
		alone   bool
	}{
		{topology.LeaderLocatorBalanced, true},
		{topology.LeaderLocatorClientLocal, false},
		{"", false},
	} {
		t.Run(cmp.Or(string(tc.locator), "none"), func(t *testing.T) {
			t.Parallel()
			plan, err := topology.Plan(topology.Spec{Name: "d", VHost: "/", Levels: 6, QueueLeaderLocator: tc.locator})
			if err != nil {
				t.Fatal(err)
			}
			var inFlight, most atomic.Int64
			client := brokertest.NewClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut && strings.HasPrefix(r.URL.EscapedPath(), "/api/queues/") {
					now := inFlight.Add(1)
					defer inFlight.Add(-1)
					for seen := most.Load(); now > seen && !most.CompareAndSwap(seen, now); seen = most.Load() {
					}
					time.Sleep(20 * time.Millisecond)
				}
				w.WriteHeader(http.StatusCreated)
			}), broker.Config{})
			var queues []topology.Change
			for _, c := range topology.Diff(plan, topology.Topology{VHost: "/"}) {
				if c.Kind == topology.CreateQueue {
					queues = append(queues, c)
				}
			}
			if err := client.Apply(t.Context(), "/", queues, broker.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			if alone := most.Load() == 1; alone != tc.alone {
				t.Errorf("at most %d of %d queue declarations at once; want one at a time: %t", most.Load(), len(queues), tc.alone)
			}
		})
	}
}

// TestDeletionWithoutPeek checks Apply's deletion of a quorum queue where a
// peek would count as a delivery: it deletes only on a count of 0 sampled
// after its check began — statistics whose reductions changed three times
// since its first read after the queue stopped taking messages (the first
// change may bring a sample taken before, and a read may show the second's
// reductions beside the first's counts), read twice, or
// the totals of the leader's node
// after their wait — and refuses on a count above 0 or on none it can
// trust. (Each answer list starts with the read before the check decides
// not to peek.)
func TestDeletionWithoutPeek(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		answers      []string
		wantMessages int64 // of a *QueueNotEmptyError
		wantReason   string
		wantDeleted  bool
	}{
		"fresh 0": {
			answers:     []string{statistics("0", "10"), statistics("0", "10"), statistics("0", "20"), statistics("0", "30"), statistics("0", "40")},
			wantDeleted: true,
		},
		"a torn read": {
			// The third change's first read shows the collection's new
			// reductions beside the counts of the one before; the row's
			// second read counts the message.
			answers: []string{statistics("0", "10"), statistics("0", "10"), statistics("0", "20"), statistics("0", "30"),
				statistics("0", "40"), statistics("1", "40")},
			wantMessages: 1,
		},
		"the second change's counts torn": {
			// The second change's reductions come beside the first's counts,
			// read twice: only the third change's counts are sampled after
			// the check began.
			answers: []string{statistics("0", "10"), statistics("0", "10"), statistics("0", "20"), statistics("0", "30"),
				statistics("0", "30"), statistics("1", "40")},
			wantReason: "may hold 1 message",
		},
		"stale 0": {
			// The first change still counts nothing: that sample was taken
			// before the check; the next one counts the message, which may
			// have left since.
			answers:    []string{statistics("0", "10"), statistics("0", "20"), statistics("1", "30")},
			wantReason: "may hold 1 message",
		},
		"no fresh sample": {
			answers:    []string{statistics("0", "10"), statistics("0", "20")},
			wantReason: "did not show a sample taken after the check began",
		},
		"a new queue's first statistics": {
			// They are the first change: two more prove a fresh sample.
			answers:     []string{noCountYet, noCountYet, statistics("0", "10"), statistics("0", "20"), statistics("0", "30")},
			wantDeleted: true,
		},
		"two changes": {
			// The counts beside the second may be the first's.
			answers:    []string{statistics("0", "10"), statistics("0", "20"), statistics("0", "30")},
			wantReason: "did not show a sample taken after the check began",
		},
		"a new queue's first statistics alone": {
			answers:    []string{noCountYet, statistics("0", "10")},
			wantReason: "did not show a sample taken after the check began",
		},
		"totals of the leader's node": {answers: []string{totals("0", "rabbit@a")}, wantDeleted: true},
		"totals count a message":      {answers: []string{totals("0", "rabbit@a"), totals("1", "rabbit@a")}, wantReason: "may hold 1 message"},
		"totals of another node":      {answers: []string{totals("0", "rabbit@b")}, wantReason: "does not lead the queue"},
		"the leader moves away": {
			answers:    []string{totals("0", "rabbit@a"), totals("0", "rabbit@b")},
			wantReason: "does not lead the queue",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := steppedClient(t, rabbit405, tt.answers...)
			queue := topology.Queue{Name: "q"}
			err := client.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{})
			var notEmpty *broker.QueueNotEmptyError
			var uncounted *broker.UncountedError
			switch {
			case tt.wantDeleted && err != nil:
				t.Errorf("Apply() error = %v, want the queue deleted", err)
			case tt.wantMessages > 0 && (!errors.As(err, &notEmpty) || notEmpty.Messages != tt.wantMessages):
				t.Errorf("Apply() error = %v, want a *QueueNotEmptyError with %d messages", err, tt.wantMessages)
			case tt.wantReason != "" && (!errors.As(err, &uncounted) || !strings.Contains(err.Error(), tt.wantReason)):
				t.Errorf("Apply() error = %v, want an *UncountedError saying %q", err, tt.wantReason)
			}
			if deleted := fake.Sent(deleteQ) == 1; deleted != tt.wantDeleted {
				t.Errorf("deleted = %v, want %v: %v", deleted, tt.wantDeleted, fake.Requests())
			}
			if n := fake.Sent(peekAtQ); n > 0 {
				t.Errorf("the deletion peeked %d times at a queue where a peek counts as a delivery", n)
			}
		})
	}
}

// TestDeletionWithoutPeekStopsArrivals: a queue that still has bindings
// when Apply deletes it (a replacement, whose deletion drops them) loses
// them before the no-peek check's first read, so that no message reaches it
// while the check waits; a queue the check refuses gets them back.
func TestDeletionWithoutPeekStopsArrivals(t *testing.T) {
	t.Parallel()
	bindings := `[{"source":"","destination":"q","destination_type":"queue","routing_key":"q","properties_key":"q"},
	              {"source":"x","destination":"q","destination_type":"queue","routing_key":"k","properties_key":"k","arguments":{"a":1}}]`
	for name, tt := range map[string]struct {
		answers      []string
		wantRequests []string // after the first read of q and the overview
	}{
		"found empty": {
			answers:      []string{statistics("0", "10"), statistics("0", "10"), statistics("0", "20"), statistics("0", "30"), statistics("0", "40")},
			wantRequests: []string{listQBindings, unbindXQ, readQ, readQ, readQ, readQ, readQ, deleteQ},
		},
		"found holding": {
			answers:      []string{statistics("0", "10"), statistics("0", "10"), statistics("1", "20")},
			wantRequests: []string{listQBindings, unbindXQ, readQ, readQ, rebindXQ},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := steppedClient(t, rabbit405, tt.answers...)
			fake.Bindings = bindings
			queue := topology.Queue{Name: "q"}
			_ = client.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{})
			// The check's place ahead of the turn learns the cluster first.
			want := append([]string{"DELETE /api/queues/%2F/q?if-empty=true&if-unused=true", readNodeOf, readQ, readNodeOf}, tt.wantRequests...)
			if diff := gocmp.Diff(want, fake.Requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCancelledCheckRestoresArrivals cancels an apply while the no-peek
// check of a queue it unbound waits for fresh statistics, as Ctrl-C does:
// the bindings come back all the same, on the restore's own deadline, and
// the queue is not deleted.
func TestCancelledCheckRestoresArrivals(t *testing.T) {
	t.Parallel()
	// Statistics that never prove a fresh 0: the check waits until cancelled.
	fake, client := steppedClient(t, rabbit405, statistics("0", "10"))
	broker.SetCheckTiming(client, 20*time.Millisecond, time.Minute, time.Minute, time.Minute)
	fake.Bindings = `[{"source":"x","destination":"q","destination_type":"queue","routing_key":"k","properties_key":"k"}]`
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for fake.Sent(readQ) < 3 { // the first read, the read once unbound, one of the wait's
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	queue := topology.Queue{Name: "q"}
	err := client.Apply(ctx, "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Apply() error = %v, want the cancellation", err)
	}
	if fake.Sent(unbindXQ) != 1 || fake.Sent(rebindXQ) != 1 {
		t.Errorf("unbound %d times, bound again %d times; want once each: %v", fake.Sent(unbindXQ), fake.Sent(rebindXQ), fake.Requests())
	}
	if fake.Sent(deleteQ) != 0 {
		t.Errorf("the queue was deleted after a cancelled check")
	}
}
