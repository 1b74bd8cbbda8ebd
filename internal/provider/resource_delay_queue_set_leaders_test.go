package provider

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider/drain"
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
			ctx := context.Background()
			schema := delayQueueSetSchema()
			// The configuration: what the test sets, the rest null, as written.
			config := testModelOf(t, tc.config)
			config.QueueLeaderLocator = optionalString(string(tc.config.QueueLeaderLocator))
			config.DeadLetterStrategy, config.Generation, config.ExchangeGeneration = types.StringNull(), types.Int64Null(), types.Int64Null()
			configValue := tfsdk.Plan{Schema: schema}
			if diags := configValue.Set(ctx, &config); diags.HasError() {
				t.Fatal(diags)
			}
			req := fwresource.ModifyPlanRequest{
				Config: tfsdk.Config{Schema: schema, Raw: configValue.Raw},
				Plan:   configValue,
				State:  tfsdk.State{Schema: schema, Raw: tftypes.NewValue(schema.Type().TerraformType(ctx), nil)},
			}
			if tc.state != nil {
				m := testModelOf(t, *tc.state)
				m.Placement = types.StringValue("delay.level.00: leader rabbit@a, members rabbit@a")
				m.Leaders = types.MapValueMust(types.Int64Type, map[string]attr.Value{"rabbit@a": types.Int64Value(1)})
				if tc.drifted {
					m.Queues = types.StringValue(strings.Join(slices.DeleteFunc(strings.Split(m.Queues.ValueString(), "\n"),
						func(line string) bool { return topology.LineName(line) == "delay.level.01" }), "\n"))
				}
				state := tfsdk.State{Schema: schema}
				if diags := state.Set(ctx, &m); diags.HasError() {
					t.Fatal(diags)
				}
				req.State = state
				// The framework plans a computed value the configuration
				// leaves null as the state has it.
				config.Placement, config.Leaders = m.Placement, m.Leaders
				if diags := req.Plan.Set(ctx, &config); diags.HasError() {
					t.Fatal(diags)
				}
			}
			resp := fwresource.ModifyPlanResponse{Plan: req.Plan}
			(&DelayQueueSetResource{data: &providerData{clock: drain.SystemClock{}}}).ModifyPlan(ctx, req, &resp) // configured, as the framework calls it
			if resp.Diagnostics.HasError() {
				t.Fatal(resp.Diagnostics)
			}
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
