package broker_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// markingAPI is readOnlyAPI (RabbitMQ 4.0.5) with "fresh", a quorum queue
// too new for statistics whose messages dead-letter at least once, whose
// leader's log ends at the marks of logs, read after read (the last one
// for every read after it), and the declarations of quorum queues "made",
// which it creates (201), and "kept", which exists (204).
type markingAPI struct {
	readOnlyAPI
	logs []broker.LogMark

	mu    sync.Mutex
	reads int
}

const freshQueue = `{"name":"fresh","type":"quorum","leader":"rabbit@a",` +
	`"arguments":{"x-queue-type":"quorum","x-dead-letter-strategy":"at-least-once","x-overflow":"reject-publish"},` +
	`"effective_policy_definition":{},"node":"rabbit@a","online":["rabbit@a"],"state":"running"}`

func (f *markingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	switch {
	case r.Method == http.MethodPut && path == "/api/queues/%2F/made":
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodPut && path == "/api/queues/%2F/kept":
		w.WriteHeader(http.StatusNoContent)
	case path == "/api/queues/%2F/fresh":
		_, _ = w.Write([]byte(freshQueue))
	case strings.HasPrefix(path, "/api/queues/quorum/%2F/") && strings.HasSuffix(path, "/status"):
		f.mu.Lock()
		mark := f.logs[min(f.reads, len(f.logs)-1)]
		f.reads++
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode([]map[string]any{
			{"Node Name": "rabbit@b", "Raft State": "follower", "Term": mark.Term, "Last Log Index": mark.Index - 1},
			{"Node Name": "rabbit@a", "Raft State": "leader", "Term": mark.Term, "Last Log Index": mark.Index},
		})
	default:
		f.readOnlyAPI.ServeHTTP(w, r)
	}
}

// TestLeaderCountTrustsAnUntouchedLog: on 4.0–4.2 a leader's 0 of a queue
// whose messages may wait for an at-least-once dead-letter confirm needs
// messages_dlx, which a new queue's statistics do not show for seconds; a
// log that ends where its declaration left it, before the count and after,
// stands for it. Anything else falls back to the statistics, here none:
// the 0 is not trusted; a log that moved forgets its mark.
func TestLeaderCountTrustsAnUntouchedLog(t *testing.T) {
	t.Parallel()
	declared := broker.LogMark{Term: 1, Index: 3}
	for name, tt := range map[string]struct {
		remembered  bool
		logs        []broker.LogMark
		wantTrusted bool
	}{
		"untouched":                 {remembered: true, logs: []broker.LogMark{declared}, wantTrusted: true},
		"no mark":                   {logs: []broker.LogMark{declared}},
		"a message came before":     {remembered: true, logs: []broker.LogMark{{Term: 1, Index: 7}}},
		"a message came during":     {remembered: true, logs: []broker.LogMark{declared, {Term: 1, Index: 4}}},
		"another leader since then": {remembered: true, logs: []broker.LogMark{{Term: 2, Index: 3}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, log := freshQueueClient(t, tt.logs)
			if tt.remembered {
				client.RememberDeclared("/", map[string]broker.LogMark{"fresh": declared})
			}
			count, trusted, err := broker.LeaderCount(t.Context(), client, "/", "fresh")
			if err != nil || count != 0 || trusted != tt.wantTrusted {
				t.Errorf("LeaderCount() = %d, trusted %v, %v; want 0, trusted %v\n%s", count, trusted, err, tt.wantTrusted, log.text())
			}
			if kept := client.DeclaredMarks("/", []string{"fresh"}); len(kept) > 0 != tt.wantTrusted {
				t.Errorf("DeclaredMarks() after the count = %v; want the mark kept only while the log is at it", kept)
			}
		})
	}
}

// TestDeclarationMarksOnlyWhatItCreated: a quorum queue's declaration that
// created it (201) notes where its leader's log ends, which a later client
// is told of; one that found the queue (204) notes nothing, as the queue
// may hold messages already.
func TestDeclarationMarksOnlyWhatItCreated(t *testing.T) {
	t.Parallel()
	peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a"}
	api := &markingAPI{readOnlyAPI: readOnlyAPI{peer: peer}, logs: []broker.LogMark{{Term: 1, Index: 3}}}
	client := leaderClient(t, api, peer, 0, nil)
	var changes []topology.Change
	for _, name := range []string{"made", "kept"} {
		queue := topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
		changes = append(changes, topology.Change{Kind: topology.CreateQueue, Queue: &queue})
	}
	if err := client.Apply(t.Context(), "/", changes, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]broker.LogMark{"made": {Term: 1, Index: 3}}
	marks := client.DeclaredMarks("/", []string{"made", "kept"})
	if diff := gocmp.Diff(want, marks); diff != "" {
		t.Errorf("DeclaredMarks() (-want +got):\n%s", diff)
	}
	later := leaderClient(t, api, peer, 0, nil)
	later.RememberDeclared("/", marks)
	if got := later.DeclaredMarks("/", []string{"made"}); !gocmp.Equal(want, got) {
		t.Errorf("a later client's DeclaredMarks() = %v, want %v", got, want)
	}
}

// TestHeldMessagesRecountsWhatMovedSince: a queue found empty by its log
// is looked at again once every queue is counted; a log that moved since,
// as a message dead-lettered into it from a queue counted later moves it,
// has the queue counted again (here: uncounted, as it has no statistics).
func TestHeldMessagesRecountsWhatMovedSince(t *testing.T) {
	t.Parallel()
	declared := broker.LogMark{Term: 1, Index: 3}
	for name, tt := range map[string]struct {
		logs     []broker.LogMark
		wantHeld bool
	}{
		"untouched to the end":            {logs: []broker.LogMark{declared}},
		"touched after the queue's count": {logs: []broker.LogMark{declared, declared, {Term: 1, Index: 4}}, wantHeld: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, log := freshQueueClient(t, tt.logs)
			client.RememberDeclared("/", map[string]broker.LogMark{"fresh": declared})
			held, err := client.HeldMessages(t.Context(), "/", []string{"fresh"})
			if got := held["fresh"] > 0 || broker.IsUncounted(err); got != tt.wantHeld {
				t.Errorf("HeldMessages() = %v, %v; want held or uncounted %v\n%s", held, err, tt.wantHeld, log.text())
			}
		})
	}
}

// freshQueueClient is a client of a markingAPI whose "fresh" queue's log
// ends at logs, read after read, and the client's log.
func freshQueueClient(t *testing.T, logs []broker.LogMark) (*broker.Client, *logged) {
	t.Helper()
	peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"fresh": 0}}
	log := &logged{}
	return leaderClient(t, &markingAPI{readOnlyAPI: readOnlyAPI{peer: peer}, logs: logs}, peer, 0, log), log
}
