package provider

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestBrokerError_accessRefusedNamesTheLayoutsObjects: the permissions an
// "Access refused." asks for are on the names of the set's objects in its
// layout: a library's fixed names, not <name>.ingest and the like.
func TestBrokerError_accessRefusedNamesTheLayoutsObjects(t *testing.T) {
	t.Parallel()
	refused := &broker.APIError{Method: http.MethodPut, Path: "/api/queues/v/q", StatusCode: http.StatusForbidden,
		Code: "not_authorised", Reason: "Access refused."}
	tests := map[string]struct {
		spec      topology.Spec
		want, not string
	}{
		"default": {spec: topology.Spec{Name: "delay", VHost: "v"}, want: topology.Names("delay").ObjectNamePattern()},
		"nservicebus": {spec: topology.Spec{Name: "delay", VHost: "v", Layout: topology.LayoutNServiceBus},
			want: topology.LayoutNServiceBus.ObjectNamePattern("delay"), not: topology.Names("delay").ObjectNamePattern()},
		"celery": {spec: topology.Spec{Name: "delay", VHost: "v", Layout: topology.LayoutCelery},
			want: topology.LayoutCelery.ObjectNamePattern("delay"), not: topology.Names("delay").ObjectNamePattern()},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags := brokerError("update", tc.spec, refused, "")
			if len(diags) != 1 || diags[0].Summary() != "RabbitMQ Refused the Operation" {
				t.Fatalf("diagnostics = %v, want one \"RabbitMQ Refused the Operation\"", diags)
			}
			detail := diags[0].Detail()
			if !strings.Contains(detail, "("+tc.want+")") {
				t.Errorf("the detail does not name the pattern %s of the set's objects:\n%s", tc.want, detail)
			}
			if tc.not != "" && regexp.MustCompile(regexp.QuoteMeta(tc.not)).MatchString(detail) {
				t.Errorf("the detail names the default layout's pattern %s:\n%s", tc.not, detail)
			}
		})
	}
}

// TestUnlistedDeliveryBindings: a plan that deletes a binding of a library
// layout's delivery exchange that the state read from the broker (one the
// library made for a destination without a route) warns, naming it; the
// planned bindings, the other exchanges' bindings and the default layout
// do not.
func TestUnlistedDeliveryBindings(t *testing.T) {
	t.Parallel()
	spec := topology.Spec{Name: "nsb", VHost: "/", Layout: topology.LayoutNServiceBus,
		Routes: []topology.Route{{Destination: "Sales", DestinationType: topology.DestinationExchange, Key: "Sales"}}}
	desired, err := topology.Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	billing := topology.Binding{Source: "nsb.v2.delay-delivery", Destination: "Billing", DestinationType: topology.DestinationExchange, RoutingKey: "#.Billing"}
	stray := topology.Binding{Source: "nsb.v2.delay-level-03", Destination: "Billing", DestinationType: topology.DestinationExchange, RoutingKey: "#"}
	stateOf := func(extra ...topology.Binding) types.List {
		var values []attr.Value
		for _, b := range append(slices.Clone(desired.Bindings), extra...) {
			values = append(values, types.StringValue(b.String()))
		}
		return types.ListValueMust(types.StringType, values)
	}
	tests := map[string]struct {
		layout   topology.Layout
		bindings types.List
		warns    bool
	}{
		"a library's binding without a route":        {topology.LayoutNServiceBus, stateOf(billing), true},
		"as planned":                                 {topology.LayoutNServiceBus, stateOf(), false},
		"another exchange's binding":                 {topology.LayoutNServiceBus, stateOf(stray), false},
		"the default layout owns its out's bindings": {topology.LayoutDefault, stateOf(billing), false},
		"a new set":                                  {topology.LayoutNServiceBus, types.ListNull(types.StringType), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags := unlistedDeliveryBindings(tc.layout, "nsb.v2.delay-delivery", tc.bindings, desired)
			if !tc.warns {
				if len(diags) > 0 {
					t.Errorf("diagnostics = %v, want none", diags)
				}
				return
			}
			if len(diags) != 1 || diags.WarningsCount() != 1 || !strings.Contains(diags[0].Detail(), billing.String()) {
				t.Errorf("diagnostics = %v, want one warning naming %s", diags, billing)
			}
		})
	}
}
