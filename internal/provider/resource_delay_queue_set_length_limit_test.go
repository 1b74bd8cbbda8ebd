package provider

import (
	"strings"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestLengthLimitDiagnostics: a length limit on a set's TTL queues that
// sends messages early is one warning naming the policy, the limit, the
// queues and what to change; a limit on the parking lot alone, or queues
// that overflow with reject-publish, none.
func TestLengthLimitDiagnostics(t *testing.T) {
	t.Parallel()
	spec := topology.Spec{Name: "retries", VHost: "managed"}
	level := func(name, overflow string) topology.Queue {
		return topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum, MessageTTL: 1000, Overflow: overflow}}
	}
	parking := topology.Queue{Name: "retries.unroutable", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
	tenant := broker.VHostPolicies{OperatorPolicies: []broker.Policy{{Name: "tenant-limits", Pattern: ".*", ApplyTo: "queues",
		Definition: map[string]any{"max-length": 20.0, "delivery-limit": 3.0}}}}
	tests := map[string]struct {
		policies broker.VHostPolicies
		queues   []topology.Queue
		want     []string // in the detail; none: no diagnostic
	}{
		"at-most-once levels under an operator policy": {
			policies: tenant,
			queues:   []topology.Queue{level("retries.level.00", ""), level("retries.level.01", ""), level("retries.level.02", ""), parking},
			want: []string{`operator policy "tenant-limits" of vhost "managed" limits the length of 3 of the 3 TTL queues`,
				`"retries"`, "max-length 20, overflow drop-head", `"retries.level.00", "retries.level.01" and 1 more`,
				"before its delay is over", "exclude the set's queues", `dead_letter_strategy = "at-least-once"`},
		},
		"at-least-once levels": {
			policies: tenant,
			queues:   []topology.Queue{level("retries.level.00", "reject-publish"), parking},
		},
		"a limit on the parking lot alone": {
			policies: broker.VHostPolicies{Policies: []broker.Policy{{Name: "park", Pattern: `\.unroutable$`,
				Definition: map[string]any{"max-length": 5.0}}}},
			queues: []topology.Queue{level("retries.level.00", ""), parking},
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags := lengthLimitDiagnostics(spec, test.queues, test.policies)
			if len(test.want) == 0 {
				if len(diags) > 0 {
					t.Errorf("diagnostics = %v, want none", diags)
				}
				return
			}
			if len(diags) != 1 || diags.WarningsCount() != 1 || diags[0].Summary() != "Queue Length Limit Sends Delayed Messages Early" {
				t.Fatalf("diagnostics = %v, want one warning", diags)
			}
			for _, want := range test.want {
				if !strings.Contains(diags[0].Detail(), want) {
					t.Errorf("the warning's detail lacks %q:\n%s", want, diags[0].Detail())
				}
			}
		})
	}
}
