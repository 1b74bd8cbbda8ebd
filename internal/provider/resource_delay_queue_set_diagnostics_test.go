package provider

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
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

// TestRemovedRoutesStayBound: a plan (delayset.Plan from what the state
// remembers, worded by setWarnings) of a library layout that drops a
// route whose binding the last refresh found warns, naming the binding and
// that it stays; a route kept, a removed route whose binding was already
// gone, a library's binding no route ever listed (the refresh shows none)
// and the default layout do not.
func TestRemovedRoutesStayBound(t *testing.T) {
	t.Parallel()
	sales := topology.Route{Destination: "Sales", DestinationType: topology.DestinationExchange, Key: "Sales"}
	billing := topology.Route{Destination: "Billing", DestinationType: topology.DestinationExchange, Key: "Billing"}
	billingBinding := `nsb.v2.delay-delivery -> exchange Billing, key "#.Billing"`
	nsb := func(routes ...topology.Route) topology.Spec {
		return topology.Spec{Name: "nsb", VHost: "/", Layout: topology.LayoutNServiceBus, Routes: routes}
	}
	defaultSet := func(routes ...topology.Route) topology.Spec {
		return topology.Spec{Name: "delay", VHost: "/", Levels: 2, Routes: routes}
	}
	tests := map[string]struct {
		state delayQueueSetModel
		plan  topology.Spec
		warns bool
	}{
		"a removed route's binding stays":      {testModelOf(t, nsb(sales, billing)), nsb(sales), true},
		"routes kept":                          {testModelOf(t, nsb(sales, billing)), nsb(sales, billing), false},
		"a new route":                          {testModelOf(t, nsb(sales)), nsb(sales, billing), false},
		"the removed route's binding is gone":  {testModelOf(t, nsb(sales, billing), billing), nsb(sales), false},
		"the default layout deletes its out's": {testModelOf(t, defaultSet(sales, billing)), defaultSet(sales), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resolved, err := topology.Resolve(tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			prior, priorDiags := rememberedOf(t.Context(), tc.state, nil)
			if priorDiags.HasError() {
				t.Fatal(priorDiags)
			}
			planned, err := delayset.Plan(prior, resolved, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			diags := setWarnings(planned.Spec, planned.Warnings)
			if !tc.warns {
				if len(diags) > 0 {
					t.Errorf("diagnostics = %v, want none", diags)
				}
				return
			}
			if len(diags) != 1 || diags.WarningsCount() != 1 || !strings.Contains(diags[0].Detail(), billingBinding) ||
				strings.Contains(diags[0].Detail(), "#.Sales") {
				t.Errorf("diagnostics = %v, want one warning naming %s alone", diags, billingBinding)
			}
		})
	}
}
