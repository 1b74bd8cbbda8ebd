package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
)

// readOnlyAPI is a fake management API of RabbitMQ 4.0.5, cluster
// "rabbit@a", that answers every read a count makes and records any other
// request, which it refuses: only GETs, and the peek, a POST to a queue's
// /get that puts the message back. Its queues are empty: "classic", which
// a count peeks at; "quorum", counted by its leader; "new", a quorum queue
// without statistics whose dead-letter strategy the vhost's policies tell;
// any other is missing.
type readOnlyAPI struct {
	peer *brokertest.AMQPPeer

	mu       sync.Mutex
	requests []string // "METHOD path"
	writes   []string
}

var readOnlyQueues = map[string]string{
	"classic": `{"name":"classic","type":"classic","arguments":{},"effective_policy_definition":{},"consumers":0,` +
		`"messages":0,"messages_ready":0,"messages_unacknowledged":0,"reductions":1}`,
	"quorum": `{"name":"quorum","type":"quorum","leader":"rabbit@a","arguments":{"x-queue-type":"quorum","x-dead-letter-strategy":"at-most-once"},` +
		`"effective_policy_definition":{},"consumers":0,"messages":0,"messages_ready":0,"messages_unacknowledged":0,"messages_dlx":0,` +
		`"reductions":1,"node":"rabbit@a","online":["rabbit@a"],"online":["rabbit@a"],"state":"running","state":"running"}`,
	"new": `{"name":"new","type":"quorum","leader":"rabbit@a","arguments":{"x-queue-type":"quorum"},"messages":0,` +
		`"node":"rabbit@a","online":["rabbit@a"],"state":"running"}`,
}

func (f *readOnlyAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+path)
	f.mu.Unlock()
	queue, isPeek := strings.CutSuffix(strings.TrimPrefix(path, "/api/queues/%2F/"), "/get")
	if read := r.Method == http.MethodGet || r.Method == http.MethodPost && isPeek && f.putsBack(r); !read {
		f.mu.Lock()
		f.writes = append(f.writes, r.Method+" "+path)
		f.mu.Unlock()
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	switch {
	case path == "/api/overview":
		_ = json.NewEncoder(w).Encode(map[string]string{"rabbitmq_version": "4.0.5", "node": "rabbit@a", "cluster_name": "rabbit@a"})
	case path == "/api/connections":
		listed := []map[string]string{}
		for _, name := range f.peer.ConnectionNames() {
			listed = append(listed, map[string]string{"name": "10.0.0.1:1234 -> 10.0.0.2:5672", "user_provided_name": name})
		}
		_ = json.NewEncoder(w).Encode(listed)
	case path == "/api/vhosts/%2F":
		_, _ = w.Write([]byte(`{"name":"/"}`))
	case path == "/api/policies/%2F" || path == "/api/operator-policies/%2F":
		_, _ = w.Write([]byte(`[]`))
	case isPeek && readOnlyQueues[queue] != "":
		_, _ = w.Write([]byte(`[]`))
	case readOnlyQueues[queue] != "":
		_, _ = w.Write([]byte(readOnlyQueues[queue]))
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
	}
}

// putsBack tells a peek whose message goes back to the queue.
func (f *readOnlyAPI) putsBack(r *http.Request) bool {
	var body struct {
		AckMode string `json:"ackmode"`
	}
	return json.NewDecoder(r.Body).Decode(&body) == nil && body.AckMode == "ack_requeue_true"
}

func (f *readOnlyAPI) recorded() (requests, writes []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests), slices.Clone(f.writes)
}

// TestCountMakesNoChange: every count, in every mode, sends the management
// API only GETs and peeks that put the message back, and the AMQP peer
// only passive declarations; the deletion's own changes come only through
// the arrivalsStopper it hands the count.
func TestCountMakesNoChange(t *testing.T) {
	t.Parallel()
	peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"classic": 0, "quorum": 0, "new": 0}}
	api := &readOnlyAPI{peer: peer}
	client := leaderClient(t, api, peer, 0, nil)
	ctx := t.Context()
	queues := []string{"classic", "quorum", "new", "gone"}
	stopped := 0
	stop := func(context.Context) (bool, error) { stopped++; return true, nil } //nolint:unparam // an arrivalsStopper
	counts := map[string]func() (map[string]int64, error){
		"held":    func() (map[string]int64, error) { return client.HeldMessages(ctx, "/", queues) },
		"counted": func() (map[string]int64, error) { return client.CountedMessages(ctx, "/", queues) },
		"by statistics": func() (map[string]int64, error) {
			messages, _, err := client.CountedByStatistics(ctx, "/", "classic")
			return map[string]int64{"classic": messages}, err
		},
		"for a deletion, classic": func() (map[string]int64, error) { return broker.CountForDeletion(ctx, client, "/", "classic", stop) },
		"for a deletion, quorum":  func() (map[string]int64, error) { return broker.CountForDeletion(ctx, client, "/", "quorum", stop) },
		"in the deletion's turn":  func() (map[string]int64, error) { return broker.CountInTurn(ctx, client, "/", "quorum") },
	}
	for name, count := range counts {
		held, err := count()
		for queue, n := range held {
			if n != 0 {
				t.Errorf("%s: %s holds %d; want every queue empty", name, queue, n)
			}
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	requests, writes := api.recorded()
	if len(writes) > 0 {
		t.Errorf("the counts sent the management API %v; want only GETs and peeks that put the message back", writes)
	}
	if changes := peer.Changes(); len(changes) > 0 {
		t.Errorf("the counts sent the AMQP peer %v; want only passive declarations", changes)
	}
	// The counts took every path whose requests the test watches.
	if !slices.Contains(requests, "POST /api/queues/%2F/classic/get") || len(peer.Declared()) == 0 || stopped == 0 {
		t.Errorf("requests %v, declarations %v, stops %d: want a peek, a passive declaration and the deletion's stop",
			requests, peer.Declared(), stopped)
	}
}

// TestClassicCountWaitsForNoAMQPProof: a count before a change that peeks
// at a classic queue needs no AMQP (its deletion keeps the broker's
// if-unused guard), so it returns while the proof of the AMQP connection
// still waits for the management API to list it.
func TestClassicCountWaitsForNoAMQPProof(t *testing.T) {
	t.Parallel()
	peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"classic": 0}}
	listed := make(chan struct{})
	api := &listingHeldAPI{next: &readOnlyAPI{peer: peer}, listed: listed}
	client := leaderClient(t, api, peer, time.Minute, nil)
	t.Cleanup(func() { close(listed) })
	bounded(t, "HeldMessages of a classic queue while the AMQP proof waits", 20*time.Second, func() error {
		held, err := client.HeldMessages(t.Context(), "/", []string{"classic"})
		if err != nil || len(held) != 0 {
			return fmt.Errorf("HeldMessages() = %v, %w; want an empty queue", held, err)
		}
		return nil
	})
	// The count began the connection's proof for the checks after it.
	for deadline := time.Now().Add(20 * time.Second); !api.asked.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no connection listing was asked: the test held no proof")
		}
	}
}

// listingHeldAPI holds every listing of connections until listed closes.
type listingHeldAPI struct {
	next   http.Handler
	listed <-chan struct{}
	asked  atomic.Bool
}

func (f *listingHeldAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/connections") {
		f.asked.Store(true)
		select {
		case <-f.listed:
		case <-r.Context().Done():
		}
	}
	f.next.ServeHTTP(w, r)
}
