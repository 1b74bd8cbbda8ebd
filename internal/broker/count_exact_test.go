package broker_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
)

// withFreshQueue is readOnlyAPI with one more queue, "fresh": quorum, at-least-once
// dead-lettering, and no statistics yet, so that only its first ones could
// tell that no message waits for a dead-letter confirm.
type withFreshQueue struct{ *readOnlyAPI }

func (f withFreshQueue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.EscapedPath() != "/api/queues/%2F/fresh" {
		f.readOnlyAPI.ServeHTTP(w, r)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.EscapedPath())
	f.mu.Unlock()
	_, _ = w.Write([]byte(`{"name":"fresh","type":"quorum","leader":"rabbit@a","arguments":{"x-queue-type":"quorum",` +
		`"x-dead-letter-strategy":"at-least-once"},"messages":0,"node":"rabbit@a","online":["rabbit@a"],"state":"running"}`))
}

// TestExactMessagesWaitsForNoStatisticsBeyondItsWait: where the leader's
// count needs statistics still to come, ExactMessages with no wait reads
// the queue once and uncounts it, holding a message, where HeldMessages
// waits for them and then counts it; a queue with statistics it counts
// exactly.
func TestExactMessagesWaitsForNoStatisticsBeyondItsWait(t *testing.T) {
	t.Parallel()
	peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"quorum": 0, "fresh": 0}}
	api := withFreshQueue{&readOnlyAPI{peer: peer}}
	client := leaderClient(t, api, peer, 0, nil)
	counts, err := client.ExactMessages(t.Context(), "/", []string{"fresh"}, 0)
	if !broker.IsUncounted(err) || counts["fresh"] < 1 {
		t.Fatalf("ExactMessages(fresh) = %v, %v; want it uncounted, holding a message", counts, err)
	}
	requests, _ := api.recorded()
	if reads := countOf(requests, "GET /api/queues/%2F/fresh"); reads != 1 {
		t.Errorf("ExactMessages read the fresh queue %d times; want once, waiting for no statistics", reads)
	}
	if _, err := client.HeldMessages(t.Context(), "/", []string{"fresh"}); err != nil {
		t.Fatalf("HeldMessages(fresh): %v; want it counted, once its wait for statistics ends, by its leader's totals", err)
	}
	requests, _ = api.recorded()
	if reads := countOf(requests, "GET /api/queues/%2F/fresh"); reads <= 2 {
		t.Errorf("HeldMessages read the fresh queue %d times in all; want it waiting for statistics", reads)
	}
	counts, err = client.ExactMessages(t.Context(), "/", []string{"quorum"}, time.Minute)
	if err != nil || len(counts) != 0 {
		t.Errorf("ExactMessages(quorum) = %v, %v; want it counted empty by its leader", counts, err)
	}
}

func countOf(requests []string, request string) int {
	return len(slices.DeleteFunc(slices.Clone(requests), func(r string) bool { return r != request }))
}
