package provider

import (
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestDelayTopologyDataSource_groupSize plans a set whose TTL queues have
// replicas on 3 nodes with no broker: the definitions give each TTL queue
// x-quorum-initial-group-size 3, as the planner does, and the attribute
// reads back as configured.
func TestDelayTopologyDataSource_groupSize(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	spec := topology.Spec{Name: "orders-delay", VHost: "/", MaxDelay: 15 * time.Second,
		QueueLeaderLocator: topology.LeaderLocatorBalanced, QuorumInitialGroupSize: 3}
	planned, err := topology.Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	definitions, err := topology.DefinitionsJSON(planned)
	if err != nil {
		t.Fatal(err)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testTopologyConfig(spec.Name, "  max_delay = \"15s\"\n  quorum_initial_group_size = 3"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("quorum_initial_group_size"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("definitions_json"), knownvalue.StringExact(string(definitions))),
			},
		}},
	})
}
