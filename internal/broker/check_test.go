package broker_test

import (
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
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// steppedBroker serves queue q of vhost "/" as a broker of identity: each
// read of q answers the next of answers (the last one again once they run
// out), as statistics that change between reads. A peek answers that the
// queue is empty: a check that peeks where it must not is seen in requests,
// not in its count. It refuses if-empty for q, as for a quorum queue.
type steppedBroker struct {
	identity brokerIdentity
	answers  []string

	mu       sync.Mutex
	reads    int
	requests []string // "METHOD path", the identity's requests included, a DELETE's query too
}

func (f *steppedBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	request := r.Method + " " + r.URL.EscapedPath()
	if r.Method == http.MethodDelete && r.URL.RawQuery != "" {
		request += "?" + r.URL.RawQuery // the guarded attempt is not the deletion
	}
	f.requests = append(f.requests, request)
	if f.identity.serve(w, r) {
		return
	}
	switch path := r.URL.EscapedPath(); {
	case r.Method == http.MethodGet && path == "/api/queues/%2F/q":
		_, _ = io.WriteString(w, f.answers[min(f.reads, len(f.answers)-1)])
		f.reads++
	case r.Method == http.MethodPost && path == "/api/queues/%2F/q/get":
		_, _ = io.WriteString(w, `[]`)
	case r.Method == http.MethodDelete && r.URL.Query().Get("if-empty") == "true":
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"bad_request","reason":"queue.delete operations with if-empty flag set are not supported by quorum queues"}`)
	case r.Method == http.MethodDelete && path == "/api/queues/%2F/q":
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"Object Not Found","reason":"Not Found"}`)
	}
}

func (f *steppedBroker) sent(request string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if r == request {
			n++
		}
	}
	return n
}

const (
	peekAtQ    = "POST /api/queues/%2F/q/get"
	readQ      = "GET /api/queues/%2F/q"
	deleteQ    = "DELETE /api/queues/%2F/q"
	readFlags  = "GET /api/feature-flags"
	readNodeOf = "GET /api/overview"
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
	rabbit405  = brokerIdentity{version: "4.0.5", node: "rabbit@a"}
	rabbit3108 = brokerIdentity{version: "3.10.8", node: "rabbit@a"}
)

// steppedClient serves a steppedBroker, with the no-peek check's waits
// shortened: reads 1 ms apart, at most 300 ms for first or fresh
// statistics, totals trusted 50 ms after the first read.
func steppedClient(t *testing.T, identity brokerIdentity, answers ...string) (*steppedBroker, *broker.Client) {
	t.Helper()
	fake := &steppedBroker{identity: identity, answers: answers}
	client := fakeClient(t, fake, broker.Config{})
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
	limited := strings.Replace(statistics("0", "1"), `{"x-queue-type":"quorum"}`, `{"x-queue-type":"quorum","x-delivery-limit":5}`, 1)
	tests := map[string]struct {
		identity      brokerIdentity
		counted       bool // CountedMessages, else HeldMessages
		answers       []string
		want          int64 // 0: absent from the map
		wantUncounted bool
		wantReads     int
	}{
		"statistics count a message":     {identity: rabbit405, answers: []string{statistics("1", "1")}, want: 1, wantReads: 1},
		"statistics count none":          {identity: rabbit405, answers: []string{statistics("0", "1")}, wantReads: 1},
		"3.10 with a delivery limit":     {identity: rabbit3108, answers: []string{limited}, wantReads: 1},
		"totals of the leader's node":    {identity: rabbit405, answers: []string{totals("2", "rabbit@a")}, want: 2, wantReads: 1},
		"totals of another node":         {identity: rabbit405, answers: []string{totals("0", "rabbit@b")}, want: 1, wantUncounted: true, wantReads: 1},
		"counted: totals of another one": {identity: rabbit405, counted: true, answers: []string{totals("0", "rabbit@b")}, want: 1, wantUncounted: true, wantReads: 1},
		"no count until the statistics come": {
			identity: rabbit405, answers: []string{noCountYet, noCountYet, statistics("1", "1")}, want: 1, wantReads: 3,
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
			if n := fake.sent(peekAtQ); n > 0 {
				t.Errorf("the check peeked %d times at a queue where a peek counts as a delivery", n)
			}
			if reads := fake.sent(readQ); tt.wantReads > 0 && reads != tt.wantReads || tt.wantReads < 0 && reads < 3 {
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
		identity  brokerIdentity
		answers   []string
		wantPeeks int
	}{
		"4.3.6, every node on 4.3":   {identity: brokerIdentity{}, answers: []string{statistics("0", "1")}, wantPeeks: 1},
		"4.3.6, a new queue":         {identity: brokerIdentity{}, answers: []string{noCountYet}, wantPeeks: 1},
		"4.3.6, flag not enabled":    {identity: brokerIdentity{version: "4.3.6", node: "rabbit@a"}, answers: []string{statistics("0", "1")}},
		"4.3.6, flags unreadable":    {identity: brokerIdentity{version: "4.3.6", node: "rabbit@a", flags: []string{"rabbitmq_4.3.0"}, flagsStatus: http.StatusUnauthorized}, answers: []string{statistics("0", "1")}},
		"3.10.8, no delivery limit":  {identity: rabbit3108, answers: []string{statistics("0", "1")}, wantPeeks: 1},
		"3.10.8, a new queue":        {identity: rabbit3108, answers: []string{noCountYet, statistics("0", "1")}, wantPeeks: 1},
		"4.0.5 never":                {identity: rabbit405, answers: []string{statistics("0", "1")}},
		"5.0.0, a version not known": {identity: brokerIdentity{version: "5.0.0", node: "rabbit@a", flags: []string{"rabbitmq_4.3.0"}}, answers: []string{statistics("0", "1")}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := steppedClient(t, tt.identity, tt.answers...)
			if _, err := client.HeldMessages(t.Context(), "/", []string{"q"}); err != nil {
				t.Fatal(err)
			}
			if n := fake.sent(peekAtQ); n != tt.wantPeeks {
				t.Errorf("the check peeked %d times, want %d", n, tt.wantPeeks)
			}
		})
	}
}

// TestDeletionWithoutPeek checks Apply's deletion of a quorum queue where a
// peek would count as a delivery: it deletes only on a count of 0 sampled
// after its check began — statistics whose reductions changed twice since
// its first read (the first change may bring a sample taken before), or the
// totals of the leader's node after their wait — and refuses on a count
// above 0 or on none it can trust.
func TestDeletionWithoutPeek(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		answers      []string
		wantMessages int64 // of a *QueueNotEmptyError
		wantReason   string
		wantDeleted  bool
	}{
		"fresh 0": {
			answers:     []string{statistics("0", "10"), statistics("0", "10"), statistics("0", "20"), statistics("0", "30")},
			wantDeleted: true,
		},
		"stale 0": {
			// The first change still counts nothing: that sample was taken
			// before the check; the next one counts the message.
			answers:      []string{statistics("0", "10"), statistics("0", "20"), statistics("1", "30")},
			wantMessages: 1,
		},
		"no fresh sample": {
			answers:    []string{statistics("0", "10"), statistics("0", "20")},
			wantReason: "did not show a sample taken after the check began",
		},
		"a new queue's first statistics": {
			// They are the first change: one more proves a fresh sample.
			answers:     []string{noCountYet, statistics("0", "10"), statistics("0", "20")},
			wantDeleted: true,
		},
		"a new queue's first statistics alone": {
			answers:    []string{noCountYet, statistics("0", "10")},
			wantReason: "did not show a sample taken after the check began",
		},
		"totals of the leader's node": {answers: []string{totals("0", "rabbit@a")}, wantDeleted: true},
		"totals count a message":      {answers: []string{totals("0", "rabbit@a"), totals("1", "rabbit@a")}, wantMessages: 1},
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
			if deleted := fake.sent(deleteQ) == 1; deleted != tt.wantDeleted {
				t.Errorf("deleted = %v, want %v: %v", deleted, tt.wantDeleted, fake.requests)
			}
			if n := fake.sent(peekAtQ); n > 0 {
				t.Errorf("the deletion peeked %d times at a queue where a peek counts as a delivery", n)
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
		identity                brokerIdentity
		answer                  string
		wantOverview, wantFlags int
	}{
		"4.3.6":   {identity: brokerIdentity{}, answer: statistics("0", "1"), wantOverview: 1, wantFlags: 1},
		"4.0.5":   {identity: rabbit405, answer: statistics("0", "1"), wantOverview: 1},
		"classic": {identity: rabbit405, answer: strings.Replace(statistics("0", "1"), `"type":"quorum"`, `"type":"classic"`, 1)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake, client := steppedClient(t, tt.identity, tt.answer)
			for range 3 {
				if _, err := client.HeldMessages(t.Context(), "/", []string{"q"}); err != nil {
					t.Fatal(err)
				}
				if _, err := client.CountedMessages(t.Context(), "/", []string{"q"}); err != nil {
					t.Fatal(err)
				}
			}
			if got := []int{fake.sent(readNodeOf), fake.sent(readFlags)}; !slices.Equal(got, []int{tt.wantOverview, tt.wantFlags}) {
				t.Errorf("overview and feature flags read %v times, want %d and %d", got, tt.wantOverview, tt.wantFlags)
			}
		})
	}
}
