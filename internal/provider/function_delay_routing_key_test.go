package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func TestDelayRoutingKeyFunction_known(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "") // a function needs no broker
	longestKey := strings.Repeat("k", topology.MaxNameLength-2*4)
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
output "five_seconds" {
  value = provider::rabbitmq::delay_routing_key("orders", "5s", 4, "1s")
}
output "rounded_up" {
  value = provider::rabbitmq::delay_routing_key("orders.eu", "1001ms", 3, "1s")
}
output "no_key_no_delay" {
  value = provider::rabbitmq::delay_routing_key("", "0s", 3, "1s")
}
output "longest" {
  value = provider::rabbitmq::delay_routing_key("reminder", "36h", 17, "1s")
}
output "longest_key" {
  value = provider::rabbitmq::delay_routing_key(%q, "15s", 4, "1s")
}
`, longestKey),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("five_seconds", knownvalue.StringExact("orders.0.1.0.1")),
				statecheck.ExpectKnownOutputValue("rounded_up", knownvalue.StringExact("orders.eu.0.1.0")),
				statecheck.ExpectKnownOutputValue("no_key_no_delay", knownvalue.StringExact("0.0.0")),
				// 36 h = 129,600 s = 0b1_1111_1010_0100_0000.
				statecheck.ExpectKnownOutputValue("longest", knownvalue.StringExact("reminder.1.1.1.1.1.1.0.1.0.0.1.0.0.0.0.0.0")),
				statecheck.ExpectKnownOutputValue("longest_key", knownvalue.StringExact(longestKey+".1.1.1.1")),
			},
		}},
	})
}

// TestDelayRoutingKeyFunction_radix checks the optional trailing radix: the
// delay in ticks as exactly levels digits of that base, each in decimal.
func TestDelayRoutingKeyFunction_radix(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "hex" {
  value = provider::rabbitmq::delay_routing_key("orders", "200s", 2, "1s", 16)
}
output "hex_longest" {
  value = provider::rabbitmq::delay_routing_key("orders", "25.5s", 2, "100ms", 16)
}
output "hex_rounded_up" {
  value = provider::rabbitmq::delay_routing_key("", "1401ms", 2, "100ms", 16)
}
output "hex_no_delay" {
  value = provider::rabbitmq::delay_routing_key("a.b", "0s", 3, "1s", 16)
}
output "base_four" {
  value = provider::rabbitmq::delay_routing_key("orders", "37s", 3, "1s", 4)
}
output "explicit_binary" {
  value = provider::rabbitmq::delay_routing_key("orders", "5s", 4, "1s", 2)
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				// 200 = 12·16 + 8.
				statecheck.ExpectKnownOutputValue("hex", knownvalue.StringExact("orders.12.8")),
				// 255 ticks of 100 ms, the longest delay of 2 hex digits.
				statecheck.ExpectKnownOutputValue("hex_longest", knownvalue.StringExact("orders.15.15")),
				// 1401 ms is 15 ticks of 100 ms, rounded up.
				statecheck.ExpectKnownOutputValue("hex_rounded_up", knownvalue.StringExact("0.15")),
				statecheck.ExpectKnownOutputValue("hex_no_delay", knownvalue.StringExact("a.b.0.0.0")),
				// 37 = 2·16 + 1·4 + 1.
				statecheck.ExpectKnownOutputValue("base_four", knownvalue.StringExact("orders.2.1.1")),
				statecheck.ExpectKnownOutputValue("explicit_binary", knownvalue.StringExact("orders.0.1.0.1")),
			},
		}},
	})
}

// TestDelayRoutingKeyFunction_unknown checks that an argument known only at
// apply time leaves the result unknown in the plan instead of failing it.
func TestDelayRoutingKeyFunction_unknown(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "terraform_data" "delay" {
  input = "90s"
}
output "key" {
  value = provider::rabbitmq::delay_routing_key("orders", terraform_data.delay.output, 8, "1s")
}
`,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownOutputValue("key")},
			},
			// After apply the argument is known: 90 ticks in 8 digits.
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("key", knownvalue.StringExact("orders.0.1.0.1.1.0.1.0")),
			},
		}},
	})
}

func TestDelayRoutingKeyFunction_errors(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	tooLongKey := strings.Repeat("k", topology.MaxNameLength-2*4+1)
	tests := map[string]functionErrorCase{
		"delay beyond the set": {
			arguments: `"orders", "16s", 4, "1s"`,
			want:      `Invalid value for "delay" parameter: 16s is longer than 15s`,
		},
		"negative delay": {
			arguments: `"orders", "-1s", 4, "1s"`,
			want:      `Invalid value for "delay" parameter: must not be negative`,
		},
		"delay that is no duration": {
			arguments: `"orders", "soon", 4, "1s"`,
			want:      `Invalid value for "delay" parameter: "soon" is not a duration`,
		},
		"key too long": {
			arguments: fmt.Sprintf(`%q, "1s", 4, "1s"`, tooLongKey),
			want:      `Invalid value for "key" parameter: must be at most 247 bytes with 4 levels`,
		},
		"key with a wildcard": {
			arguments: `"orders.*", "1s", 4, "1s"`,
			want:      `Invalid value for "key" parameter: must not contain '#' or '*'`,
		},
		"key with an empty word": {
			arguments: `"orders..eu", "1s", 4, "1s"`,
			want:      `Invalid value for "key" parameter: must not start or end with '.'`,
		},
		"no levels": {
			arguments: `"orders", "1s", 0, "1s"`,
			want:      `Invalid value for "levels" parameter: must be between 1 and 32, got 0`,
		},
		"levels beyond a 32-bit int": {
			arguments: `"orders", "1s", 4294967298, "1s"`,
			want:      `Invalid value for "levels" parameter: must be at most 2147483647, got 4294967298`,
		},
		"radix beyond a 32-bit int": {
			arguments: `"orders", "1s", 4, "1s", 4294967312`,
			want:      `Invalid value for "radix" parameter: must be at most 2147483647, got 4294967312`,
		},
		"resolution below a millisecond": {
			arguments: `"orders", "1s", 4, "1us"`,
			want:      `Invalid value for "resolution" parameter: must be at least 1ms`,
		},
		"resolution that is no duration": {
			arguments: `"orders", "1s", 4, "tick"`,
			want:      `Invalid value for "resolution" parameter: "tick" is not a duration`,
		},
		"null key": {
			arguments: `null, "1s", 4, "1s"`,
			want:      `Invalid value for "key" parameter: argument must not be null`,
		},
		"null levels": {
			arguments: `"orders", "1s", null, "1s"`,
			want:      `Invalid value for "levels" parameter: argument must not be null`,
		},
		"radix that is no power of two": {
			arguments: `"orders", "1s", 4, "1s", 3`,
			want:      `Invalid value for "radix" parameter: must be one of 2, 4, 8, 16, 256, got 3`,
		},
		"radix 32": {
			arguments: `"orders", "1s", 4, "1s", 32`,
			want:      `Invalid value for "radix" parameter: must be one of 2, 4, 8, 16, 256, got 32`,
		},
		"radix zero": {
			arguments: `"orders", "1s", 4, "1s", 0`,
			want:      `Invalid value for "radix" parameter: must be one of 2, 4, 8, 16, 256, got 0`,
		},
		"two radixes": {
			arguments: `"orders", "1s", 2, "1s", 16, 16`,
			want:      `Invalid value for "radix" parameter: the function takes at most one radix after the resolution, got 2`,
		},
		"null radix": {
			arguments: `"orders", "1s", 2, "1s", null`,
			want:      `Invalid value for "radix" parameter: argument must not be null`,
		},
		"delay beyond the radix-16 set": {
			arguments: `"orders", "256s", 2, "1s", 16`,
			want:      `Invalid value for "delay" parameter: 4m16s is longer than 4m15s, the longest delay of 2 levels at resolution 1s in radix 16`,
		},
		"key too long for radix-16 digits": {
			arguments: fmt.Sprintf(`%q, "1s", 4, "1s", 16`, strings.Repeat("k", topology.MaxNameLength-3*4+1)),
			want:      `Invalid value for "key" parameter: must be at most 243 bytes with 4 levels in radix 16`,
		},
		"too many radix-16 levels for the broker's TTL": {
			arguments: `"orders", "1s", 8, "1s", 16`,
			want:      `Invalid value for "levels" parameter: 8 levels of radix 16 at resolution 1s`,
		},
	}
	testFunctionErrors(t, "delay_routing_key", tests)
}

// functionErrorCase is a call of a provider function with arguments (HCL)
// and a phrase of the error it must fail with.
type functionErrorCase struct {
	arguments string
	want      string
}

// testFunctionErrors calls function with each case's arguments in a plan and
// expects its error; Terraform may wrap the phrase at any space.
func testFunctionErrors(t *testing.T, function string, tests map[string]functionErrorCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				TerraformVersionChecks:   testTerraform1_8,
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      fmt.Sprintf("output \"key\" {\n  value = provider::rabbitmq::%s(%s)\n}\n", function, tc.arguments),
					ExpectError: regexp.MustCompile(testPhrase(tc.want)),
				}},
			})
		})
	}
}

// TestDelayRoutingKey_matchesEncodeKey checks, with no Terraform, that every
// delay of a small set gives EncodeKey's key and that the key decodes back to
// the delay rounded up to whole ticks.
func TestDelayRoutingKey_matchesEncodeKey(t *testing.T) {
	t.Parallel()
	const levels, resolution = 5, 250 * time.Millisecond
	for delay := time.Duration(0); delay <= topology.MaxDelayFor(levels, resolution); delay += 50 * time.Millisecond {
		got, funcErr := delayRoutingKey("orders.eu", delay.String(), levels, resolution.String(), topology.DefaultRadix)
		if funcErr != nil {
			t.Fatalf("delay %s: %v", delay, funcErr)
		}
		want, err := topology.EncodeKey("orders.eu", delay, levels, resolution)
		if err != nil || got != want {
			t.Fatalf("delay %s: got %q, EncodeKey gives %q (%v)", delay, got, want, err)
		}
		key, decoded, err := topology.DecodeKey(got, levels, resolution)
		roundedUp := delay + (resolution-delay%resolution)%resolution
		if err != nil || key != "orders.eu" || decoded != roundedUp {
			t.Fatalf("delay %s: %q decodes to %q, %s (%v); want %q, %s", delay, got, key, decoded, err, "orders.eu", roundedUp)
		}
	}
}

// TestDelayRoutingKey_reportsEveryArgument checks that problems with several
// arguments are all reported at once, each against its own argument.
func TestDelayRoutingKey_reportsEveryArgument(t *testing.T) {
	t.Parallel()
	_, funcErr := delayRoutingKey("a.#", "later", 0, "1s", topology.DefaultRadix)
	if funcErr == nil {
		t.Fatal("no error for a wildcard key, a delay that is no duration and 0 levels")
	}
	for _, want := range []string{`"later" is not a duration`, "must not contain '#'", "must be between 1 and 32"} {
		if !strings.Contains(funcErr.Text, want) {
			t.Errorf("the error %q does not say %q", funcErr.Text, want)
		}
	}
}
