package broker

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestLengthLimitOf holds the broker's rules for a queue's length limit:
// the highest-priority policy and operator policy that match the queue's
// name and type apply, the lower limit holds, and the queue's x-overflow
// wins over the policy's overflow.
func TestLengthLimitOf(t *testing.T) {
	t.Parallel()
	quorum := func(name string, overflow string) topology.Queue {
		return topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum,
			MessageTTL: 1000, Overflow: overflow}}
	}
	operator := Policy{Name: "tenant-limits", Pattern: ".*", ApplyTo: "queues",
		Definition: map[string]any{"max-length": 20.0, "delivery-limit": 3.0}}
	tests := map[string]struct {
		policies   VHostPolicies
		queue      topology.Queue
		want       LengthLimit
		sendsEarly bool
	}{
		"no policies": {
			queue: quorum("d.level.00", ""), want: LengthLimit{Overflow: OverflowDropHead},
		},
		"operator policy on every queue": {
			policies: VHostPolicies{OperatorPolicies: []Policy{operator}},
			queue:    quorum("d.level.00", ""),
			want:     LengthLimit{MaxLength: 20, Overflow: OverflowDropHead, OperatorPolicy: "tenant-limits"}, sendsEarly: true,
		},
		"at-least-once queues overflow with reject-publish": {
			policies: VHostPolicies{OperatorPolicies: []Policy{operator}},
			queue:    quorum("d.level.00", OverflowRejectPublish),
			want:     LengthLimit{MaxLength: 20, Overflow: OverflowRejectPublish, OperatorPolicy: "tenant-limits"},
		},
		"a delivery limit alone limits no length": {
			policies: VHostPolicies{OperatorPolicies: []Policy{{Name: "dl", Pattern: ".*", ApplyTo: "queues",
				Definition: map[string]any{"delivery-limit": 3.0}}}},
			queue: quorum("d.level.00", ""), want: LengthLimit{Overflow: OverflowDropHead},
		},
		"the lower of policy and operator policy, the policy's overflow": {
			policies: VHostPolicies{
				Policies: []Policy{{Name: "mine", Pattern: "^d\\.", ApplyTo: "all",
					Definition: map[string]any{"max-length": 10.0, "max-length-bytes": 1e6, "overflow": "reject-publish-dlx"}}},
				OperatorPolicies: []Policy{operator},
			},
			queue: quorum("d.level.00", ""),
			want: LengthLimit{MaxLength: 10, MaxLengthBytes: 1000000, Overflow: OverflowRejectPublishDLX, Policy: "mine",
				OperatorPolicy: "tenant-limits"},
			sendsEarly: true,
		},
		"the highest priority applies": {
			policies: VHostPolicies{Policies: []Policy{
				{Name: "low", Pattern: ".*", Priority: 1, Definition: map[string]any{"max-length": 5.0}},
				{Name: "high", Pattern: ".*", Priority: 2, Definition: map[string]any{"message-ttl": 5.0}},
			}},
			queue: quorum("d.level.00", ""), want: LengthLimit{Overflow: OverflowDropHead},
		},
		"a pattern that does not match, a type it does not apply to": {
			policies: VHostPolicies{OperatorPolicies: []Policy{
				{Name: "others", Pattern: "^orders\\.", Definition: map[string]any{"max-length": 5.0}},
				{Name: "classic", Pattern: ".*", ApplyTo: "classic_queues", Definition: map[string]any{"max-length": 5.0}},
				{Name: "exchanges", Pattern: ".*", ApplyTo: "exchanges", Definition: map[string]any{"max-length": 5.0}},
				{Name: "not Go's", Pattern: "(?<name>x)", Definition: map[string]any{"max-length": 5.0}},
			}},
			queue: quorum("d.level.00", ""), want: LengthLimit{Overflow: OverflowDropHead},
		},
		"the queue's own x-max-length": {
			queue: topology.Queue{Name: "d.level.00", Arguments: topology.QueueArguments{MessageTTL: 1000,
				Other: map[string]string{"x-max-length": "7"}}},
			want: LengthLimit{MaxLength: 7, Overflow: OverflowDropHead}, sendsEarly: true,
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := test.policies.LengthLimitOf(test.queue)
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("LengthLimitOf mismatch (-want +got):\n%s", diff)
			}
			if got.SendsEarly() != test.sendsEarly {
				t.Errorf("SendsEarly() = %v, want %v", got.SendsEarly(), test.sendsEarly)
			}
		})
	}
}

// TestVHostPolicies reads a vhost's policies and operator policies once
// per client; a user the broker refuses them to gets none, and no error.
func TestVHostPolicies(t *testing.T) {
	t.Parallel()
	for name, status := range map[string]int{"readable": http.StatusOK, "not administrator": http.StatusUnauthorized, "forbidden": http.StatusForbidden} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var requests atomic.Int64
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				if status != http.StatusOK {
					w.WriteHeader(status)
					_, _ = w.Write([]byte(`{"error":"not_authorised","reason":"Not administrator user"}`))
					return
				}
				switch r.URL.EscapedPath() {
				case "/api/policies/managed":
					_, _ = w.Write([]byte(`[]`))
				case "/api/operator-policies/managed":
					_, _ = w.Write([]byte(`[{"vhost":"managed","name":"tenant-limits","pattern":".*","apply-to":"queues","definition":{"max-length":20},"priority":0}]`))
				default:
					w.WriteHeader(http.StatusNotFound)
				}
			}))
			defer server.Close()
			client, err := New(Config{Endpoint: server.URL, Username: "u", Password: "p"})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				policies, ok, err := client.VHostPolicies(t.Context(), "managed")
				if err != nil || ok != (status == http.StatusOK) {
					t.Fatalf("VHostPolicies = %v, %v; want readable %v and no error", ok, err, status == http.StatusOK)
				}
				if ok && policies.LengthLimitOf(topology.Queue{Name: "d.level.00"}).MaxLength != 20 {
					t.Errorf("policies %+v: no max-length 20 on d.level.00", policies)
				}
			}
			if want := map[bool]int64{true: 2, false: 1}[status == http.StatusOK]; requests.Load() != want {
				t.Errorf("%d requests for two reads, want %d (once per vhost)", requests.Load(), want)
			}
		})
	}
}
