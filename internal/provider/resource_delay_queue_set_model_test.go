package provider

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func TestSetPlacement(t *testing.T) {
	t.Parallel()
	cluster := []string{"rabbit@a", "rabbit@b", "rabbit@c"}
	var m delayQueueSetModel
	setPlacement(&m, map[string]broker.Placement{
		"d.level.01":   {Leader: "rabbit@b", Members: cluster, Online: cluster},
		"d.level.00":   {Leader: "rabbit@a", Members: cluster, Online: []string{"rabbit@a", "rabbit@b"}},
		"d.level.02":   {Members: cluster, Online: []string{"rabbit@a"}},
		"d.unroutable": {Leader: "rabbit@a"}, // classic
	})
	want := "d.level.00: leader rabbit@a, members rabbit@a rabbit@b rabbit@c, offline rabbit@c\n" +
		"d.level.01: leader rabbit@b, members rabbit@a rabbit@b rabbit@c\n" +
		"d.level.02: no leader, members rabbit@a rabbit@b rabbit@c, offline rabbit@b rabbit@c\n" +
		"d.unroutable: node rabbit@a"
	if got := m.Placement.ValueString(); got != want {
		t.Errorf("placement:\n%s\nwant:\n%s", got, want)
	}
	wantLeaders := types.MapValueMust(types.Int64Type, map[string]attr.Value{
		"rabbit@a": types.Int64Value(2), "rabbit@b": types.Int64Value(1),
	})
	if !m.Leaders.Equal(wantLeaders) {
		t.Errorf("leaders = %s, want %s", m.Leaders, wantLeaders)
	}

	setPlacement(&m, nil)
	if !m.Placement.IsNull() || !m.Leaders.IsNull() {
		t.Errorf("no queue: placement %s, leaders %s; want both null", m.Placement, m.Leaders)
	}
}

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

// unknownMembers stands for a queue whose members a plan leaves to the apply.
const unknownMembers = "(known after apply)"

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

// membersShown is a members value as a plan shows it, unknownMembers for
// an unknown element.
func membersShown(members types.Map) map[string]string {
	if members.IsUnknown() || members.IsNull() {
		return map[string]string{"": members.String()}
	}
	shown := map[string]string{}
	for queue, v := range members.Elements() {
		s, _ := v.(types.String)
		shown[queue] = s.ValueString()
		if s.IsUnknown() {
			shown[queue] = unknownMembers
		}
	}
	return shown
}

// TestKeptMembers checks what an apply shows of members: the plan's where
// it knew them, what the apply read for the others, "" for one the read
// did not find.
func TestKeptMembers(t *testing.T) {
	t.Parallel()
	planned := types.MapValueMust(types.StringType, map[string]attr.Value{
		"kept": types.StringValue("rabbit@a rabbit@b"), "declared": types.StringUnknown(), "missed": types.StringUnknown(),
	})
	read := types.MapValueMust(types.StringType, map[string]attr.Value{
		"kept": types.StringValue("rabbit@a rabbit@c"), "declared": types.StringValue("rabbit@b rabbit@c"),
	})
	want := map[string]string{"kept": "rabbit@a rabbit@b", "declared": "rabbit@b rabbit@c", "missed": ""}
	if d := cmp.Diff(want, membersShown(keptMembers(planned, read))); d != "" {
		t.Errorf("kept members (-want +got):\n%s", d)
	}
	if got := keptMembers(types.MapUnknown(types.StringType), read); !got.Equal(read) {
		t.Errorf("members planned unknown: got %s, want what the apply read", got)
	}
}

// TestMembersOf checks the members of queues: a quorum queue's members, a
// classic queue's node, and none for a queue no read found.
func TestMembersOf(t *testing.T) {
	t.Parallel()
	queues := types.StringValue("d.level.00: x-queue-type \"quorum\"\nd.level.01: x-queue-type \"quorum\"\nd.unroutable")
	got := membersShown(membersOf(queues, map[string]broker.Placement{
		"d.level.00":   {Leader: "rabbit@b", Members: []string{"rabbit@a", "rabbit@b"}},
		"d.unroutable": {Leader: "rabbit@c"},
		"d.level.09":   {Leader: "rabbit@c"}, // not the set's now
	}))
	want := map[string]string{"d.level.00": "rabbit@a rabbit@b", "d.unroutable": "rabbit@c"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("members (-want +got):\n%s", d)
	}
}

// notes is a private state of raw notes by key.
type notes map[string][]byte

func (n notes) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) { return n[key], nil }
func (n notes) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	n[key] = value
	return nil
}

// TestUnreadableNotesAreIgnored checks that a note the provider cannot read
// warns and reads as no note, instead of failing every plan with an error
// the user cannot clear; and that a readable one reads back.
func TestUnreadableNotesAreIgnored(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	garbled := notes{driftedHoldingKey: []byte(`{"not":"a list"}`), switchedAtKey: []byte(`"yesterday"`)}
	queues, diags := driftedHolding(ctx, garbled)
	if queues != nil || diags.HasError() || diags.WarningsCount() != 1 {
		t.Errorf("driftedHolding of a garbled note = %v, %v; want nothing and one warning", queues, diags)
	}
	at, diags := switchedAt(ctx, garbled)
	if !at.IsZero() || diags.HasError() || diags.WarningsCount() != 1 {
		t.Errorf("switchedAt of a garbled note = %v, %v; want the zero time and one warning", at, diags)
	}

	readable := notes{driftedHoldingKey: []byte(`["a.level.00"]`)}
	if queues, diags := driftedHolding(ctx, readable); len(queues) != 1 || queues[0] != "a.level.00" || len(diags) > 0 {
		t.Errorf("driftedHolding = %v, %v; want [a.level.00] and no diagnostic", queues, diags)
	}
}
