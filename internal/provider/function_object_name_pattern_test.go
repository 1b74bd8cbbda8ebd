package provider

import (
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestObjectNamePatternFunction_known checks that the function returns the
// pattern the provider's reads and the least-privilege tests use, with the
// dots of a name escaped.
func TestObjectNamePatternFunction_known(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "") // a function needs no broker
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "orders" {
  value = provider::rabbitmq::object_name_pattern("orders.retry")
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders", knownvalue.StringExact(topology.Names("orders.retry").ObjectNamePattern())),
				statecheck.ExpectKnownOutputValue("orders", knownvalue.StringRegexp(testLiteral(`^orders\.retry\.(unroutable|`))),
			},
		}},
	})
}

func TestObjectNamePatternFunction_errors(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	testFunctionErrors(t, "object_name_pattern", map[string]functionErrorCase{
		"empty name": {
			arguments: `""`,
			want:      `Invalid value for "name" parameter: must not be empty`,
		},
		"name ending in a dot": {
			arguments: `"orders."`,
			want:      `Invalid value for "name" parameter: must not start or end with '.'`,
		},
	})
}

// TestOperatingGuidePermissionPatterns checks that the patterns the
// operating guide shows, for the set orders and for the sets of team A, are
// the code's own: a change of the names the provider declares fails here
// until the guide shows the new pattern.
func TestOperatingGuidePermissionPatterns(t *testing.T) {
	t.Parallel()
	patterns := map[string]string{
		"object_name_pattern(\"orders\")":         topology.Names("orders").ObjectNamePattern(),
		"object_name_prefix_pattern(\"team-a.\")": topology.PrefixObjectNamePattern("team-a."),
	}
	for _, file := range []string{"../../templates/guides/operating-a-delay-queue-set.md.tmpl", "../../docs/guides/operating-a-delay-queue-set.md"} {
		guide, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for call, pattern := range patterns {
			if !strings.Contains(string(guide), "```\n"+pattern+"\n```") {
				t.Errorf("%s does not show the pattern of %s in a code block of its own:\n%s", file, call, pattern)
			}
		}
	}
}
