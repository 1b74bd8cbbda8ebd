package provider

import (
	"context"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestDelayQueueSet_modifyPlanLeaderLocator calls ModifyPlan for new sets
// and for sets whose state says a locator, or none (a state written before
// queue_leader_locator existed): unset, a set keeps its own while its
// queues stay, and new queues get balanced where they are quorum queues. A
// set whose plan is its state stays so, placement included; any other
// update, a repair of drift too, leaves the placement to the apply.
func TestDelayQueueSet_modifyPlanLeaderLocator(t *testing.T) {
	t.Parallel()
	quorum := topology.Spec{Name: "delay", VHost: "/", Levels: 3}
	classic := topology.Spec{Name: "delay", VHost: "/", Levels: 3, QueueType: topology.QueueTypeClassic}
	tests := map[string]struct {
		state      *topology.Spec // nil: create
		config     topology.Spec  // its QueueLeaderLocator "" is unset
		want       string         // "" is null
		generation int64
		drifted    bool // a level queue of the state is gone from the broker
		unchanged  bool // the plan is the state
	}{
		"new quorum set":                      {config: quorum, want: "balanced"},
		"new classic set":                     {config: classic},
		"new set, client-local":               {config: with(quorum, topology.LeaderLocatorClientLocal), want: "client-local"},
		"set from before, unset: no change":   {state: &quorum, config: quorum, unchanged: true},
		"set from before, drifted":            {state: &quorum, config: quorum, drifted: true},
		"set from before, asks for balanced":  {state: &quorum, config: with(quorum, topology.LeaderLocatorBalanced), want: "balanced", generation: 1},
		"set from before, now classic":        {state: &quorum, config: classic, generation: 1},
		"classic set from before, now quorum": {state: &classic, config: quorum, want: "balanced", generation: 1},
		"balanced set, unset: kept":           {state: ptr(with(quorum, topology.LeaderLocatorBalanced)), config: quorum, want: "balanced", unchanged: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The configuration: what the test sets, the rest null, as written.
			config := testModelOf(t, tc.config)
			config.QueueLeaderLocator = optionalString(string(tc.config.QueueLeaderLocator))
			req, resp := modifyPlanOf(t, tc.state, config, tc.drifted)
			ctx := context.Background()
			var got delayQueueSetModel
			if diags := resp.Plan.Get(ctx, &got); diags.HasError() {
				t.Fatal(diags)
			}
			if want := optionalString(tc.want); !got.QueueLeaderLocator.Equal(want) || got.Generation.ValueInt64() != tc.generation {
				t.Errorf("the plan says queue_leader_locator %s at generation %s, want %s at %d",
					got.QueueLeaderLocator, got.Generation, want, tc.generation)
			}
			if unchanged := resp.Plan.Raw.Equal(req.State.Raw); unchanged != tc.unchanged {
				t.Errorf("the plan is the state: %t, want %t", unchanged, tc.unchanged)
			}
			// A create's are unknown before ModifyPlan: the framework's.
			if known := !got.Placement.IsUnknown() && !got.Leaders.IsUnknown(); tc.state != nil && known != tc.unchanged {
				t.Errorf("placement %s and leaders %s planned known: %t, want %t (only when nothing changes)", got.Placement, got.Leaders, known, tc.unchanged)
			}
		})
	}
}

func with(s topology.Spec, locator topology.LeaderLocator) topology.Spec {
	s.QueueLeaderLocator = locator
	return s
}
