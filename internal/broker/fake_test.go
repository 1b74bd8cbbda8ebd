package broker_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
