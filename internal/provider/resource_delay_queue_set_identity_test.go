package provider

import (
	"context"
	"strings"
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

// TestParseImportID reads both forms of the import ID, <url-escaped
// vhost>/<name>[/<layout>] and <name>@<vhost>, and refuses the rest.
func TestParseImportID(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		id, vhost, name, layout string
		wantErr                 bool
	}{
		"default vhost":          {id: "%2F/delay", vhost: "/", name: "delay"},
		"with a layout":          {id: "orders/nsb/nservicebus", vhost: "orders", name: "nsb", layout: "nservicebus"},
		"escaped vhost":          {id: "a%2Fb/celery/celery", vhost: "a/b", name: "celery", layout: "celery"},
		"unknown layout":         {id: "%2F/x/sidekiq", wantErr: true},
		"empty layout":           {id: "%2F/x/", wantErr: true},
		"no name":                {id: "%2F/", wantErr: true},
		"no slash":               {id: "delay", wantErr: true},
		"bad escape":             {id: "%zz/delay", wantErr: true},
		"a fourth part":          {id: "%2F/x/celery/more", wantErr: true},
		"default layout named":   {id: "%2F/x/default", vhost: "/", name: "x", layout: "default"},
		"escaped @ in the vhost": {id: "a%40b/delay", vhost: "a@b", name: "delay"},

		// <name>@<vhost>: the name ends at the first "@", the vhost is the rest as it is.
		"at default vhost":       {id: "delay@/", vhost: "/", name: "delay"},
		"at vhost":               {id: "orders.retries@billing", vhost: "billing", name: "orders.retries"},
		"at vhost with slashes":  {id: "retries@team/a", vhost: "team/a", name: "retries"},
		"at vhost with @":        {id: "delay@a@b", vhost: "a@b", name: "delay"},
		"at vhost not unescaped": {id: "delay@%2F", vhost: "%2F", name: "delay"},
		"at vhost like a layout": {id: "nsb@orders/nservicebus", vhost: "orders/nservicebus", name: "nsb"},
		"raw @ before the slash": {id: "a@b/delay", vhost: "b/delay", name: "a"},
		"at without a name":      {id: "@/", wantErr: true},
		"at without a vhost":     {id: "delay@", wantErr: true},
		"at alone":               {id: "@", wantErr: true},
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

// TestImportIDRoundTrips: the resource's ID of a set, and the set's
// <name>@<vhost>, both read back as its vhost and name, whatever the vhost
// holds.
func TestImportIDRoundTrips(t *testing.T) {
	t.Parallel()
	const name = "orders.retries-v1:x"
	for _, vhost := range []string{"/", "orders", "a@b", "team/a", "@/@", "a b", "%", "%40", "ünï/@%2F"} {
		for _, id := range []string{importID(vhost, name), name + "@" + vhost} {
			gotVHost, gotName, layout, err := parseImportID(id)
			if err != nil || gotVHost != vhost || gotName != name || layout != "" {
				t.Errorf("parseImportID(%q) = %q, %q, %q, %v; want %q, %q", id, gotVHost, gotName, layout, err, vhost, name)
			}
		}
	}
}

// TestParseImportIDErrorsNameBothForms: a refused ID's error shows both
// forms of the import ID.
func TestParseImportIDErrorsNameBothForms(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"delay", "@/", "delay@", "%2F/", "%zz/delay", "/delay"} {
		_, _, _, err := parseImportID(id)
		if err == nil || !strings.Contains(err.Error(), "<name>@<vhost>") || !strings.Contains(err.Error(), "<url-escaped vhost>/<name>") {
			t.Errorf("parseImportID(%q) = %v; want an error naming both forms", id, err)
		}
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
