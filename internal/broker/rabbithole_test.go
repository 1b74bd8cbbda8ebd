package broker_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestRabbitHoleErrors checks that the calls made through rabbit-hole
// (VHostExists, Apply's declarations) fail with the same typed errors as the
// client's own requests.
func TestRabbitHoleErrors(t *testing.T) {
	t.Parallel()
	released := make(chan struct{}) // frees the slow requests when the test ends
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimPrefix(r.URL.EscapedPath(), "/api/vhosts/") {
		case "unauthorized":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"not_authorized","reason":"Not management user"}`))
		case "broken":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":"internal_error","reason":"something broke"}`))
		case "slow":
			select {
			case <-r.Context().Done():
			case <-released:
			}
		case "missing":
			http.NotFound(w, r)
		default:
			_, _ = w.Write([]byte(`{"name":"x"}`))
		}
	}))
	t.Cleanup(server.Close)
	t.Cleanup(func() { close(released) })
	client, err := broker.New(broker.Config{Endpoint: server.URL, Username: "alice", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	vhostExists := func(ctx context.Context, vhost string) error {
		_, err := client.VHostExists(ctx, vhost)
		return err
	}

	t.Run("401 names the user and keeps the broker's reason", func(t *testing.T) {
		t.Parallel()
		err := vhostExists(t.Context(), "unauthorized")
		var authErr *broker.AuthError
		if !errors.As(err, &authErr) || authErr.Username != "alice" || authErr.Reason != "Not management user" {
			t.Errorf("error = %v, want an *AuthError for alice with the reason Not management user", err)
		}
	})
	t.Run("other statuses are APIError with method, path and reason", func(t *testing.T) {
		t.Parallel()
		err := vhostExists(t.Context(), "broken")
		var apiErr *broker.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Code != "internal_error" ||
			apiErr.Reason != "something broke" || apiErr.Method != http.MethodGet || apiErr.Path != "/api/vhosts/broken" {
			t.Errorf("error = %#v, want *APIError GET /api/vhosts/broken 500 with code and reason", err)
		}
	})
	t.Run("404 is a missing vhost", func(t *testing.T) {
		t.Parallel()
		if exists, err := client.VHostExists(t.Context(), "missing"); exists || err != nil {
			t.Errorf("VHostExists() = %v, %v; want false, nil", exists, err)
		}
	})
	t.Run("the client's timeout bounds each call", func(t *testing.T) {
		t.Parallel()
		// The server holds the request until the test ends: only the
		// client's timeout can end the call before that.
		started, returned := time.Now(), make(chan error, 1)
		go func() { returned <- vhostExists(t.Context(), "slow") }()
		var err error
		select {
		case err = <-returned:
		case <-time.After(testHangSlack):
			t.Fatal("hung: the call did not return while the server held its request")
		}
		t.Logf("the call returned after %s", time.Since(started))
		var unreachable *broker.UnreachableError
		if !errors.As(err, &unreachable) || !strings.Contains(err.Error(), "no answer within 200ms") {
			t.Errorf("error = %v, want *UnreachableError with no answer within 200ms", err)
		}
	})
	t.Run("a call does not start once the context has ended", func(t *testing.T) {
		t.Parallel()
		own, err := broker.New(broker.Config{Endpoint: server.URL})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		queue := topology.Queue{Name: "q"}
		err = own.Apply(ctx, "/", []topology.Change{{Kind: topology.CreateQueue, Queue: &queue}}, broker.ApplyOptions{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Apply() error = %v, want context.Canceled", err)
		}
		if _, err := own.VHostExists(ctx, "/"); !errors.Is(err, context.Canceled) {
			t.Errorf("VHostExists() error = %v, want context.Canceled", err)
		}
		if own.Requests() != 0 {
			t.Errorf("Requests() = %d after calls with an ended context, want 0", own.Requests())
		}
	})
}

// TestRabbitHoleCallsKeepConnectionsAlive checks that rabbit-hole's request
// to close each connection is not followed: a run of calls shares one.
func TestRabbitHoleCallsKeepConnectionsAlive(t *testing.T) {
	t.Parallel()
	var connections atomic.Int64
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"name":"/"}`))
	}))
	server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			connections.Add(1)
		}
	}
	server.Start()
	t.Cleanup(server.Close)
	client, err := broker.New(broker.Config{Endpoint: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 5
	for range calls {
		if _, err := client.VHostExists(t.Context(), "/"); err != nil {
			t.Fatal(err)
		}
	}
	if got := client.Requests(); got != calls {
		t.Errorf("Requests() = %d, want %d", got, calls)
	}
	if got := connections.Load(); got != 1 {
		t.Errorf("%d calls opened %d connections, want 1", calls, got)
	}
}

// TestApplyLogsEveryRequest checks that an operation's logged request count
// includes the requests made through rabbit-hole, which carry no context.
func TestApplyLogsEveryRequest(t *testing.T) {
	t.Parallel()
	fake := &fakeBroker{}
	var logged []map[string]any
	client := brokertest.NewClient(t, fake, broker.Config{Logf: func(_ context.Context, _ string, fields map[string]any) {
		logged = append(logged, fields)
	}})
	exchange := topology.Exchange{Name: "d.ingest", Type: topology.ExchangeTopic}
	queue := topology.Queue{Name: "d.level.00", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}}
	changes := []topology.Change{
		{Kind: topology.CreateExchange, Exchange: &exchange},
		{Kind: topology.CreateQueue, Queue: &queue},
		{Kind: topology.CreateBinding, Binding: &topology.Binding{Source: exchange.Name, Destination: queue.Name, RoutingKey: "#"}},
	}
	if err := client.Apply(t.Context(), "/", changes, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(logged) != 1 || logged[0]["requests"] != int64(3) || client.Requests() != 3 {
		t.Errorf("Logf got %v and Requests() = %d, want one call with requests 3, and 3", logged, client.Requests())
	}
}
