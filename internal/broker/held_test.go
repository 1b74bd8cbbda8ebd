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

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
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
	return fake, fakeClient(t, fake, broker.Config{})
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
			statistics:   `[{"name":"a","messages_ready":0,"messages_unacknowledged":2,"messages_dlx":5}]`,
			peeks:        map[string]string{"a": emptyPeek},
			queues:       []string{"a"},
			want:         map[string]int64{"a": 7},
			wantRequests: 1,
		},
		"a queue the statistics count is not peeked at": {
			// A peek would move a quorum queue's head behind the others.
			statistics: `[{"name":"a","messages_ready":1,"messages_unacknowledged":0,"messages_dlx":0},
			              {"name":"b","messages_ready":9,"messages_unacknowledged":0,"messages_dlx":0}]`,
			peeks:        map[string]string{"a": `[{"payload":"x","message_count":3}]`, "b": `[{"payload":"x","message_count":0}]`},
			queues:       []string{"a", "b"},
			want:         map[string]int64{"a": 1, "b": 9},
			wantRequests: 2,
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
			if err != nil {
				t.Fatal(err)
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
			client := fakeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
