package provider

import (
	"context"
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestDelayQueueSet_modifyPlanLeaderLocator calls ModifyPlan for new sets
// and for sets whose state says a locator, or none (a state written before
// queue_leader_locator existed): unset, a set keeps its own while its
// queues stay, and new queues get balanced where they are quorum queues.
func TestDelayQueueSet_modifyPlanLeaderLocator(t *testing.T) {
	t.Parallel()
	quorum := topology.Spec{Name: "delay", VHost: "/", Levels: 3}
	classic := topology.Spec{Name: "delay", VHost: "/", Levels: 3, QueueType: topology.QueueTypeClassic}
	tests := map[string]struct {
		state      *topology.Spec // nil: create
		config     topology.Spec  // its QueueLeaderLocator "" is unset
		want       string         // "" is null
		generation int64
	}{
		"new quorum set":                      {config: quorum, want: "balanced"},
		"new classic set":                     {config: classic},
		"new set, client-local":               {config: with(quorum, topology.LeaderLocatorClientLocal), want: "client-local"},
		"set from before, unset: no change":   {state: &quorum, config: quorum},
		"set from before, asks for balanced":  {state: &quorum, config: with(quorum, topology.LeaderLocatorBalanced), want: "balanced", generation: 1},
		"set from before, now classic":        {state: &quorum, config: classic, generation: 1},
		"classic set from before, now quorum": {state: &classic, config: quorum, want: "balanced", generation: 1},
		"balanced set, unset: kept":           {state: ptr(with(quorum, topology.LeaderLocatorBalanced)), config: quorum, want: "balanced"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			schema := delayQueueSetSchema()
			model := func(spec topology.Spec) delayQueueSetModel {
				resolved, err := topology.Resolve(spec)
				if err != nil {
					t.Fatal(err)
				}
				planned, err := topology.Plan(resolved)
				if err != nil {
					t.Fatal(err)
				}
				m := delayQueueSetModel{ForceDestroy: types.BoolValue(false), MigrationWait: types.StringValue("10s")}
				m.Name, m.MaxDelay = types.StringValue(spec.Name), types.StringNull()
				m.Routes = types.ListValueMust(routeObjectType, nil)
				m.Draining = types.ListValueMust(drainingObjectType, nil)
				m.Leaders = types.MapNull(types.Int64Type)
				setPlanned(&m, resolved, planned)
				return m
			}
			// The configuration: what the test sets, the rest null, as written.
			config := model(tc.config)
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
				state := tfsdk.State{Schema: schema}
				m := model(*tc.state)
				if diags := state.Set(ctx, &m); diags.HasError() {
					t.Fatal(diags)
				}
				req.State = state
			}
			resp := fwresource.ModifyPlanResponse{Plan: req.Plan}
			(&DelayQueueSetResource{}).ModifyPlan(ctx, req, &resp)
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
		})
	}
}

func with(s topology.Spec, locator topology.LeaderLocator) topology.Spec {
	s.QueueLeaderLocator = locator
	return s
}
