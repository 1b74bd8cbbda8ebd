package broker_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// fakeBroker answers the management API requests of a read from canned
// JSON, and records what it was asked and sent.
type fakeBroker struct {
	exchanges, queues string            // listing items, JSON arrays
	bindings          map[string]string // exchange name → bindings/source JSON array

	mu       sync.Mutex
	requests []string          // "GET /api/… ?query"
	bodies   map[string]string // "PUT /api/…" → body
}

func (f *fakeBroker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.EscapedPath()+" "+r.URL.RawQuery)
	if len(body) > 0 {
		if f.bodies == nil {
			f.bodies = map[string]string{}
		}
		f.bodies[r.Method+" "+r.URL.EscapedPath()] = string(body)
	}
	f.mu.Unlock()

	path := r.URL.EscapedPath()
	listing := func(items string) {
		_, _ = io.WriteString(w, `{"filtered_count":`+itemCount(items)+`,"items":`+items+`}`)
	}
	switch {
	case r.Method != http.MethodGet:
		w.WriteHeader(http.StatusCreated)
	case path == "/api/exchanges/%2F":
		listing(f.exchanges)
	case path == "/api/queues/%2F":
		listing(f.queues)
	case strings.HasSuffix(path, "/bindings/source"):
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/exchanges///"), "/bindings/source")
		_, _ = io.WriteString(w, cmp.Or(f.bindings[name], "[]"))
	default:
		http.NotFound(w, r)
	}
}

// itemCount counts the items of a JSON array, for filtered_count.
func itemCount(items string) string {
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(items), &list); err != nil {
		panic(err)
	}
	return strconv.Itoa(len(list))
}

func TestReadSetMapsTheBrokersJSON(t *testing.T) {
	t.Parallel()
	fake := &fakeBroker{
		exchanges: `[
			{"name":"d.ingest","type":"topic","durable":true,"auto_delete":false,"internal":false,"arguments":{"alternate-exchange":"d.unroutable"}},
			{"name":"d.out","type":"topic","durable":false,"auto_delete":true,"internal":true,"arguments":{"alternate-exchange":"","x-custom":{"a": [1, 2]}}},
			{"name":"D.OUT","type":"topic","durable":true,"auto_delete":false,"internal":false,"arguments":{}}
		]`,
		queues: `[
			{"name":"d.level.00","type":"classic","durable":true,"auto_delete":false,"exclusive":false,
			 "arguments":{"x-message-ttl":1000,"x-dead-letter-exchange":"d.level.00.done","x-queue-type":"classic"}},
			{"name":"d.level.01","type":"classic","durable":false,"auto_delete":"undefined","exclusive":false,
			 "arguments":{"x-message-ttl":2000,"x-dead-letter-exchange":""}},
			{"name":"d.level.02","type":"quorum","durable":true,"auto_delete":false,"exclusive":false,
			 "arguments":{"x-message-ttl":"4000","x-queue-type":"quorum","x-dead-letter-strategy":"at-least-once","x-overflow":"reject-publish","x-max-length":10}},
			{"name":"d.LEVEL.03","type":"classic","durable":true,"auto_delete":false,"exclusive":false,"arguments":{}}
		]`,
		bindings: map[string]string{
			"d.ingest": `[
				{"source":"d.ingest","destination":"d.level.00","destination_type":"queue","routing_key":"#.1","arguments":{},"properties_key":"%23.1"},
				{"source":"d.ingest","destination":"d.out","destination_type":"exchange","routing_key":"#.0","arguments":{},"properties_key":"%23.0"},
				{"source":"","destination":"d.level.00","destination_type":"queue","routing_key":"d.level.00","arguments":{},"properties_key":"d.level.00"}
			]`,
			"D.OUT": `[{"source":"D.OUT","destination":"elsewhere","destination_type":"queue","routing_key":"#","arguments":{},"properties_key":"%23"}]`,
		},
	}
	var logged []map[string]any
	client := brokertest.NewClient(t, fake, broker.Config{Logf: func(_ context.Context, msg string, fields map[string]any) {
		logged = append(logged, fields)
	}})

	got, err := client.ReadSet(t.Context(), "/", "d")
	if err != nil {
		t.Fatal(err)
	}
	want := topology.Topology{
		VHost: "/",
		Exchanges: []topology.Exchange{
			{Name: "d.ingest", Type: "topic", Arguments: topology.ExchangeArguments{AlternateExchange: "d.unroutable"}},
			{Name: "d.out", Type: "topic", Arguments: topology.ExchangeArguments{Other: map[string]string{
				"alternate-exchange": `""`, "x-custom": `{"a":[1,2]}`,
				"durable": "false", "auto_delete": "true", "internal": "true",
			}}},
		},
		Queues: []topology.Queue{
			{Name: "d.level.00", Arguments: topology.QueueArguments{MessageTTL: 1000, DeadLetterExchange: "d.level.00.done", QueueType: "classic"}},
			// No x-queue-type: the broker's type says classic all the same.
			{Name: "d.level.01", Arguments: topology.QueueArguments{MessageTTL: 2000, QueueType: "classic", Other: map[string]string{
				"x-dead-letter-exchange": `""`, "durable": "false",
			}}},
			{Name: "d.level.02", Arguments: topology.QueueArguments{
				QueueType: "quorum", DeadLetterStrategy: "at-least-once", Overflow: "reject-publish",
				Other: map[string]string{"x-message-ttl": `"4000"`, "x-max-length": "10"},
			}},
		},
		Bindings: []topology.Binding{
			{Source: "d.ingest", Destination: "d.out", DestinationType: "exchange", RoutingKey: "#.0"},
			{Source: "d.ingest", Destination: "d.level.00", DestinationType: "queue", RoutingKey: "#.1"},
		},
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("ReadSet() mismatch (-want +got):\n%s", diff)
	}

	// Two filtered listings, then one binding listing per exchange of the set.
	pattern := topology.Names("d").ObjectNamePattern()
	wantRequests := map[string]bool{
		"GET /api/exchanges/%2F " + listingQuery(pattern):  true,
		"GET /api/queues/%2F " + listingQuery(pattern):     true,
		"GET /api/exchanges/%2F/d.ingest/bindings/source ": true,
		"GET /api/exchanges/%2F/d.out/bindings/source ":    true,
	}
	gotRequests := map[string]bool{}
	for _, r := range fake.requests {
		gotRequests[r] = true
	}
	if diff := gocmp.Diff(wantRequests, gotRequests); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	if client.Requests() != 4 {
		t.Errorf("Requests() = %d, want 4", client.Requests())
	}
	if len(logged) != 1 || logged[0]["requests"] != int64(4) || logged[0]["set"] != "d" {
		t.Errorf("Logf got %v, want one call with requests 4 and set d", logged)
	}
}

func listingQuery(pattern string) string {
	return url.Values{
		"disable_stats": {"true"}, "name": {pattern}, "page": {"1"}, "page_size": {"500"}, "use_regex": {"true"},
	}.Encode()
}

func TestApplyDeclaresWhatReadSetReads(t *testing.T) {
	t.Parallel()
	fake := &fakeBroker{}
	client := brokertest.NewClient(t, fake, broker.Config{})
	queue := topology.Queue{Name: "d.level.05", Arguments: topology.QueueArguments{
		MessageTTL: 315_360_000_000, DeadLetterExchange: "d.level.05.done", QueueType: "quorum",
		DeadLetterStrategy: "at-least-once", Overflow: "reject-publish", Other: map[string]string{"x-max-length": "10"},
	}}
	nonDurable := topology.Queue{Name: "d.level.00", Arguments: topology.QueueArguments{QueueType: "classic", Other: map[string]string{"durable": "false"}}}
	exchange := topology.Exchange{Name: "d.ingest", Type: "topic", Arguments: topology.ExchangeArguments{AlternateExchange: "d.unroutable"}}
	internal := topology.Exchange{Name: "d.out", Type: "topic", Arguments: topology.ExchangeArguments{Other: map[string]string{"internal": "true"}}}
	changes := []topology.Change{
		{Kind: topology.CreateExchange, Exchange: &exchange},
		{Kind: topology.CreateExchange, Exchange: &internal},
		{Kind: topology.CreateQueue, Queue: &queue},
		{Kind: topology.CreateQueue, Queue: &nonDurable},
		{Kind: topology.CreateBinding, Binding: &topology.Binding{Source: "d.ingest", Destination: "d.level.05", RoutingKey: "#.1.*"}},
	}
	if err := client.Apply(t.Context(), "/", changes, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// rabbit-hole's encoding: auto_delete and internal only when true (the
	// broker's default is false), the queue type also as "type".
	want := map[string]string{
		"PUT /api/exchanges/%2F/d.ingest": `{"type":"topic","durable":true,"arguments":{"alternate-exchange":"d.unroutable"}}`,
		// rabbit-hole cannot declare an internal exchange: the client does.
		"PUT /api/exchanges/%2F/d.out": `{"arguments":{},"auto_delete":false,"durable":true,"internal":true,"type":"topic"}`,
		// The TTL is a JSON integer, as the broker insists.
		"PUT /api/queues/%2F/d.level.05":                 `{"type":"quorum","durable":true,"arguments":{"x-dead-letter-exchange":"d.level.05.done","x-dead-letter-strategy":"at-least-once","x-max-length":10,"x-message-ttl":315360000000,"x-overflow":"reject-publish","x-queue-type":"quorum"}}`,
		"PUT /api/queues/%2F/d.level.00":                 `{"type":"classic","durable":false,"arguments":{"x-queue-type":"classic"}}`,
		"POST /api/bindings/%2F/e/d.ingest/q/d.level.05": `{"source":"d.ingest","vhost":"/","destination":"d.level.05","destination_type":"queue","routing_key":"#.1.*","arguments":{}}`,
	}
	if diff := gocmp.Diff(want, fake.bodies); diff != "" {
		t.Errorf("request bodies mismatch (-want +got):\n%s", diff)
	}
}
