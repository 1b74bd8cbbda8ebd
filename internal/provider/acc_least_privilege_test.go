package provider

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccDelayQueueSet_leastPrivilegeSwitch manages a radix-16 set as a
// user with the management tag, as a managed broker gives, and exactly the
// permissions the operating guide's recipe grants in the set's vhost,
// the pattern of the code's own names: once with object_name_pattern's (the
// set alone), once with object_name_prefix_pattern's (every set of a
// prefix). As that user it creates the set, switches it to radix 4 (a new
// generation: <name>.r4.….g1 queues, <name>.ingest.g1 and <name>.out.g1,
// the radix-16 generation deleted) and destroys it.
func TestAccDelayQueueSet_leastPrivilegeSwitch(t *testing.T) {
	client := testBrokerClient(t)
	prefix := "acc-" + acctest.RandString(6) + "."
	cases := map[string]struct {
		name    string
		pattern func(name string) string
	}{
		"one set": {name: testSetName(t), pattern: func(name string) string { return topology.Names(name).ObjectNamePattern() }},
		"every set of a prefix": {name: prefix + "orders",
			pattern: func(string) string { return topology.PrefixObjectNamePattern(prefix) }},
	}
	for what, tc := range cases {
		t.Run(what, func(t *testing.T) {
			vhost := testVhost(t)
			name := tc.name
			testCleanupSet(t, vhost, name)
			destination := "work"
			admin, err := testAdmin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := admin.DeclareQueue(vhost, destination, rabbithole.QueueSettings{Durable: true}); err != nil {
				t.Fatalf("declaring the route's queue: %v", err)
			}
			own := tc.pattern(name)
			password := acctest.RandString(20)
			user := testBrokerUser(t, password, "management", vhost, rabbithole.Permissions{
				Configure: own, Write: own + "|^" + regexp.QuoteMeta(destination) + "$", Read: own,
			})
			config := func(radix int) string {
				return testProviderAs(user, password) + testSetConfig(name, fmt.Sprintf(
					"  vhost  = %q\n  levels = 2\n  radix  = %d\n  route {\n    destination = %q\n    key         = \"orders\"\n  }",
					vhost, radix, destination))
			}
			spec := topology.Spec{Name: name, VHost: vhost, Levels: 2, Radix: 16, Resolution: time.Second,
				Routes: []topology.Route{{Destination: destination, Key: "orders"}}}
			switched := spec
			switched.Radix, switched.Generation, switched.FormatGeneration = 4, 1, 1

			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             testCheckSetGoneIn(client, vhost, name),
				Steps: []resource.TestStep{
					{
						Config: config(16),
						Check:  testCheckOnlyPlanned(client, spec),
					},
					{
						Config: config(4),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
						},
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact(name+".ingest.g1")),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListSizeExact(0)),
						},
						Check: testCheckOnlyPlanned(client, switched),
					},
				},
			})
		})
	}
}
