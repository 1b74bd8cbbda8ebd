package broker_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
)

// heldBroker serves each queue's own statistics and a canned peek answer
// per queue; a queue without a peek answer is missing (404), except
// "broken", whose peek fails. It serves no listing.
type heldBroker struct {
	statistics string            // the queues' statistics, a JSON array
	peeks      map[string]string // queue → /get answer

	mu       sync.Mutex
	requests []string // "METHOD path"
}

func (f *heldBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+path)
	f.mu.Unlock()
	queue, isPeek := strings.CutSuffix(strings.TrimPrefix(path, "/api/queues/%2F/"), "/get")
	exists := f.peeks[queue] != "" || queue == "broken"
	switch {
	case r.Method == http.MethodGet && path == "/api/vhosts/%2F":
		_, _ = io.WriteString(w, `{"name":"/"}`)
	case r.Method == http.MethodGet && !isPeek && exists:
		// A queue too new for statistics has only its name.
		var items []map[string]any
		if err := json.Unmarshal([]byte(f.statistics), &items); err != nil {
			panic(err)
		}
		answer := map[string]any{"name": queue}
		for _, item := range items {
			if item["name"] == queue {
				answer = item
			}
		}
		if answer["type"] == nil {
			answer["type"] = "classic" // peeked on every version, without learning the broker
		}
		_ = json.NewEncoder(w).Encode(answer)
	case r.Method == http.MethodPost && isPeek && f.peeks[queue] != "":
		_, _ = io.WriteString(w, f.peeks[queue])
	case r.Method == http.MethodPost && isPeek && queue == "broken":
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":"internal_error","reason":"boom"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"Object Not Found","reason":"Not Found"}`)
	}
}

// newHeldBroker serves a heldBroker and returns it with a client of it.
func newHeldBroker(t *testing.T, statistics string, peeks map[string]string) (*heldBroker, *broker.Client) {
	t.Helper()
	fake := &heldBroker{statistics: statistics, peeks: peeks}
	return fake, brokertest.NewClient(t, fake, broker.Config{})
}

func TestHeldMessages(t *testing.T) {
	t.Parallel()
	const emptyPeek = `[]`
	tests := map[string]struct {
		statistics string
		peeks      map[string]string
		queues     []string
		want       map[string]int64
		wantErr    string
		// wantRequests: for each queue its statistics, then a peek only if
		// they count nothing (a missing queue: its statistics, and then its
		// vhost's once).
		wantRequests int64
		wantStale    bool // an *UncountedError for what statistics alone count
	}{
		"empty queues are absent": {
			statistics:   `[{"name":"a","messages_ready":0,"messages_unacknowledged":0,"messages_dlx":0}]`,
			peeks:        map[string]string{"a": emptyPeek, "b": emptyPeek},
			queues:       []string{"a", "b"},
			want:         map[string]int64{},
			wantRequests: 4,
		},
		"the peek finds what the statistics do not show yet": {
			statistics:   `[{"name":"a","messages_ready":0,"messages_unacknowledged":0,"messages_dlx":0}]`,
			peeks:        map[string]string{"a": `[{"payload":"x","message_count":2}]`, "b": `[{"payload":"x"}]`},
			queues:       []string{"a", "b"},
			want:         map[string]int64{"a": 3, "b": 1},
			wantRequests: 4,
		},
		"the statistics count what the peek cannot see": {
			// Only they see such messages, and they lag: the queue may hold them.
			statistics:   `[{"name":"a","messages_ready":0,"messages_unacknowledged":2,"messages_dlx":5}]`,
			peeks:        map[string]string{"a": emptyPeek},
			queues:       []string{"a"},
			want:         map[string]int64{"a": 7},
			wantStale:    true,
			wantRequests: 2,
		},
		"the peek, not the lagging statistics, counts ready messages": {
			statistics: `[{"name":"a","messages_ready":1,"messages_unacknowledged":0,"messages_dlx":0},
			              {"name":"b","messages_ready":9,"messages_unacknowledged":0,"messages_dlx":0},
			              {"name":"c","messages_ready":2,"messages_unacknowledged":0,"messages_dlx":0}]`,
			peeks:        map[string]string{"a": `[{"payload":"x","message_count":3}]`, "b": `[{"payload":"x","message_count":0}]`, "c": emptyPeek},
			queues:       []string{"a", "b", "c"},
			want:         map[string]int64{"a": 4, "b": 1},
			wantRequests: 6,
		},
		"missing queues are skipped": {
			statistics:   `[]`,
			peeks:        map[string]string{"a": `[{"payload":"x","message_count":0}]`},
			queues:       []string{"a", "gone"},
			want:         map[string]int64{"a": 1},
			wantRequests: 4,
		},
		"a single missing queue is skipped": {
			statistics:   `[]`,
			queues:       []string{"gone"},
			want:         map[string]int64{},
			wantRequests: 2,
		},
		"a failed peek fails the check": {
			statistics: `[]`,
			peeks:      map[string]string{"a": emptyPeek},
			queues:     []string{"a", "broken"},
			wantErr:    `looking for a message in queue "broken" of vhost "/"`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := newHeldBroker(t, tt.statistics, tt.peeks)
			got, err := client.HeldMessages(t.Context(), "/", tt.queues)
			if tt.wantErr != "" {
				var apiErr *broker.APIError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &apiErr) {
					t.Fatalf("HeldMessages() error = %v, want an *APIError saying %q", err, tt.wantErr)
				}
				return
			}
			if tt.wantStale != broker.IsUncounted(err) || err != nil && !tt.wantStale {
				t.Fatalf("HeldMessages() error = %v, want an *UncountedError: %v", err, tt.wantStale)
			}
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("HeldMessages() mismatch (-want +got):\n%s", diff)
			}
			// Each queue read alone, never a listing of the vhost.
			if client.Requests() != tt.wantRequests {
				t.Errorf("Requests() = %d, want %d: %v", client.Requests(), tt.wantRequests, fake.requests)
			}
			if slices.Contains(fake.requests, "GET /api/queues/%2F") {
				t.Errorf("requests = %v: HeldMessages listed the vhost's queues", fake.requests)
			}
		})
	}
}

// TestCountedMessages checks the count that watches draining generations:
// the statistics alone where the broker gives them, and a peek where it
// gives none — a broker without management metrics (RabbitMQ 4.x with
// management_metrics_collection off) answers a queue with its name and no
// count, which must not read as empty.
func TestCountedMessages(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		statistics   string
		peeks        map[string]string
		want         map[string]int64
		wantRequests []string
	}{
		"the statistics alone where they count": {
			statistics: `[{"name":"a","messages_ready":0,"messages_unacknowledged":0,"messages_dlx":0},
			              {"name":"b","messages_ready":4,"messages_unacknowledged":0,"messages_dlx":1}]`,
			peeks:        map[string]string{"a": `[{"payload":"x","message_count":2}]`, "b": `[]`},
			want:         map[string]int64{"b": 5},
			wantRequests: []string{"GET /api/queues/%2F/a", "GET /api/queues/%2F/b"},
		},
		"the totals of a broker without management metrics": {
			// RabbitMQ 4.x without them answers enable_queue_totals with
			// these three, messages counting those waiting in messages_dlx.
			statistics:   `[{"name":"a","messages":2,"messages_ready":0,"messages_unacknowledged":0}]`,
			peeks:        map[string]string{"a": `[]`, "b": `[]`},
			want:         map[string]int64{"a": 2},
			wantRequests: []string{"GET /api/queues/%2F/a", "GET /api/queues/%2F/b", "POST /api/queues/%2F/b/get"},
		},
		"a peek where the broker gives no statistics": {
			statistics:   `[]`,
			peeks:        map[string]string{"a": `[{"payload":"x","message_count":2}]`, "b": `[]`},
			want:         map[string]int64{"a": 3},
			wantRequests: []string{"GET /api/queues/%2F/a", "GET /api/queues/%2F/b", "POST /api/queues/%2F/a/get", "POST /api/queues/%2F/b/get"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := newHeldBroker(t, tt.statistics, tt.peeks)
			got, err := client.CountedMessages(t.Context(), "/", []string{"a", "b"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CountedMessages() mismatch (-want +got):\n%s", diff)
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			requests := slices.Sorted(slices.Values(fake.requests))
			if diff := gocmp.Diff(tt.wantRequests, requests); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeldMessagesMissingVHost(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		queues       []string
		wantRequests int64
	}{
		// Each queue's statistics, then the vhost, once: the broker answers
		// 404 alike for a queue and for its vhost.
		"one queue":      {queues: []string{"a"}, wantRequests: 2},
		"several queues": {queues: []string{"a", "b"}, wantRequests: 3},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client := brokertest.NewClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, `{"error":"Object Not Found","reason":"Not Found"}`)
			}), broker.Config{})
			if _, err := client.HeldMessages(t.Context(), "nowhere", tt.queues); !errors.Is(err, broker.ErrVHostNotFound) {
				t.Errorf("HeldMessages() error = %v, want ErrVHostNotFound", err)
			}
			if client.Requests() != tt.wantRequests {
				t.Errorf("Requests() = %d, want %d: no peek once the statistics failed", client.Requests(), tt.wantRequests)
			}
		})
	}
}

const (
	peekAtQ    = "POST /api/queues/%2F/q/get"
	readQ      = "GET /api/queues/%2F/q"
	deleteQ    = "DELETE /api/queues/%2F/q"
	readFlags  = "GET /api/feature-flags"
	readNodeOf = "GET /api/overview"
	// q's bindings: the listing, and the one from exchange x with key k.
	listQBindings = "GET /api/queues/%2F/q/bindings"
	unbindXQ      = "DELETE /api/bindings/%2F/e/x/q/q/k"
	rebindXQ      = "POST /api/bindings/%2F/e/x/q/q"
)

// Answers for queue q: statistics with reductions r and m ready messages,
// the totals of a broker without management metrics from a node where
// leader leads it, and no count at all (a queue too new for statistics).
func statistics(m, r string) string {
	return `{"name":"q","type":"quorum","leader":"rabbit@a","arguments":{"x-queue-type":"quorum"},` +
		`"effective_policy_definition":{},"messages":` + m + `,"messages_ready":` + m +
		`,"messages_unacknowledged":0,"messages_dlx":0,"reductions":` + r + `}`
}

func totals(m, leader string) string {
	return `{"name":"q","type":"quorum","leader":"` + leader + `","arguments":{"x-queue-type":"quorum"},` +
		`"messages":` + m + `,"messages_ready":` + m + `,"messages_unacknowledged":0}`
}

const noCountYet = `{"name":"q","type":"quorum","leader":"rabbit@a","arguments":{"x-queue-type":"quorum"}}`

var (
	rabbit405  = brokertest.Identity{Version: "4.0.5", Node: "rabbit@a"}
	rabbit3108 = brokertest.Identity{Version: "3.10.8", Node: "rabbit@a"}
)

// steppedClient serves a brokertest.SteppedQueue, with the no-peek check's waits
// shortened: reads 1 ms apart, at most 300 ms for first or fresh
// statistics, totals trusted 50 ms after the first read.
func steppedClient(t *testing.T, identity brokertest.Identity, answers ...string) (*brokertest.SteppedQueue, *broker.Client) {
	t.Helper()
	fake := &brokertest.SteppedQueue{Identity: identity, Answers: answers}
	client := brokertest.NewClient(t, fake, broker.Config{})
	broker.SetCheckTiming(client, time.Millisecond, 300*time.Millisecond, 300*time.Millisecond, 50*time.Millisecond)
	return fake, client
}

// TestCheckWithoutPeek checks HeldMessages and CountedMessages of a quorum
// queue where a peek would count as a delivery (RabbitMQ 4.0.5; 3.10.8
// with a delivery limit): never a peek, the statistics believed, the totals
// only from the leader's node, and a queue that cannot be counted counted
// as holding one message, with an *UncountedError beside the counts.
func TestCheckWithoutPeek(t *testing.T) {
	t.Parallel()
	limited := func(reductions string) string {
		return strings.Replace(statistics("0", reductions), `{"x-queue-type":"quorum"}`, `{"x-queue-type":"quorum","x-delivery-limit":5}`, 1)
	}
	// Before a change, a 0 counts only from statistics sampled after the
	// check began (the third change of the reductions, read twice), as at
	// the deletion: the refusal then comes before anything changed.
	fresh := []string{statistics("0", "1"), statistics("0", "2"), statistics("0", "3"), statistics("0", "4"), statistics("0", "4")}
	tests := map[string]struct {
		identity      brokertest.Identity
		counted       bool // CountedMessages, else HeldMessages
		answers       []string
		want          int64 // 0: absent from the map
		wantUncounted bool
		wantReads     int
	}{
		// Statistics alone, which lag, count a message: it may have left.
		"statistics count a message":   {identity: rabbit405, answers: []string{statistics("1", "1")}, want: 1, wantUncounted: true, wantReads: 1},
		"statistics count none, fresh": {identity: rabbit405, answers: fresh, wantReads: 5},
		"statistics count none, stale": {
			// What statistics that predate the check miss, the fresh ones count.
			identity: rabbit405, answers: []string{statistics("0", "1"), statistics("0", "2"), statistics("1", "3")}, want: 1, wantUncounted: true, wantReads: 3,
		},
		"statistics never fresh": {identity: rabbit405, answers: []string{statistics("0", "1")}, want: 1, wantUncounted: true, wantReads: -1},
		"3.10 with a delivery limit": {
			identity: rabbit3108, answers: []string{limited("1"), limited("2"), limited("3"), limited("4"), limited("4")}, wantReads: 5,
		},
		"counted: statistics count none": {identity: rabbit405, counted: true, answers: []string{statistics("0", "1")}, wantReads: 1},
		"totals of the leader's node":    {identity: rabbit405, answers: []string{totals("2", "rabbit@a")}, want: 2, wantUncounted: true, wantReads: 1},
		"totals of another node":         {identity: rabbit405, answers: []string{totals("0", "rabbit@b")}, want: 1, wantUncounted: true, wantReads: 1},
		"counted: totals of another one": {identity: rabbit405, counted: true, answers: []string{totals("0", "rabbit@b")}, want: 1, wantUncounted: true, wantReads: 1},
		"no count until the statistics come": {
			identity: rabbit405, answers: []string{noCountYet, noCountYet, statistics("1", "1")}, want: 1, wantUncounted: true, wantReads: 3,
		},
		"no count ever": {identity: rabbit405, answers: []string{noCountYet}, want: 1, wantUncounted: true, wantReads: -1},
		"counted: no count, no wait": {
			identity: rabbit405, counted: true, answers: []string{noCountYet, statistics("1", "1")}, want: 1, wantUncounted: true, wantReads: 1,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := steppedClient(t, tt.identity, tt.answers...)
			check := client.HeldMessages
			if tt.counted {
				check = client.CountedMessages
			}
			got, err := check(t.Context(), "/", []string{"q"})
			if tt.wantUncounted != broker.IsUncounted(err) || (err != nil && !tt.wantUncounted) {
				t.Fatalf("error = %v, want an *UncountedError: %v", err, tt.wantUncounted)
			}
			want := map[string]int64{}
			if tt.want > 0 {
				want["q"] = tt.want
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if n := fake.Sent(peekAtQ); n > 0 {
				t.Errorf("the check peeked %d times at a queue where a peek counts as a delivery", n)
			}
			if reads := fake.Sent(readQ); tt.wantReads > 0 && reads != tt.wantReads || tt.wantReads < 0 && reads < 3 {
				t.Errorf("the check read the queue %d times, want %d (-1: until it gave up)", reads, tt.wantReads)
			}
		})
	}
}

// TestCheckPeeksWhereNoDelivery: the same checks peek where a peek's return
// counts no delivery, as before: a quorum queue on RabbitMQ 4.3 with every
// node on 4.3, or on 3.10 without a delivery limit, once the statistics
// show its policy (a new queue's are read again until they come).
func TestCheckPeeksWhereNoDelivery(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		identity  brokertest.Identity
		answers   []string
		wantPeeks int
	}{
		"4.3.6, every node on 4.3":   {identity: brokertest.Identity{}, answers: []string{statistics("0", "1")}, wantPeeks: 1},
		"4.3.6, a new queue":         {identity: brokertest.Identity{}, answers: []string{noCountYet}, wantPeeks: 1},
		"4.3.6, flag not enabled":    {identity: brokertest.Identity{Version: "4.3.6", Node: "rabbit@a"}, answers: []string{statistics("0", "1")}},
		"4.3.6, flags unreadable":    {identity: brokertest.Identity{Version: "4.3.6", Node: "rabbit@a", Flags: []string{"rabbitmq_4.3.0"}, FlagsStatus: http.StatusUnauthorized}, answers: []string{statistics("0", "1")}},
		"3.10.8, no delivery limit":  {identity: rabbit3108, answers: []string{statistics("0", "1")}, wantPeeks: 1},
		"3.10.8, a new queue":        {identity: rabbit3108, answers: []string{noCountYet, statistics("0", "1")}, wantPeeks: 1},
		"4.0.5 never":                {identity: rabbit405, answers: []string{statistics("0", "1")}},
		"5.0.0, a version not known": {identity: brokertest.Identity{Version: "5.0.0", Node: "rabbit@a", Flags: []string{"rabbitmq_4.3.0"}}, answers: []string{statistics("0", "1")}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := steppedClient(t, tt.identity, tt.answers...)
			// Where it may not peek, the check waits for fresh statistics,
			// which these answers never bring: it is uncounted.
			if _, err := client.HeldMessages(t.Context(), "/", []string{"q"}); err != nil && (tt.wantPeeks > 0 || !broker.IsUncounted(err)) {
				t.Fatal(err)
			}
			if n := fake.Sent(peekAtQ); n != tt.wantPeeks {
				t.Errorf("the check peeked %d times, want %d", n, tt.wantPeeks)
			}
		})
	}
}

// TestCheckRuleLearnedOnce: a client asks the broker's version once, at its
// first check of a quorum queue, and its feature flags only where they
// matter (4.3 and later); classic queues need neither.
func TestCheckRuleLearnedOnce(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		identity                brokertest.Identity
		answer                  string
		wantOverview, wantFlags int
	}{
		"4.3.6":   {identity: brokertest.Identity{}, answer: statistics("0", "1"), wantOverview: 1, wantFlags: 1},
		"4.0.5":   {identity: rabbit405, answer: statistics("0", "1"), wantOverview: 1},
		"classic": {identity: rabbit405, answer: strings.Replace(statistics("0", "1"), `"type":"quorum"`, `"type":"classic"`, 1)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := steppedClient(t, tt.identity, tt.answer)
			for range 3 {
				if _, err := client.HeldMessages(t.Context(), "/", []string{"q"}); err != nil && !broker.IsUncounted(err) {
					t.Fatal(err)
				}
				if _, err := client.CountedMessages(t.Context(), "/", []string{"q"}); err != nil {
					t.Fatal(err)
				}
			}
			if got := []int{fake.Sent(readNodeOf), fake.Sent(readFlags)}; !slices.Equal(got, []int{tt.wantOverview, tt.wantFlags}) {
				t.Errorf("overview and feature flags read %v times, want %d and %d", got, tt.wantOverview, tt.wantFlags)
			}
		})
	}
}
