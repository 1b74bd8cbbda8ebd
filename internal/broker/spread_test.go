package broker_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// clusterVHosts is a fake management API of a cluster whose vhost "/"
// runs on running of its nodes: it answers the vhost's cluster_state (to
// administrators only, when adminOnly, as RabbitMQ does; the listing to
// anyone) and records each queue declaration's body.
type clusterVHosts struct {
	running, stopped []string
	adminOnly        bool

	mu           sync.Mutex
	declarations map[string]map[string]any // queue → body
	vhostReads   []string
}

func (f *clusterVHosts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	f.mu.Lock()
	defer f.mu.Unlock()
	state := map[string]string{}
	for _, n := range f.running {
		state[n] = "running"
	}
	for _, n := range f.stopped {
		state[n] = "stopped"
	}
	vhost := map[string]any{"name": "/", "cluster_state": state}
	switch {
	case r.Method == http.MethodGet && path == "/api/vhosts/%2F" && f.adminOnly:
		f.vhostReads = append(f.vhostReads, path)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"not_authorised","reason":"Not administrator user"}`)
	case r.Method == http.MethodGet && path == "/api/vhosts/%2F":
		f.vhostReads = append(f.vhostReads, path)
		_ = json.NewEncoder(w).Encode(vhost)
	case r.Method == http.MethodGet && path == "/api/vhosts":
		f.vhostReads = append(f.vhostReads, path)
		_ = json.NewEncoder(w).Encode([]any{map[string]any{"name": "other", "cluster_state": map[string]string{}}, vhost})
	case r.Method == http.MethodPut && strings.HasPrefix(path, "/api/queues/%2F/"):
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if f.declarations == nil {
			f.declarations = map[string]map[string]any{}
		}
		f.declarations[strings.TrimPrefix(path, "/api/queues/%2F/")] = body
		w.WriteHeader(http.StatusCreated)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// declaredNodes are the nodes the declarations named, by queue ("" for
// none), and each declaration's x-quorum-initial-group-size.
func (f *clusterVHosts) declaredNodes() (nodes map[string]string, sizes map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	nodes, sizes = map[string]string{}, map[string]any{}
	for queue, body := range f.declarations {
		node, _ := body["node"].(string)
		nodes[queue] = node
		arguments, _ := body["arguments"].(map[string]any)
		sizes[queue] = arguments["x-quorum-initial-group-size"]
	}
	return nodes, sizes
}

// TestApplySpreadsDeclarationsOverTheNodes checks the requests: the TTL
// queues of a set with a group size smaller than the nodes the vhost runs
// on, and balanced leaders, are declared through those nodes in turn (a
// stopped one left out), each with the size as a JSON integer; the parking
// lot, which has no size, and the queues of sets whose size covers every
// node or whose leaders are client-local go through the node that answers.
func TestApplySpreadsDeclarationsOverTheNodes(t *testing.T) {
	t.Parallel()
	nodes := []string{"rabbit@a", "rabbit@b", "rabbit@c", "rabbit@d"}
	tests := map[string]struct {
		spec      topology.Spec
		adminOnly bool
		spread    bool
	}{
		"size 2 of 4 nodes":            {spec: topology.Spec{QuorumInitialGroupSize: 2}, spread: true},
		"size 3, vhost read by a user": {spec: topology.Spec{QuorumInitialGroupSize: 3}, adminOnly: true, spread: true},
		"size 4: every node":           {spec: topology.Spec{QuorumInitialGroupSize: 4}},
		"no size":                      {spec: topology.Spec{}},
		"client-local": {spec: topology.Spec{QuorumInitialGroupSize: 2,
			QueueLeaderLocator: topology.LeaderLocatorClientLocal}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := &clusterVHosts{running: nodes, stopped: []string{"rabbit@e"}, adminOnly: tc.adminOnly}
			client := brokertest.NewClient(t, fake, broker.Config{})
			spec := tc.spec
			spec.Name, spec.VHost, spec.Levels, spec.Radix = "d", "/", 2, 4
			resolved, err := topology.NewSet(spec)
			if err != nil {
				t.Fatal(err)
			}
			planned, err := topology.Plan(resolved)
			if err != nil {
				t.Fatal(err)
			}
			var queues []topology.Change
			for _, c := range topology.Diff(planned, topology.Topology{VHost: "/"}) {
				if c.Kind == topology.CreateQueue {
					queues = append(queues, c)
				}
			}
			if err := client.Apply(t.Context(), "/", queues, broker.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			got, sizes := fake.declaredNodes()
			checkSpread(t, got, sizes, planned, nodes, tc.spread, resolved.QuorumInitialGroupSize)
			if !tc.spread && len(fake.vhostReads) > 0 && tc.spec.QuorumInitialGroupSize == 0 {
				t.Errorf("a set without a group size read the vhost's nodes: %v", fake.vhostReads)
			}
		})
	}
}

// checkSpread checks the nodes the declarations named: the TTL queues
// through each node in turn when spread, through none otherwise; the
// parking lot through none.
func checkSpread(t *testing.T, got map[string]string, sizes map[string]any, planned topology.Topology, nodes []string, spread bool, size int) {
	t.Helper()
	perNode := map[string]int{}
	for i, q := range planned.Queues {
		node := got[q.Name]
		wantSize := any(nil)
		if q.Name != "d.unroutable" && size > 0 {
			wantSize = float64(size)
		}
		if !gocmp.Equal(sizes[q.Name], wantSize) {
			t.Errorf("%s: declared with x-quorum-initial-group-size %v, want %v", q.Name, sizes[q.Name], wantSize)
		}
		switch {
		case !spread || q.Name == "d.unroutable":
			if node != "" {
				t.Errorf("%s: declared through %q, want the node that answers", q.Name, node)
			}
		case i > 0 && node != nodes[(indexOf(nodes, got[planned.Queues[0].Name])+i)%len(nodes)]:
			t.Errorf("%s (queue %d): declared through %q, not the node after the previous queue's", q.Name, i, node)
		default:
			perNode[node]++
		}
	}
	if spread && len(perNode) != len(nodes) {
		t.Errorf("the TTL queues went through %v, want each of the %d running nodes", perNode, len(nodes))
	}
}

func indexOf(nodes []string, node string) int {
	for i, n := range nodes {
		if n == node {
			return i
		}
	}
	return -1
}

// TestReadSetTypesTheGroupSize checks that a read gives
// x-quorum-initial-group-size its typed field when it is a whole number of
// at least 1, and keeps anything else visible as drift.
func TestReadSetTypesTheGroupSize(t *testing.T) {
	t.Parallel()
	fake := &fakeBroker{queues: `[
		{"name":"d.level.00","type":"quorum","durable":true,"arguments":{"x-queue-type":"quorum","x-quorum-initial-group-size":2}},
		{"name":"d.level.01","type":"quorum","durable":true,"arguments":{"x-queue-type":"quorum","x-quorum-initial-group-size":"2"}},
		{"name":"d.level.02","type":"quorum","durable":true,"arguments":{"x-queue-type":"quorum","x-quorum-initial-group-size":0}}
	]`, exchanges: `[]`}
	got, err := brokertest.NewClient(t, fake, broker.Config{}).ReadSet(t.Context(), "/", "d")
	if err != nil {
		t.Fatal(err)
	}
	want := []topology.Queue{
		{Name: "d.level.00", Arguments: topology.QueueArguments{QueueType: "quorum", QuorumInitialGroupSize: 2}},
		{Name: "d.level.01", Arguments: topology.QueueArguments{QueueType: "quorum", Other: map[string]string{"x-quorum-initial-group-size": `"2"`}}},
		{Name: "d.level.02", Arguments: topology.QueueArguments{QueueType: "quorum", Other: map[string]string{"x-quorum-initial-group-size": "0"}}},
	}
	if d := gocmp.Diff(want, got.Queues); d != "" {
		t.Errorf("queues (-want +got):\n%s", d)
	}
}
