package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestDelayTopologyDataSource_groupSize plans a set whose TTL queues have
// replicas on 3 nodes with no broker: the attribute reads back as
// configured, and the definitions give each of the 4 TTL queues
// x-quorum-initial-group-size 3, a JSON integer, and the parking lot none.
func TestDelayTopologyDataSource_groupSize(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	const argument = `"x-quorum-initial-group-size": 3`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testTopologyConfig("orders-delay", "  max_delay = \"15s\"\n  quorum_initial_group_size = 3"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("quorum_initial_group_size"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("definitions_json"), knownvalue.StringFunc(func(definitions string) error {
					if n := strings.Count(definitions, argument); n != 4 {
						return fmt.Errorf("%d queues have %s, want the 4 TTL queues:\n%s", n, argument, definitions)
					}
					return nil
				})),
			},
		}},
	})
}
