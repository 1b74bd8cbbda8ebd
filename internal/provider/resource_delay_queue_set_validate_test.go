package provider

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestDelayQueueSet_invalidConfigs checks that bad input fails at plan time,
// with no broker, naming the attribute and what it allows.
func TestDelayQueueSet_invalidConfigs(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	tests := map[string]struct {
		attributes string
		want       string
	}{
		"no levels nor max_delay":     {attributes: ``, want: `(?s)levels.*max_delay`},
		"both levels and max_delay":   {attributes: "levels = 3\n  max_delay = \"7s\"", want: `(?s)max_delay`},
		"zero levels":                 {attributes: `levels = 0`, want: `(?s)levels.*1.*32`},
		"33 levels":                   {attributes: `levels = 33`, want: `(?s)levels.*1.*32`},
		"max_delay needs 33 levels":   {attributes: "max_delay = \"100000h\"\n  resolution = \"1ms\"", want: `(?s)max_delay`},
		"max_delay is no duration":    {attributes: `max_delay = "2 days"`, want: `(?s)Invalid Duration.*"2 days"`},
		"sub-millisecond resolution":  {attributes: "levels = 3\n  resolution = \"500us\"", want: `(?s)resolution.*1ms`},
		"negative resolution":         {attributes: "levels = 3\n  resolution = \"-1s\"", want: `(?s)resolution`},
		"top level TTL over 10 years": {attributes: "levels = 32\n  resolution = \"1s\"", want: `(?s)levels`},
		"unknown queue type":          {attributes: "levels = 3\n  queue_type = \"stream\"", want: `(?s)queue_type.*quorum.*classic`},
		"at-least-once on classic": {attributes: "levels = 3\n  queue_type = \"classic\"\n  dead_letter_strategy = \"at-least-once\"",
			want: `(?s)dead_letter_strategy.*classic`},
		"route key with a wildcard": {attributes: "levels = 3\n  route {\n    destination = \"q\"\n    key = \"orders.*\"\n  }",
			want: `(?s)route\[0\]\.key`},
		"duplicate routes": {attributes: "levels = 3\n  route {\n    destination = \"q\"\n  }\n  route {\n    destination = \"q\"\n  }",
			want: `(?s)route\[1\]`},
		"unknown destination type": {attributes: "levels = 3\n  route {\n    destination = \"q\"\n    destination_type = \"topic\"\n  }",
			want: `(?s)destination_type`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      testSetConfig("valid-name", "  "+tc.attributes),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
	for name, setName := range map[string]string{
		"name with a slash":   "a/b",
		"name reserved amq.":  "amq.delay",
		"name over 241 bytes": strings.Repeat("n", 242),
	} {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      testSetConfig(setName, "  levels = 3"),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)Invalid Delay Queue Set.*name`),
				}},
			})
		})
	}
}
