package provider

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
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

// TestDelayQueueSet_modifyPlanMembers calls ModifyPlan and checks what the
// plan shows of members: each queue the apply keeps as the state has it,
// each it declares known after apply, and nothing else.
func TestDelayQueueSet_modifyPlanMembers(t *testing.T) {
	t.Parallel()
	set := topology.Spec{Name: "delay", VHost: "/", Levels: 2, QueueLeaderLocator: topology.LeaderLocatorBalanced, QuorumInitialGroupSize: 2}
	withRoute := set
	withRoute.Routes = []topology.Route{{Destination: "orders"}}
	threeReplicas := set
	threeReplicas.QuorumInitialGroupSize = 3
	tests := map[string]struct {
		state   *topology.Spec // nil: create
		config  topology.Spec
		drifted bool // delay.level.01 is gone from the broker
		want    map[string]string
	}{
		"new set": {config: set, want: map[string]string{
			"delay.level.00": unknownMembers, "delay.level.01": unknownMembers, "delay.unroutable": unknownMembers}},
		"no change": {state: &set, config: set, want: map[string]string{
			"delay.level.00": "rabbit@a rabbit@b", "delay.level.01": "rabbit@b rabbit@c", "delay.unroutable": "rabbit@a rabbit@b rabbit@c"}},
		"a route added: every queue kept": {state: &set, config: withRoute, want: map[string]string{
			"delay.level.00": "rabbit@a rabbit@b", "delay.level.01": "rabbit@b rabbit@c", "delay.unroutable": "rabbit@a rabbit@b rabbit@c"}},
		"a queue gone: declared again": {state: &set, config: set, drifted: true, want: map[string]string{
			"delay.level.00": "rabbit@a rabbit@b", "delay.level.01": unknownMembers, "delay.unroutable": "rabbit@a rabbit@b rabbit@c"}},
		"another size: a new generation": {state: &set, config: threeReplicas, want: map[string]string{
			"delay.level.00.g1": unknownMembers, "delay.level.01.g1": unknownMembers, "delay.unroutable": "rabbit@a rabbit@b rabbit@c"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, resp := modifyPlanOf(t, tc.state, testModelOf(t, tc.config), tc.drifted)
			var got delayQueueSetModel
			if diags := resp.Plan.Get(context.Background(), &got); diags.HasError() {
				t.Fatal(diags)
			}
			if d := cmp.Diff(tc.want, membersShown(got.Members)); d != "" {
				t.Errorf("members planned (-want +got):\n%s", d)
			}
		})
	}
}

// modifyPlanOf runs ModifyPlan for config (a model of the configuration,
// whose strategy and generation it leaves null, as written) over a state
// of spec state (nil: a create) whose queues have a placement and members;
// drifted leaves delay.level.01 out of the state's queues, as a refresh
// that did not find it would.
func modifyPlanOf(t *testing.T, state *topology.Spec, config delayQueueSetModel, drifted bool) (fwresource.ModifyPlanRequest, fwresource.ModifyPlanResponse) {
	t.Helper()
	ctx := context.Background()
	schema := delayQueueSetSchema()
	config.DeadLetterStrategy, config.Generation, config.ExchangeGeneration = types.StringNull(), types.Int64Null(), types.Int64Null()
	plan := tfsdk.Plan{Schema: schema}
	if diags := plan.Set(ctx, &config); diags.HasError() {
		t.Fatal(diags)
	}
	req := fwresource.ModifyPlanRequest{Config: tfsdk.Config{Schema: schema, Raw: plan.Raw}, Plan: plan,
		State: tfsdk.State{Schema: schema, Raw: tftypes.NewValue(schema.Type().TerraformType(ctx), nil)}}
	if state != nil {
		m := testModelOf(t, *state)
		if drifted {
			m.Queues = types.StringValue(strings.Join(slices.DeleteFunc(strings.Split(m.Queues.ValueString(), "\n"),
				func(line string) bool { return topology.LineName(line) == "delay.level.01" }), "\n"))
		}
		all := []string{"rabbit@a", "rabbit@b", "rabbit@c"}
		setPlacement(&m, map[string]broker.Placement{
			"delay.level.00":   {Leader: "rabbit@a", Members: all[:2], Online: all[:2]},
			"delay.level.01":   {Leader: "rabbit@b", Members: all[1:], Online: all[1:]},
			"delay.unroutable": {Leader: "rabbit@c", Members: all, Online: all},
		})
		req.State = tfsdk.State{Schema: schema}
		if diags := req.State.Set(ctx, &m); diags.HasError() {
			t.Fatal(diags)
		}
		// The framework plans a computed value the configuration leaves
		// null as the state has it.
		config.Placement, config.Leaders, config.Members = m.Placement, m.Leaders, m.Members
		if diags := req.Plan.Set(ctx, &config); diags.HasError() {
			t.Fatal(diags)
		}
	}
	resp := fwresource.ModifyPlanResponse{Plan: req.Plan}
	(&DelayQueueSetResource{data: &providerData{clock: delayset.SystemClock{}}}).ModifyPlan(ctx, req, &resp) // configured, as the framework calls it
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	return req, resp
}
