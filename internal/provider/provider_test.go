package provider

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the
// terraform binary the acceptance tests drive.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"rabbitmq": providerserver.NewProtocol6WithError(New("test")()),
}

// testTerraform1_8 skips a test below Terraform 1.8: provider-defined
// functions came with it, and before it `plan -generate-config-out` crashes
// on a resource with computed nested attributes such as exchanges and queues
// (hashicorp/terraform#34463; seen with 1.5.7 here; OpenTofu 1.10.10 crashes
// the same way, 1.12.6 does not).
var testTerraform1_8 = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)}

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

// testAdmin is a rabbit-hole client with the tests' own credentials, for
// what the broker layer has no call for: users, permissions, and listings
// of a whole vhost.
func testAdmin() (*rabbithole.Client, error) {
	return rabbithole.NewClient(os.Getenv("RABBITMQ_ENDPOINT"), os.Getenv("RABBITMQ_USERNAME"), os.Getenv("RABBITMQ_PASSWORD"))
}

// testObjectsWithPrefix lists every exchange and queue of vhost whose name
// starts with prefix, exactly (the management API's filters ignore case),
// as "exchange <name>" and "queue <name>".
func testObjectsWithPrefix(vhost, prefix string) ([]string, error) {
	admin, err := testAdmin()
	if err != nil {
		return nil, err
	}
	exchanges, err := admin.ListExchangesIn(vhost)
	if err != nil {
		return nil, fmt.Errorf("listing the exchanges of vhost %q: %w", vhost, err)
	}
	queues, err := admin.ListQueuesIn(vhost)
	if err != nil {
		return nil, fmt.Errorf("listing the queues of vhost %q: %w", vhost, err)
	}
	var found []string
	for _, x := range exchanges {
		if strings.HasPrefix(x.Name, prefix) {
			found = append(found, "exchange "+x.Name)
		}
	}
	for _, q := range queues {
		if strings.HasPrefix(q.Name, prefix) {
			found = append(found, "queue "+q.Name)
		}
	}
	return found, nil
}

// testCleanupSet deletes, when the test ends, every exchange and queue of
// vhost named after the set that is still there: a test that failed with
// the broker cut off leaves what its provider could not destroy.
func testCleanupSet(t *testing.T, vhost, name string) {
	t.Helper()
	t.Cleanup(func() {
		found, err := testObjectsWithPrefix(vhost, name+".")
		if err != nil {
			t.Errorf("cleaning up after the set %q: %v", name, err)
			return
		}
		admin, err := testAdmin()
		if err != nil {
			t.Errorf("cleaning up after the set %q: %v", name, err)
			return
		}
		for _, object := range found {
			if queue, ok := strings.CutPrefix(object, "queue "); ok {
				_, err = admin.DeleteQueue(vhost, queue)
			} else {
				_, err = admin.DeleteExchange(vhost, strings.TrimPrefix(object, "exchange "))
			}
			if err != nil {
				t.Errorf("cleaning up %s: %v", object, err)
			}
		}
		if len(found) > 0 {
			t.Logf("deleted what the test left of the set %q: %s", name, strings.Join(found, ", "))
		}
	})
}
