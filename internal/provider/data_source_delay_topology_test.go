package provider

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const testDataSource = "data.rabbitmq_delay_topology.test"

func testTopologyConfig(name, attributes string) string {
	return fmt.Sprintf(`
data "rabbitmq_delay_topology" "test" {
  name = %q
%s
}
`, name, attributes)
}

// TestDelayTopologyDataSource_plansWithoutBroker plans a set with no endpoint
// anywhere and checks every rendering against the planner's own.
func TestDelayTopologyDataSource_plansWithoutBroker(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	// Quorum queues: a new set's leaders are balanced.
	spec := topology.Spec{Name: "orders-delay", VHost: "/", MaxDelay: 15 * time.Second,
		QueueLeaderLocator: topology.LeaderLocatorBalanced, Routes: []topology.Route{{Destination: "orders", Key: "orders"}}}
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
			Config: testTopologyConfig(spec.Name, `
  max_delay = "15s"
  route {
    destination = "orders"
    key         = "orders"
  }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("levels"), knownvalue.Int64Exact(4)),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("vhost"), knownvalue.StringExact("/")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("resolution"), knownvalue.StringExact("1s")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("queue_type"), knownvalue.StringExact("quorum")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("dead_letter_strategy"), knownvalue.StringExact("at-least-once")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("queue_leader_locator"), knownvalue.StringExact("balanced")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("max_delay_effective"), knownvalue.StringExact("15s")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact("orders-delay.ingest")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("unroutable_queue"), knownvalue.StringExact("orders-delay.unroutable")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("definitions_json"), knownvalue.StringExact(string(definitions))),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("mermaid"), knownvalue.StringExact(topology.Mermaid(planned))),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("binding_table"), knownvalue.StringExact(topology.BindingTable(planned))),
				// 4+1 + 4·5/2 delay bindings, the unroutable binding and the route.
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("bindings"), knownLineCount(17)),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("bindings"), knownLine(16,
					knownvalue.StringExact(planned.Bindings[16].String()))),
			},
		}},
	})
}

// TestDelayTopologyDataSource_radix plans sets of radix 4 with no broker:
// levels from max_delay follow the radix, and every rendering is the
// planner's own for that radix.
func TestDelayTopologyDataSource_radix(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	spec := topology.Spec{Name: "orders-delay", VHost: "/", Levels: 2, Radix: 4, Resolution: time.Second,
		QueueLeaderLocator: topology.LeaderLocatorBalanced, Routes: []topology.Route{{Destination: "orders", Key: "orders"}}}
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
		Steps: []resource.TestStep{
			{
				Config: testTopologyConfig(spec.Name, `
  levels = 2
  radix  = 4
  route {
    destination = "orders"
    key         = "orders"
  }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("radix"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("levels"), knownvalue.Int64Exact(2)),
					// (4^2 − 1) ticks of 1 s.
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("max_delay_effective"), knownvalue.StringExact("15s")),
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("definitions_json"), knownvalue.StringExact(string(definitions))),
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("mermaid"), knownvalue.StringExact(topology.Mermaid(planned))),
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("binding_table"), knownvalue.StringExact(topology.BindingTable(planned))),
					// 3·2·3/2 + 2 + 1 delay bindings, the unroutable binding and the route.
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("bindings"), knownLineCount(14)),
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("bindings"), knownLine(0,
						knownvalue.StringExact(`orders-delay.ingest -> queue orders-delay.r4.01.1, key "#.1.*"`))),
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("definitions_json"),
						knownvalue.StringRegexp(regexp.MustCompile(`"name": "orders-delay\.r4\.01\.3"`))),
				},
			},
			{
				// 4^3 − 1 = 63 ticks reach 60 s; 4^2 − 1 = 15 do not.
				Config: testTopologyConfig(spec.Name, `
  max_delay = "60s"
  radix     = 4`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("levels"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("max_delay_effective"), knownvalue.StringExact("1m3s")),
				},
			},
			{
				// Without radix the data source says the default.
				Config: testTopologyConfig(spec.Name, `  max_delay = "60s"`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("radix"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("levels"), knownvalue.Int64Exact(6)),
				},
			},
		},
	})
}

// TestDelayTopologyDataSource_keepsConfiguredValues checks that configured
// values are returned as written, and derived ones follow them.
func TestDelayTopologyDataSource_keepsConfiguredValues(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testTopologyConfig("classic", `
  vhost      = "tenant-a"
  levels     = 3
  resolution = "1000ms"
  queue_type = "classic"`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("resolution"), knownvalue.StringExact("1000ms")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("dead_letter_strategy"), knownvalue.StringExact("at-most-once")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("max_delay_effective"), knownvalue.StringExact("7s")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("definitions_json"),
					knownvalue.StringRegexp(regexp.MustCompile(`"vhost": "tenant-a"`))),
			},
		}},
	})
}

func TestDelayTopologyDataSource_invalid(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	tests := map[string]struct {
		attributes string
		want       string
	}{
		"levels and max_delay":   {attributes: "  levels = 3\n  max_delay = \"5s\"", want: `conflicts with max_delay`},
		"neither":                {attributes: "", want: `set exactly one of levels`},
		"resolution not in ms":   {attributes: "  levels = 3\n  resolution = \"1500us\"", want: `whole number of milliseconds`},
		"max_delay not duration": {attributes: `  max_delay = "a day"`, want: `"a day" is not a duration`},
		"route key wildcard": {
			attributes: "  levels = 3\n  route {\n    destination = \"q\"\n    key = \"a.#\"\n  }",
			want:       `route[0].key: must not contain '#' or '*'`,
		},
		"radix 3": {attributes: "  levels = 3\n  radix = 3", want: `radix: must be one of 2, 4, 8, 16, 256, got 3`},
		"radix 0": {attributes: "  levels = 3\n  radix = 0", want: `radix: must be one of 2, 4, 8, 16, 256, got 0`},
		"classic at-least-once": {
			attributes: "  levels = 3\n  queue_type = \"classic\"\n  dead_letter_strategy = \"at-least-once\"",
			want:       `classic queues can only dead-letter at-most-once`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      testTopologyConfig("bad", tc.attributes),
					ExpectError: regexp.MustCompile(testPhrase(tc.want)),
				}},
			})
		})
	}
}

// TestAccDelayTopology_importDefinitions loads the data source's
// definitions_json into the local broker with `rabbitmqctl import_definitions`
// and checks that the broker then holds exactly the planned set.
func TestAccDelayTopology_importDefinitions(t *testing.T) {
	client := testBrokerClient(t)
	rabbitmqctl, err := exec.LookPath("rabbitmqctl")
	if err != nil {
		t.Fatalf("rabbitmqctl is needed to import definitions into the local broker (scripts/rabbitmq.sh installs it): %v", err)
	}
	name := testSetName(t)
	testQueue(t, client, name+"-work")
	spec := topology.Spec{Name: name, VHost: "/", Levels: 3, Resolution: 500 * time.Millisecond,
		Routes: []topology.Route{{Destination: name + "-work", Key: "orders"}}}
	testCleanupSet(t, "/", name)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: testTopologyConfig(name, fmt.Sprintf(`
  levels     = 3
  resolution = "500ms"
  route {
    destination = %q
    key         = "orders"
  }`, name+"-work")),
			Check: func(s *terraform.State) error {
				data, ok := s.RootModule().Resources[testDataSource]
				if !ok {
					return fmt.Errorf("%s is not in state", testDataSource)
				}
				if err := testImportDefinitions(t, rabbitmqctl, data.Primary.Attributes["definitions_json"]); err != nil {
					return err
				}
				// The broker imports definitions asynchronously.
				deadline := time.Now().Add(testHangSlack)
				for {
					err := testCheckSetMatchesPlan(client, spec)(s)
					if err == nil {
						return nil
					}
					if time.Now().After(deadline) {
						return fmt.Errorf("hung: %s after the import: %w", testHangSlack, err)
					}
					time.Sleep(200 * time.Millisecond)
				}
			},
		}},
	})
}

// testImportDefinitions loads definitions with `rabbitmqctl import_definitions`.
// Debian's rabbitmqctl runs as the rabbitmq user, and its 3.10 version reads
// no standard input: the file must be readable by everyone.
func testImportDefinitions(t *testing.T, rabbitmqctl, definitions string) error {
	t.Helper()
	//nolint:usetesting // t.TempDir() is private to root; the rabbitmq user must read the file
	file, err := os.CreateTemp("", "delay-topology-*.json")
	if err != nil {
		return err
	}
	t.Cleanup(func() { _ = os.Remove(file.Name()) })
	_, err = file.WriteString(definitions)
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Chmod(file.Name(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("writing the definitions for rabbitmqctl: %w", err)
	}
	if out, err := exec.Command(rabbitmqctl, "import_definitions", file.Name()).CombinedOutput(); err != nil {
		return fmt.Errorf("rabbitmqctl import_definitions %s: %v\n%s", file.Name(), err, out)
	}
	return nil
}

// TestDelayTopologyDataSource_libraryLayout plans Celery's layout with no
// broker: the fixed fields computed, the library's exchanges, no parking
// lot, and the definitions the planner renders for it.
func TestDelayTopologyDataSource_libraryLayout(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	spec := topology.Spec{Name: "celery", VHost: "/", Layout: topology.LayoutCelery, QueueType: topology.QueueTypeClassic,
		Routes: []topology.Route{{Destination: "tasks", DestinationType: topology.DestinationExchange, Key: "tasks.#"}}}
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
			Config: testTopologyConfig(spec.Name, `
  layout     = "celery"
  queue_type = "classic"
  route {
    destination      = "tasks"
    destination_type = "exchange"
    key              = "tasks.#"
  }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("levels"), knownvalue.Int64Exact(28)),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("resolution"), knownvalue.StringExact("1s")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("dead_letter_strategy"), knownvalue.StringExact("at-most-once")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact("celery_delayed_27")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("out_exchange"), knownvalue.StringExact("celery_delayed_delivery")),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("unroutable_queue"), knownvalue.Null()),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("definitions_json"), knownvalue.StringExact(string(definitions))),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("bindings"), knownLineCount(57)),
				statecheck.ExpectKnownValue(testDataSource, tfjsonpath.New("bindings"), knownLine(56,
					knownvalue.StringExact(`celery_delayed_delivery -> exchange tasks, key "#.tasks.#"`))),
			},
		}},
	})
}
