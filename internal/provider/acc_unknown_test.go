package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccDelayQueueSet_valuesKnownAfterApply plans a set whose max_delay and
// routes (a dynamic block) come from another resource, so they are unknown
// at plan time: the plan must wait for them, not judge the set without them,
// and apply must build the set they then describe.
func TestAccDelayQueueSet_valuesKnownAfterApply(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testQueue(t, client, name+"-work")
	config := fmt.Sprintf(`
resource "terraform_data" "settings" {
  input = {
    max_delay = "5s"
    routes    = [{ destination = %q, key = "orders" }]
  }
}

resource "rabbitmq_delay_queue_set" "test" {
  name      = %q
  max_delay = terraform_data.settings.output.max_delay

  dynamic "route" {
    for_each = terraform_data.settings.output.routes
    content {
      destination = route.value.destination
      key         = route.value.key
    }
  }
}
`, name+"-work", name)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(testResource, tfjsonpath.New("levels")),
					plancheck.ExpectUnknownValue(testResource, tfjsonpath.New("bindings")),
				},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(testResource, tfjsonpath.New("levels"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue(testResource, tfjsonpath.New("route").AtSliceIndex(0).AtMapKey("key"), knownvalue.StringExact("orders")),
			},
			Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", MaxDelay: 5 * time.Second,
				Routes: []topology.Route{{Destination: name + "-work", Key: "orders"}}}),
		}},
	})
}
