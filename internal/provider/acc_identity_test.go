package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// testTerraform1_12 skips a test below Terraform 1.12, which brought
// resource identities (`make testacc-terraform-newest` runs them under
// 1.13.3).
var testTerraform1_12 = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)}

// testExpectIdentity checks the identity of the set name in vhost.
func testExpectIdentity(address, vhost, name string) statecheck.StateCheck {
	return statecheck.ExpectIdentity(address, map[string]knownvalue.Check{
		"vhost": knownvalue.StringExact(vhost), "name": knownvalue.StringExact(name),
	})
}

// TestAccDelayQueueSet_identity checks the identity that create and
// refresh store, and that an import block by identity, and one by the
// string ID, each plan a no-op import: a set of the default layout with a
// route, then one of the NServiceBus layout, in a vhost of its own, whose
// layout the import by identity tells from the broker's objects.
func TestAccDelayQueueSet_identity(t *testing.T) {
	client, vhost, lc, _ := librarySetUp(t, "nservicebus")
	name := testSetName(t)
	config := fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "test" {
  name   = %q
  vhost  = %q
  levels = 3
  radix  = 4
  route {
    destination      = %q
    destination_type = "exchange"
  }
}
`, name, vhost, lc.destination)
	const library = "rabbitmq_delay_queue_set.library"
	withLibrary := config + fmt.Sprintf("resource \"rabbitmq_delay_queue_set\" \"library\" {\n  name   = %q\n  vhost  = %q\n  layout = %q\n}\n",
		lc.setName, vhost, lc.layout)
	importedBy := func(kind resource.ImportStateKind, address string) resource.TestStep {
		return resource.TestStep{Config: withLibrary, ResourceName: address, ImportState: true, ImportStateKind: kind}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		TerraformVersionChecks:   testTerraform1_12,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeTestCheckFunc(testCheckSetGoneIn(client, vhost, name), libraryCheckGone(client, lc, vhost)),
		Steps: []resource.TestStep{
			{
				Config:            withLibrary,
				ConfigStateChecks: []statecheck.StateCheck{testExpectIdentity(testResource, vhost, name), testExpectIdentity(library, vhost, lc.setName)},
			},
			{
				// Refreshed and planned again: no change, the same identities.
				Config:            withLibrary,
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{testExpectIdentity(testResource, vhost, name), testExpectIdentity(library, vhost, lc.setName)},
			},
			importedBy(resource.ImportBlockWithResourceIdentity, testResource),
			importedBy(resource.ImportBlockWithResourceIdentity, library),
			importedBy(resource.ImportBlockWithID, testResource),
			{Config: withLibrary, ResourceName: testResource, ImportState: true, ImportStateVerify: true},
		},
	})
}

// TestAccDelayQueueSet_adoptByIdentity adopts a set made outside Terraform
// with an import block that names it by identity, its name alone (the
// vhost defaults to "/"): the plan imports it with no change, and the
// state then holds its identity.
func TestAccDelayQueueSet_adoptByIdentity(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testCleanupSet(t, "/", name)
	config := testSetConfig(name, "  levels = 2\n  radix  = 16") + fmt.Sprintf(`
import {
  to       = rabbitmq_delay_queue_set.test
  identity = {
    name = %q
  }
}
`, name)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		TerraformVersionChecks:   testTerraform1_12,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{{
			PreConfig: func() { testDeclareSet(t, client, topology.Spec{Name: name, VHost: "/", Levels: 2, Radix: 16}) },
			Config:    config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionNoop)},
			},
			ConfigStateChecks: []statecheck.StateCheck{testExpectIdentity(testResource, "/", name)},
		}},
	})
}
