package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// TestAccDelayQueueSet_importNameAtVHost adopts a hand-made set with the
// community RabbitMQ provider's form of import ID, <name>@<vhost>
// ("acc-….@/", the vhost "/" as it is): the import infers the set, keeps
// the resource's ID in its canonical form (%2F/<name>), and the matching
// configuration then plans no change.
func TestAccDelayQueueSet_importNameAtVHost(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	spec, config := testHandMadeSet(t, client, name, 0)
	testCleanupSet(t, "/", name) // what a failed import leaves: the set was made by hand
	importStep := testImportHandMadeStep(name, config)
	importStep.ImportStateId = name + "@/"
	checkSpec := importStep.ImportStateCheck
	importStep.ImportStateCheck = func(states []*terraform.InstanceState) error {
		if err := checkSpec(states); err != nil {
			return err
		}
		if got, want := states[0].ID, "%2F/"+name; got != want {
			return fmt.Errorf("imported with ID %s@/, the set's ID is %q, want %q", name, got, want)
		}
		return nil
	}

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			importStep,
			{
				// The matching configuration plans no change at all.
				Config:   config,
				PlanOnly: true,
				Check:    testCheckSetMatchesPlan(client, spec),
			},
		},
	})
}
