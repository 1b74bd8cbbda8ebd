package broker_test

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// fakeClient serves handler, a fake management API, until the test ends,
// and returns a client of it made with config, whose endpoint it sets.
func fakeClient(t *testing.T, handler http.Handler, config broker.Config) *broker.Client {
	t.Helper()
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	config.Endpoint = server.URL
	// A fake speaks no AMQP: its clients count by statistics alone.
	config.DisableAMQPCounts = true
	client, err := broker.New(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// brokerIdentity answers the two requests by which a client learns which
// checks its broker allows: the overview (version and node) and the
// feature flags, which it lists as enabled, or refuses with flagsStatus.
// The zero value is a RabbitMQ 4.3.6 node whose every node runs 4.3, where
// a peek is no delivery.
type brokerIdentity struct {
	version, node string
	flags         []string
	flagsStatus   int
}

// serve answers r if it is one of the two, and tells whether it was.
func (b brokerIdentity) serve(w http.ResponseWriter, r *http.Request) bool {
	if b.version == "" {
		b = brokerIdentity{version: "4.3.6", node: "rabbit@localhost", flags: []string{"rabbitmq_4.3.0"}}
	}
	switch r.URL.Path {
	case "/api/overview":
		_ = json.NewEncoder(w).Encode(map[string]string{"rabbitmq_version": b.version, "node": b.node})
	case "/api/feature-flags":
		if b.flagsStatus != 0 {
			w.WriteHeader(b.flagsStatus)
			_, _ = w.Write([]byte(`{"error":"not_authorised","reason":"Not administrator user"}`))
			return true
		}
		flags := []map[string]string{{"name": "quorum_queue", "state": "enabled"}}
		for _, name := range b.flags {
			flags = append(flags, map[string]string{"name": name, "state": "enabled"})
		}
		_ = json.NewEncoder(w).Encode(flags)
	default:
		return false
	}
	return true
}

// steppedBroker serves queue q of vhost "/" as a broker of identity: each
// read of q answers the next of answers (the last one again once they run
// out), as statistics that change between reads. A peek answers that the
// queue is empty: a check that peeks where it must not is seen in requests,
// not in its count. It refuses if-empty for q, as for a quorum queue.
type steppedBroker struct {
	identity brokerIdentity
	answers  []string
	// bindings is q's binding listing (a JSON array); "": the default
	// exchange's alone. Deleting and declaring bindings succeeds.
	bindings string

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
	case r.Method == http.MethodGet && path == "/api/queues/%2F/q/bindings":
		_, _ = io.WriteString(w, cmp.Or(f.bindings, `[{"source":"","vhost":"/","destination":"q","destination_type":"queue","routing_key":"q","properties_key":"q"}]`))
	case strings.HasPrefix(path, "/api/bindings/%2F/e/") && (r.Method == http.MethodDelete || r.Method == http.MethodPost):
		w.WriteHeader(http.StatusCreated)
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
