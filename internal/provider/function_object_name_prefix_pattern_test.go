package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func TestObjectNamePrefixPatternFunction_known(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "") // a function needs no broker
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "team" {
  value = provider::rabbitmq::object_name_prefix_pattern("team-a.")
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("team", knownvalue.StringExact(topology.PrefixObjectNamePattern("team-a."))),
				statecheck.ExpectKnownOutputValue("team", knownvalue.StringRegexp(testLiteral(`^team-a\..*\.(unroutable|`))),
			},
		}},
	})
}

// testLiteral matches text at the start of a value, literally.
func testLiteral(text string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(text))
}
