package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccDelayQueueSet_groupSize applies a radix-16 set with
// quorum_initial_group_size = 2 to the test's broker (one node, which then
// holds every replica): the broker has the argument on every TTL queue and
// not on the parking lot, the plan shows members known after apply for
// each queue and the state the node, import reads the size back, and a
// change of the size is a new generation whose queues the plan leaves
// known after apply while the parking lot's members stay known. The
// cluster's placement is tested by internal/faults (TestFaultClusterGroupSize).
func TestAccDelayQueueSet_groupSize(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testQueue(t, client, name+"-work")
	config := func(size int) string {
		return testSetConfig(name, fmt.Sprintf("  levels = 2\n  radix = 16\n  resolution = \"1s\"\n  quorum_initial_group_size = %d\n"+
			"  route {\n    destination = %q\n    key = \"orders\"\n  }", size, name+"-work"))
	}
	members := func(queue string) tfjsonpath.Path { return tfjsonpath.New("members").AtMapKey(queue) }
	node := testNodeName(t, client)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config: config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(testResource, members(name+".r16.00.1")),
					plancheck.ExpectUnknownValue(testResource, members(name+".unroutable")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("quorum_initial_group_size"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(testResource, members(name+".r16.01.15"), knownvalue.StringExact(node)),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("members"), knownvalue.MapSizeExact(31)),
				},
				Check: testCheckGroupSizes(client, name, 0, 2),
			},
			{ResourceName: testResource, ImportState: true, ImportStateVerify: true},
			{
				Config: config(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
					plancheck.ExpectUnknownValue(testResource, members(name+".r16.00.1.g1")),
					plancheck.ExpectKnownValue(testResource, members(name+".unroutable"), knownvalue.StringExact(node)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, members(name+".r16.00.1.g1"), knownvalue.StringExact(node)),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListSizeExact(0)),
				},
				Check: testCheckGroupSizes(client, name, 1, 3),
			},
			{Config: config(3), PlanOnly: true},
		},
	})
}

// testNodeName is the name of the node the test's broker client talks to.
func testNodeName(t *testing.T, client *broker.Client) string {
	t.Helper()
	info, err := client.Node(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.Name
}

// testCheckGroupSizes asks the broker that every TTL queue of generation
// generation of the set has x-quorum-initial-group-size size, that the
// parking lot has none, and that no other generation is left.
func testCheckGroupSizes(client *broker.Client, name string, generation, size int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		actual, err := client.ReadSet(context.Background(), "/", name)
		if err != nil {
			return err
		}
		want := map[string]int{topology.Names(name).Unroutable(): 0}
		for _, q := range (topology.Generation{Number: generation, Levels: 2, Radix: 16}).Queues(name) {
			want[q] = size
		}
		if len(actual.Queues) != len(want) {
			return fmt.Errorf("the broker has %d queues of the set, want %d", len(actual.Queues), len(want))
		}
		for _, q := range actual.Queues {
			if got, ok := want[q.Name]; !ok || q.Arguments.QuorumInitialGroupSize != got {
				return fmt.Errorf("%s has x-quorum-initial-group-size %d; want the queues of generation %d with %d, the parking lot none",
					q.Name, q.Arguments.QuorumInitialGroupSize, generation, size)
			}
		}
		return nil
	}
}
