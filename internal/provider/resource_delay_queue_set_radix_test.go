package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestExplicitZeroRadix_plannerWords holds the provider's refusal of a
// configured zero radix to the planner's refusal of any other bad radix.
func TestExplicitZeroRadix_plannerWords(t *testing.T) {
	t.Parallel()
	err := topology.Validate(topology.Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 3})
	want := strings.Replace(err.Error(), "got 3", "got 0", 1)
	if got := explicitZeroRadix().Error(); got != want {
		t.Errorf("explicitZeroRadix() = %q, the planner says %q", got, want)
	}
}

// TestDelayQueueSet_modifyPlanRadix calls ModifyPlan with a prior state and
// a plan that differ only in radix: a change replaces the set, and a state
// written before radix existed (null) is a binary set, so that upgrading
// the provider replaces nothing.
func TestDelayQueueSet_modifyPlanRadix(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		state       types.Int64
		plan        int64
		wantReplace bool
	}{
		"unchanged binary":             {state: types.Int64Value(2), plan: 2},
		"unchanged radix 16":           {state: types.Int64Value(16), plan: 16},
		"state from before radix":      {state: types.Int64Null(), plan: 2},
		"binary to radix 16":           {state: types.Int64Value(2), plan: 16, wantReplace: true},
		"radix 16 to binary":           {state: types.Int64Value(16), plan: 2, wantReplace: true},
		"state from before radix to 4": {state: types.Int64Null(), plan: 4, wantReplace: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			schema := delayQueueSetSchema()
			model := func(radix types.Int64) tfsdk.Plan {
				spec, err := topology.Resolve(topology.Spec{Name: "delay", VHost: "/", Levels: 2, Radix: int(radix.ValueInt64())})
				if err != nil {
					t.Fatal(err)
				}
				planned, err := topology.Plan(spec)
				if err != nil {
					t.Fatal(err)
				}
				m := delayQueueSetModel{ForceDestroy: types.BoolValue(false)}
				m.Name, m.MaxDelay = types.StringValue("delay"), types.StringNull()
				m.Routes = types.ListValueMust(routeObjectType, nil)
				if diags := setPlanned(ctx, &m, spec, planned); diags.HasError() {
					t.Fatal(diags)
				}
				m.Radix = radix
				plan := tfsdk.Plan{Schema: schema}
				if diags := plan.Set(ctx, &m); diags.HasError() {
					t.Fatal(diags)
				}
				return plan
			}
			plan, prior := model(types.Int64Value(tc.plan)), model(tc.state)
			req := resource.ModifyPlanRequest{
				Config: tfsdk.Config{Schema: schema, Raw: plan.Raw},
				Plan:   plan,
				State:  tfsdk.State{Schema: schema, Raw: prior.Raw},
			}
			resp := resource.ModifyPlanResponse{Plan: plan}
			(&DelayQueueSetResource{}).ModifyPlan(ctx, req, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatal(resp.Diagnostics)
			}
			replaced := false
			for _, p := range resp.RequiresReplace {
				if p.Equal(path.Root("radix")) {
					replaced = true
				} else {
					t.Errorf("ModifyPlan replaces the set for %s, which did not change", p)
				}
			}
			if replaced != tc.wantReplace {
				t.Errorf("ModifyPlan from radix %s to %d: replaces %t, want %t", tc.state, tc.plan, replaced, tc.wantReplace)
			}
			var got delayQueueSetModel
			if diags := resp.Plan.Get(ctx, &got); diags.HasError() {
				t.Fatal(diags)
			}
			if got.Radix.ValueInt64() != tc.plan || got.Levels.ValueInt64() != 2 {
				t.Errorf("the plan says radix %s and %s levels, want radix %d and 2 levels", got.Radix, got.Levels, tc.plan)
			}
		})
	}
}
