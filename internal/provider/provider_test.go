package provider

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the
// terraform binary the acceptance tests drive.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"rabbitmq": providerserver.NewProtocol6WithError(New("test")()),
}

// testAccPreCheck stops a test that needs the broker when none is configured.
// `make testacc` starts the local broker and sets these variables.
func testAccPreCheck(t *testing.T) {
	t.Helper()
	for _, env := range []string{"RABBITMQ_ENDPOINT", "RABBITMQ_USERNAME", "RABBITMQ_PASSWORD"} {
		if os.Getenv(env) == "" {
			t.Fatalf("%s must be set for acceptance tests (make testacc sets it for the local broker)", env)
		}
	}
}

// testBrokerClient talks to the same broker as the provider under test, so
// tests can check and change what is really there.
func testBrokerClient(t *testing.T) *broker.Client {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: needs TF_ACC=1 and a broker (make testacc)")
	}
	client, err := broker.New(broker.Config{
		Endpoint: os.Getenv("RABBITMQ_ENDPOINT"),
		Username: os.Getenv("RABBITMQ_USERNAME"),
		Password: os.Getenv("RABBITMQ_PASSWORD"),
		Timeout:  30 * time.Second,
	})
	if err != nil {
		t.Fatalf("building the test's broker client: %v", err)
	}
	return client
}

// TestAccProvider_unreachableBroker checks that a broker that does not answer
// is named in one clear diagnostic at the first operation that needs it.
func TestAccProvider_unreachableBroker(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "rabbitmq" {
  endpoint = "http://127.0.0.1:1"
  timeout  = "2s"
}
resource "rabbitmq_delay_queue_set" "test" {
  name   = "acc-unreachable"
  levels = 2
}`,
			ExpectError: regexp.MustCompile(`(?s)Cannot Reach RabbitMQ.*http://127\.0\.0\.1:1`),
		}},
	})
}

// TestProvider_planNeedsNoBroker plans a new set with no endpoint anywhere: a
// plan that needs no broker must not fail for want of one.
func TestProvider_planNeedsNoBroker(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "rabbitmq_delay_queue_set" "test" {
  name      = "plan-only"
  max_delay = "15s"
}`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

func TestProvider_invalidSettings(t *testing.T) {
	tests := map[string]struct {
		settings string
		want     string
	}{
		"endpoint without a scheme":   {settings: `endpoint = "127.0.0.1:15672"`, want: `(?s)Invalid Endpoint.*not an http:// or https://`},
		"timeout that is no duration": {settings: `timeout = "soon"`, want: `(?s)Invalid Timeout.*"soon"`},
		"negative timeout":            {settings: `timeout = "-1s"`, want: `(?s)Invalid Timeout`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: "provider \"rabbitmq\" {\n  " + tc.settings + "\n}\n" +
						"resource \"rabbitmq_delay_queue_set\" \"test\" {\n  name   = \"x\"\n  levels = 2\n}\n",
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}
