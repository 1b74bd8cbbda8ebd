package brokertest

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// Fakes of the management HTTP API, for tests of *broker.Client itself:
// a handler stands for the broker, NewClient builds a client of it.

// NewClient serves handler, a fake management API, until the test ends,
// and returns a client of it made with config, whose endpoint it sets. A
// fake speaks no AMQP: the client counts by the statistics alone
// (Config.DisableAMQPCounts).
func NewClient(t testing.TB, handler http.Handler, config broker.Config) *broker.Client {
	t.Helper()
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	config.Endpoint = server.URL
	config.DisableAMQPCounts = true
	client, err := broker.New(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// Identity answers the two requests by which a client learns which checks
// its broker allows: the overview (version, node and cluster name) and the
// feature flags, which it lists as enabled, or refuses with FlagsStatus.
// The zero value is a RabbitMQ 4.3.6 node rabbit@localhost whose every
// node runs 4.3 (the flag rabbitmq_4.3.0), where a peek is no delivery.
type Identity struct {
	Version, Node string
	// ClusterName is the overview's cluster_name; "": the node's name, as
	// RabbitMQ names a cluster by default.
	ClusterName string
	Flags       []string
	// FlagsStatus, when not 0, is the status that refuses the flags'
	// listing (as 401 to a user who is no administrator on 3.10–3.12).
	FlagsStatus int
}

// Serve answers r if it is one of the two, and tells whether it was.
func (id Identity) Serve(w http.ResponseWriter, r *http.Request) bool {
	if id.Version == "" {
		id = Identity{Version: "4.3.6", Node: "rabbit@localhost", Flags: []string{"rabbitmq_4.3.0"}}
	}
	switch r.URL.Path {
	case "/api/overview":
		_ = json.NewEncoder(w).Encode(map[string]string{"rabbitmq_version": id.Version, "node": id.Node,
			"cluster_name": cmp.Or(id.ClusterName, id.Node)})
	case "/api/feature-flags":
		if id.FlagsStatus != 0 {
			w.WriteHeader(id.FlagsStatus)
			_, _ = w.Write([]byte(`{"error":"not_authorised","reason":"Not administrator user"}`))
			return true
		}
		flags := []map[string]string{{"name": "quorum_queue", "state": "enabled"}}
		for _, name := range id.Flags {
			flags = append(flags, map[string]string{"name": name, "state": "enabled"})
		}
		_ = json.NewEncoder(w).Encode(flags)
	default:
		return false
	}
	return true
}

// SteppedQueue serves queue q of vhost "/" as a broker of Identity: each
// read of q answers the next of Answers (the last one again once they run
// out), as statistics that change between reads. A peek answers that the
// queue is empty: a check that peeks where it must not is seen in
// requests (Sent), not in its count. It refuses if-empty for q, as for a
// quorum queue; deleting q succeeds. Set its fields before its first
// request.
type SteppedQueue struct {
	Identity Identity
	// Answers are the JSON bodies of the reads of q, in turn.
	Answers []string
	// Bindings is q's binding listing (a JSON array); "": the default
	// exchange's alone. Deleting and declaring bindings from exchange "e"
	// succeeds.
	Bindings string
	// Before, when set, is called with each request before it is served
	// (and recorded), as a broker that is slow to answer it.
	Before func(*http.Request)
	// DeleteStatus, when not 0, is the status of q's unguarded deletion,
	// with an error answer.
	DeleteStatus int

	mu       sync.Mutex
	reads    int
	requests []string
}

func (f *SteppedQueue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.Before != nil {
		f.Before(r)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	request := r.Method + " " + r.URL.EscapedPath()
	if r.Method == http.MethodDelete && r.URL.RawQuery != "" {
		request += "?" + r.URL.RawQuery // the guarded attempt is not the deletion
	}
	f.requests = append(f.requests, request)
	if f.Identity.Serve(w, r) {
		return
	}
	switch path := r.URL.EscapedPath(); {
	case r.Method == http.MethodGet && path == "/api/queues/%2F/q":
		_, _ = io.WriteString(w, f.Answers[min(f.reads, len(f.Answers)-1)])
		f.reads++
	case r.Method == http.MethodPost && path == "/api/queues/%2F/q/get":
		_, _ = io.WriteString(w, `[]`)
	case r.Method == http.MethodGet && path == "/api/queues/%2F/q/bindings":
		_, _ = io.WriteString(w, cmp.Or(f.Bindings, `[{"source":"","vhost":"/","destination":"q","destination_type":"queue","routing_key":"q","properties_key":"q"}]`))
	case strings.HasPrefix(path, "/api/bindings/%2F/e/") && (r.Method == http.MethodDelete || r.Method == http.MethodPost):
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodDelete && r.URL.Query().Get("if-empty") == "true":
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"bad_request","reason":"queue.delete operations with if-empty flag set are not supported by quorum queues"}`)
	case r.Method == http.MethodDelete && path == "/api/queues/%2F/q" && f.DeleteStatus != 0:
		w.WriteHeader(f.DeleteStatus)
		_, _ = io.WriteString(w, `{"error":"internal_error","reason":"boom"}`)
	case r.Method == http.MethodDelete && path == "/api/queues/%2F/q":
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"Object Not Found","reason":"Not Found"}`)
	}
}

// Requests are the requests served so far, in order, each "METHOD path"
// (escaped), the identity's included, a DELETE's query too.
func (f *SteppedQueue) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// Sent is how many times request ("METHOD path", as Requests) was served.
func (f *SteppedQueue) Sent(request string) int {
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
