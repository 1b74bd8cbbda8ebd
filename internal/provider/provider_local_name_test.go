package provider

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// testLocalNameNamespace is the namespace of the provider's own source
// address (main.go: registry.terraform.io/delayqueue/rabbitmq).
const testLocalNameNamespace = "delayqueue"

// testLocalNameSource serves the provider under its own namespace and returns
// the source address terraform-plugin-testing then reattaches it as: the host
// from TF_ACC_PROVIDER_HOST (registry.terraform.io unless set;
// registry.opentofu.org in `make testacc-tofu`), the namespace from
// TF_ACC_PROVIDER_NAMESPACE, and the factory's key, "rabbitmq" — the way the
// framework's getProviderAddr builds it. Under the framework's default
// namespace, hashicorp, the address would be the one Terraform implies for
// every `rabbitmq_*` type without a `provider` argument, and the test could
// not tell a resource bound to the `delayq` local name from one that is not.
func testLocalNameSource(t *testing.T) string {
	t.Helper()
	t.Setenv(resource.EnvTfAccProviderNamespace, testLocalNameNamespace)
	host := "registry.terraform.io"
	if v := os.Getenv(resource.EnvTfAccProviderHost); v != "" {
		host = v
	}
	return strings.TrimSuffix(host, "/") + "/" + testLocalNameNamespace + "/rabbitmq"
}

// TestAccProvider_nonDefaultLocalName uses the provider the way a
// configuration that also uses the community RabbitMQ provider
// (cyrilgdn/rabbitmq, whose type name is rabbitmq too) must: under another
// local name, `delayq`, with `provider = delayq` on the resource and the data
// source and `provider::delayq::` before the function. The RABBITMQ_*
// environment points at a port where nothing listens, so the set reaches the
// broker only through the settings of the `provider "delayq"` block.
func TestAccProvider_nonDefaultLocalName(t *testing.T) {
	client := testBrokerClient(t)
	source := testLocalNameSource(t)
	name := testSetName(t)
	destination := name + "-invoices"
	testQueue(t, client, destination)
	endpoint, username, password := os.Getenv("RABBITMQ_ENDPOINT"), os.Getenv("RABBITMQ_USERNAME"), os.Getenv("RABBITMQ_PASSWORD")
	t.Setenv("RABBITMQ_ENDPOINT", "http://127.0.0.1:1")

	const set, topologyData = "rabbitmq_delay_queue_set.test", "data.rabbitmq_delay_topology.test"
	config := fmt.Sprintf(`
terraform {
  required_providers {
    delayq = {
      source = %[1]q
    }
  }
}

provider "delayq" {
  endpoint = %[2]q
  username = %[3]q
  password = %[4]q
}

resource "rabbitmq_delay_queue_set" "test" {
  provider = delayq
  name     = %[5]q
  levels   = 3

  route {
    destination = %[6]q
    key         = "invoices"
  }
}

data "rabbitmq_delay_topology" "test" {
  provider = delayq
  name     = rabbitmq_delay_queue_set.test.name
  levels   = rabbitmq_delay_queue_set.test.levels

  route {
    destination = %[6]q
    key         = "invoices"
  }
}

output "in_five_seconds" {
  value = provider::delayq::delay_routing_key(
    "invoices", "5s", rabbitmq_delay_queue_set.test.levels, rabbitmq_delay_queue_set.test.resolution
  )
}
`, source, endpoint, username, password, name, destination)

	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   testTerraform1_8,
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(set, plancheck.ResourceActionCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(set, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact(name+".ingest")),
					// 5 ticks of 1 s in 3 binary digits: 101.
					statecheck.ExpectKnownOutputValue("in_five_seconds", knownvalue.StringExact("invoices.1.0.1")),
					// The data source plans, through the same provider, the bindings the resource declared.
					statecheck.ExpectKnownValue(topologyData, tfjsonpath.New("bindings"), knownLineCount(12)),
					statecheck.CompareValuePairs(set, tfjsonpath.New("bindings"), topologyData, tfjsonpath.New("bindings"), compare.ValuesSame()),
				},
				Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 3, Resolution: time.Second,
					Routes: []topology.Route{{Destination: destination, Key: "invoices"}}}),
			},
			{
				// A refresh reads the set through the same provider block: nothing to do.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}
