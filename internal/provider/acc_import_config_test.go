package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccDelayQueueSet_importGeneratesConfigHandMade adopts a set an operator
// declared by hand: an import block and `terraform plan -generate-config-out`
// write its configuration, and that configuration plans no change (the
// framework fails the step on anything but a no-op import).
func TestAccDelayQueueSet_importGeneratesConfigHandMade(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testHandMadeSet(t, client, name, 0)
	testCleanupSet(t, "/", name)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// Nothing but the provider: the test adds the import block, Terraform writes the resource.
			Config:          `provider "rabbitmq" {}`,
			ResourceName:    testResource,
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithID,
			ImportStateId:   "%2F/" + name,
			GenerateConfig:  true,
			ImportPlanChecks: resource.ImportPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionNoop),
					plancheck.ExpectKnownValue(testResource, tfjsonpath.New("levels"), knownvalue.Int64Exact(3)),
					plancheck.ExpectKnownValue(testResource, tfjsonpath.New("resolution"), knownvalue.StringExact("2s")),
					plancheck.ExpectKnownValue(testResource, tfjsonpath.New("queue_type"), knownvalue.StringExact("classic")),
					plancheck.ExpectKnownValue(testResource, tfjsonpath.New("route").AtSliceIndex(0).AtMapKey("key"),
						knownvalue.StringExact("billing.eu")),
				},
			},
		}},
	})
}

// TestAccDelayQueueSet_importGeneratesConfigMaxDelay imports a set Terraform
// created from max_delay: the generated configuration says levels instead
// (import infers levels), and still plans no change.
func TestAccDelayQueueSet_importGeneratesConfigMaxDelay(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testQueue(t, client, name+"-work")
	config := testSetConfig(name, fmt.Sprintf(`
  max_delay            = "90s"
  resolution           = "250ms"
  dead_letter_strategy = "at-most-once"
  route {
    destination = %q
  }
  route {
    destination = %q
    key         = "orders.eu"
  }`, name+"-work", name+"-work"))
	generated := "rabbitmq_delay_queue_set.generated"

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// The framework imports into rabbitmq_delay_queue_set.generated beside the managed set.
				ResourceName:    testResource,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				GenerateConfig:  true,
				ImportPlanChecks: resource.ImportPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(generated, plancheck.ResourceActionNoop),
						plancheck.ExpectKnownValue(generated, tfjsonpath.New("levels"), knownvalue.Int64Exact(9)),
						plancheck.ExpectKnownValue(generated, tfjsonpath.New("max_delay"), knownvalue.Null()),
						plancheck.ExpectKnownValue(generated, tfjsonpath.New("resolution"), knownvalue.StringExact("250ms")),
						plancheck.ExpectKnownValue(generated, tfjsonpath.New("route"), knownvalue.ListSizeExact(2)),
					},
				},
			},
		},
	})
}
