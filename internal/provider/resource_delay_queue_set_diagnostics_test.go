package provider

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

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
