package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const testDelayedResource = "rabbitmq_delayed_exchange.test"

func testDelayedConfig(name, attributes string) string {
	return fmt.Sprintf(`
resource "rabbitmq_delayed_exchange" "test" {
  name = %q
  %s
}
`, name, attributes)
}

// TestDelayedExchange_invalidConfigs: bad input fails at plan time, with no
// broker, naming the attribute and what it allows.
func TestDelayedExchange_invalidConfigs(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	tests := map[string]struct {
		name, attributes string
		want             string
	}{
		"no delay":             {attributes: `delays_ms = []`, want: `delays_ms: must list at least one delay`},
		"negative delay":       {attributes: `delays_ms = [-5]`, want: `delays_ms: each delay must be from 0 to 315360000000 ms`},
		"past the TTL limit":   {attributes: `delays_ms = [315360000001]`, want: `delays_ms: each delay must be from 0 to 315360000000 ms`},
		"unknown type":         {attributes: "delays_ms = [5]\n  delivery_type = \"x-delayed-message\"", want: `delivery_type: must be one of "direct", "topic", "fanout", "headers"`},
		"unknown queue type":   {attributes: "delays_ms = [5]\n  queue_type = \"stream\"", want: `queue_type: must be one of "quorum", "classic"`},
		"classic at-least":     {attributes: "delays_ms = [5]\n  queue_type = \"classic\"\n  dead_letter_strategy = \"at-least-once\"", want: `dead_letter_strategy: "at-least-once" needs queue_type "quorum"`},
		"name too long":        {name: strings.Repeat("n", topology.MaxDelayedNameLength+1), attributes: `delays_ms = [5]`, want: fmt.Sprintf("name: must be at most %d bytes", topology.MaxDelayedNameLength)},
		"name with a blank":    {name: "or ders", attributes: `delays_ms = [5]`, want: `name: has the character ' ' at byte 2`},
		"name of the broker's": {name: "amq.delayed", attributes: `delays_ms = [5]`, want: `name: must not start with "amq."`},
	}
	for caseName, tc := range tests {
		t.Run(caseName, func(t *testing.T) {
			name := tc.name
			if name == "" {
				name = "orders"
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      testDelayedConfig(name, tc.attributes),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)Error: Invalid Delayed Exchange.*` + testPhrase(tc.want)),
				}},
			})
		})
	}
}

// TestDelayedExchange_planShowsEveryObject: the plan of a new delayed
// exchange shows its names and every object, with no broker.
func TestDelayedExchange_planShowsEveryObject(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	spec, err := topology.ResolveDelayed(topology.DelayedSpec{Name: "orders", VHost: "/", DelaysMS: []int64{0, 5000}, DeliveryType: "topic"})
	if err != nil {
		t.Fatal(err)
	}
	plan := topology.PlanDelayed(spec, nil)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             testDelayedConfig("orders", "delays_ms = [5000, 0]\n  delivery_type = \"topic\""),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue(testDelayedResource, tfjsonpath.New("exchange"), knownvalue.StringExact("orders")),
				plancheck.ExpectKnownValue(testDelayedResource, tfjsonpath.New("delivery_exchange"), knownvalue.StringExact("orders.delivery")),
				plancheck.ExpectKnownValue(testDelayedResource, tfjsonpath.New("parking_queue"), knownvalue.StringExact("orders.unroutable")),
				plancheck.ExpectKnownValue(testDelayedResource, tfjsonpath.New("dead_letter_strategy"), knownvalue.StringExact("at-least-once")),
				plancheck.ExpectKnownValue(testDelayedResource, tfjsonpath.New("exchanges"), knownvalue.StringExact(topology.Lines(plan.Exchanges))),
				plancheck.ExpectKnownValue(testDelayedResource, tfjsonpath.New("queues"), knownvalue.StringExact(topology.Lines(plan.Queues))),
				plancheck.ExpectKnownValue(testDelayedResource, tfjsonpath.New("bindings"), knownvalue.StringExact(topology.Lines(plan.Bindings))),
			}},
		}},
	})
}
