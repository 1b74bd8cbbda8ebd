package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestRequiresReplaceOfLayout: a change of layout replaces the set, and a
// state written before layouts existed, whose layout is null, meets the
// default layout without a replacement.
func TestRequiresReplaceOfLayout(t *testing.T) {
	t.Parallel()
	// Any known object: the modifier only asks whether state and plan exist.
	exists := tftypes.NewValue(tftypes.Object{}, map[string]tftypes.Value{})
	tests := map[string]struct {
		state, plan types.String
		replace     bool
	}{
		"no layout in an old state, default planned": {types.StringNull(), types.StringValue("default"), false},
		"no layout in an old state, celery planned":  {types.StringNull(), types.StringValue("celery"), true},
		"default to nservicebus":                     {types.StringValue("default"), types.StringValue("nservicebus"), true},
		"celery to default":                          {types.StringValue("celery"), types.StringValue("default"), true},
		"celery stays":                               {types.StringValue("celery"), types.StringValue("celery"), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := planmodifier.StringRequest{
				State: tfsdk.State{Raw: exists}, Plan: tfsdk.Plan{Raw: exists},
				StateValue: tc.state, PlanValue: tc.plan,
			}
			var resp planmodifier.StringResponse
			requiresReplaceOfLayout().PlanModifyString(context.Background(), req, &resp)
			if resp.RequiresReplace != tc.replace {
				t.Errorf("RequiresReplace = %v, want %v", resp.RequiresReplace, tc.replace)
			}
		})
	}
}

// TestParseImportID reads both forms of the import ID and refuses the rest.
func TestParseImportID(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		id, vhost, name, layout string
		wantErr                 bool
	}{
		"default vhost":        {id: "%2F/delay", vhost: "/", name: "delay"},
		"with a layout":        {id: "orders/nsb/nservicebus", vhost: "orders", name: "nsb", layout: "nservicebus"},
		"escaped vhost":        {id: "a%2Fb/celery/celery", vhost: "a/b", name: "celery", layout: "celery"},
		"unknown layout":       {id: "%2F/x/sidekiq", wantErr: true},
		"empty layout":         {id: "%2F/x/", wantErr: true},
		"no name":              {id: "%2F/", wantErr: true},
		"no slash":             {id: "delay", wantErr: true},
		"bad escape":           {id: "%zz/delay", wantErr: true},
		"a fourth part":        {id: "%2F/x/celery/more", wantErr: true},
		"default layout named": {id: "%2F/x/default", vhost: "/", name: "x", layout: "default"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			vhost, setName, layout, err := parseImportID(tc.id)
			if tc.wantErr {
				if err == nil {
					t.Errorf("parseImportID(%q) = %q, %q, %q; want an error", tc.id, vhost, setName, layout)
				}
				return
			}
			if err != nil || vhost != tc.vhost || setName != tc.name || string(layout) != tc.layout {
				t.Errorf("parseImportID(%q) = %q, %q, %q, %v; want %q, %q, %q", tc.id, vhost, setName, layout, err, tc.vhost, tc.name, tc.layout)
			}
		})
	}
}

// TestClaimLibraryLayout: in one run, the first set created with a library
// layout in a vhost claims them; a second one, whatever its name, is told
// the first's name; other vhosts and layouts are free.
func TestClaimLibraryLayout(t *testing.T) {
	t.Parallel()
	var d providerData
	steps := []struct {
		layout      topology.Layout
		vhost, name string
		want        string
	}{
		{topology.LayoutNServiceBus, "orders", "nsb", ""},
		{topology.LayoutNServiceBus, "orders", "nsb-again", "nsb"},
		{topology.LayoutNServiceBus, "orders", "nsb", "nsb"},
		{topology.LayoutCelery, "orders", "celery", ""},
		{topology.LayoutNServiceBus, "billing", "nsb", ""},
	}
	for _, s := range steps {
		if got := d.claimLibraryLayout(s.layout, s.vhost, s.name); got != s.want {
			t.Errorf("claimLibraryLayout(%s, %s, %s) = %q, want %q", s.layout, s.vhost, s.name, got, s.want)
		}
	}
}
