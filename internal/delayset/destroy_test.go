package delayset_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func TestDestroy(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	level := spec.CurrentGeneration().Queues(spec.Name)[0]
	tests := []struct {
		name     string
		script   brokertest.Messages
		force    bool
		refused  string // in the error; "" when the set goes
		vhostOff bool
	}{
		{name: "an empty set goes"},
		{name: "a queue holding messages refuses the whole destroy", script: brokertest.Messages{Held: []int64{3}},
			refused: level + " holds 3 message(s)"},
		{name: "a queue the broker cannot count refuses it too", script: brokertest.Messages{Uncounted: "no statistics"},
			refused: "no statistics"},
		{name: "force deletes a queue holding messages", script: brokertest.Messages{Held: []int64{3}}, force: true},
		{name: "a vhost that is gone took the set with it", vhostOff: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _, sets, remembered := created(t, spec)
			b.Script("/", level, tt.script)
			before, _ := b.Topology("/")
			if tt.vhostOff {
				b.DeleteVHost("/")
			}
			err := sets.Destroy(t.Context(), remembered, tt.force)
			after, _ := b.Topology("/")
			if tt.refused != "" {
				var held *delayset.HoldsMessagesError
				if !errors.As(err, &held) || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("Destroy = %v, want a refusal naming %q", err, tt.refused)
				}
				if strings.Contains(err.Error(), "force_destroy") {
					t.Errorf("the refusal names a Terraform attribute, which is the provider's to word: %v", err)
				}
				if len(after.Queues) != len(before.Queues) || len(after.Exchanges) != len(before.Exchanges) || len(after.Bindings) != len(before.Bindings) {
					t.Errorf("a refused destroy changed the set: %d/%d/%d objects, was %d/%d/%d", len(after.Exchanges), len(after.Queues),
						len(after.Bindings), len(before.Exchanges), len(before.Queues), len(before.Bindings))
				}
				if changes := applied(b); len(changes) > 0 {
					t.Errorf("a refused destroy applied %d changes", len(changes))
				}
				return
			}
			if err != nil {
				t.Fatalf("Destroy = %v", err)
			}
			if len(after.Queues)+len(after.Exchanges)+len(after.Bindings) > 0 {
				t.Errorf("after Destroy the broker holds %v", after)
			}
			if calls := b.CallsOf(brokertest.MethodHeldMessages); tt.force && len(calls) > 0 {
				t.Errorf("a forced destroy counted messages: %+v", calls)
			}
		})
	}
}

// TestDestroyReadsWhatThePlanDoesNotName: a state whose last refresh showed
// an object its plan does not name (a stray queue bound from the set) is
// read before the destroy, so the stray goes too; a state that shows only
// the plan is not.
func TestDestroyReadsWhatThePlanDoesNotName(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	b, _, sets, remembered := created(t, spec)
	stray := topology.Queue{Name: "delay.level.99", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
	bound := topology.Binding{Source: remembered.Shown.Exchanges[0].Name, Destination: stray.Name,
		DestinationType: topology.DestinationQueue, RoutingKey: "#.stray"}
	b.Declare(topology.Topology{VHost: "/", Queues: []topology.Queue{stray}, Bindings: []topology.Binding{bound}})
	remembered.Shown.Queues = append(remembered.Shown.Queues, stray)
	remembered.Shown.Bindings = append(remembered.Shown.Bindings, bound)
	if err := sets.Destroy(t.Context(), remembered, false); err != nil {
		t.Fatal(err)
	}
	if after, _ := b.Topology("/"); len(after.Queues) > 0 {
		t.Errorf("the destroy left %v", queueNames(after))
	}
	if len(b.CallsOf(brokertest.MethodReadSetNamed)) != 1 {
		t.Errorf("reads: %+v; want one read of the set by name", b.Calls())
	}

	b, _, sets, remembered = created(t, spec)
	if err := sets.Destroy(t.Context(), remembered, false); err != nil {
		t.Fatal(err)
	}
	if reads := len(b.CallsOf(brokertest.MethodReadSetNamed)) + len(b.CallsOf(brokertest.MethodReadSetOf)); reads != 0 {
		t.Errorf("a state showing only its plan was read %d times before its destroy", reads)
	}
}
