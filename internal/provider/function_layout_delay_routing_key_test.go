package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// bits28 writes ticks as the 28 bit words of a library's key, each followed by a dot.
func bits28(ticks uint64) string {
	var b strings.Builder
	for k := 27; k >= 0; k-- {
		fmt.Fprintf(&b, "%d.", ticks>>k&1)
	}
	return b.String()
}

// TestLayoutDelayRoutingKeyFunction_known checks both libraries' key
// formats against keys written by hand: NServiceBus rounds up, Celery
// truncates, 28 bits then the key.
func TestLayoutDelayRoutingKeyFunction_known(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "") // a function needs no broker
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "nservicebus_rounds_up" {
  value = provider::rabbitmq::layout_delay_routing_key("nservicebus", "Sales", "4.2s")
}
output "celery_truncates" {
  value = provider::rabbitmq::layout_delay_routing_key("celery", "tasks.add", "4.9s")
}
output "nservicebus_no_delay" {
  value = provider::rabbitmq::layout_delay_routing_key("nservicebus", "Sales", "0s")
}
output "celery_longest" {
  value = provider::rabbitmq::layout_delay_routing_key("celery", "t", "268435455s")
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("nservicebus_rounds_up", knownvalue.StringExact(bits28(5)+"Sales")),
				statecheck.ExpectKnownOutputValue("celery_truncates", knownvalue.StringExact(bits28(4)+"tasks.add")),
				statecheck.ExpectKnownOutputValue("nservicebus_no_delay", knownvalue.StringExact(strings.Repeat("0.", 28)+"Sales")),
				statecheck.ExpectKnownOutputValue("celery_longest", knownvalue.StringExact(strings.Repeat("1.", 28)+"t")),
			},
		}},
	})
}

func TestLayoutDelayRoutingKeyFunction_errors(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	tests := map[string]functionErrorCase{
		"default layout": {
			arguments: `"default", "orders", "1s"`,
			want:      `Invalid value for "layout" parameter: must be one of` + " `nservicebus`, `celery`, " + `got "default"; for the default layout use the delay_routing_key function`,
		},
		"unknown layout": {
			arguments: `"sidekiq", "orders", "1s"`,
			want:      `Invalid value for "layout" parameter: must be one of`,
		},
		"delay beyond 28 bits": {
			arguments: `"celery", "t", "268435456s"`,
			want:      `Invalid value for "delay" parameter: 74565h24m16s is longer than 74565h24m15s, the longest delay of the celery layout`,
		},
		"negative delay": {
			arguments: `"nservicebus", "Sales", "-1s"`,
			want:      `Invalid value for "delay" parameter: must not be negative`,
		},
		"delay that is no duration": {
			arguments: `"nservicebus", "Sales", "soon"`,
			want:      `Invalid value for "delay" parameter: "soon" is not a duration`,
		},
		"empty key": {
			arguments: `"celery", "", "1s"`,
			want:      `Invalid value for "key" parameter: must not be empty in the celery layout`,
		},
		"key too long": {
			arguments: fmt.Sprintf(`"nservicebus", %q, "1s"`, strings.Repeat("k", topology.MaxNameLength-2*28+1)),
			want:      `Invalid value for "key" parameter: must be at most 199 bytes in the nservicebus layout`,
		},
	}
	testFunctionErrors(t, "layout_delay_routing_key", tests)
}

// TestLayoutDelayRoutingKey_matchesTheLibraries checks, with no Terraform,
// every delay up to 70 s in tenths of a second against each library's own
// rule: the key decodes to the delay rounded up (NServiceBus) or truncated
// (Celery) to whole seconds.
func TestLayoutDelayRoutingKey_matchesTheLibraries(t *testing.T) {
	t.Parallel()
	for _, layout := range libraryLayouts {
		for tenths := range 700 {
			delay := time.Duration(tenths) * 100 * time.Millisecond
			key, funcErr := layoutDelayRoutingKey(layout, "dest", delay.String())
			if funcErr != nil {
				t.Fatalf("%s, %s: %v", layout, delay, funcErr)
			}
			want := delay.Truncate(time.Second)
			if layout == topology.LayoutNServiceBus && want < delay {
				want += time.Second
			}
			if key != bits28(uint64(want/time.Second))+"dest" {
				t.Errorf("%s, %s: key %q, want %s as 28 bits", layout, delay, key, want)
			}
		}
	}
}
