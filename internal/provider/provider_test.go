package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
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
		"endpoint without a scheme":   {settings: `endpoint = "127.0.0.1:15672"`, want: `(?s)Invalid Endpoint.*the scheme must be\s+http or\s+https`},
		"timeout that is no duration": {settings: `timeout = "soon"`, want: `(?s)Invalid Timeout.*"soon"`},
		"negative timeout":            {settings: `timeout = "-1s"`, want: `(?s)Invalid Timeout`},
		"endpoint with a password, redacted": {settings: `endpoint = "amqp://admin:S3cret@rabbit.internal:5672"`,
			want: `(?s)Invalid Endpoint.*"amqp://admin:xxxxx@rabbit.internal:5672":\s+the\s+scheme\s+must\s+be`},
		"amqp_endpoint beside https": {settings: "endpoint = \"https://rabbit.internal:15671\"\n  amqp_endpoint = \"amqp://rabbit.internal:5672\"",
			want: `(?s)Invalid AMQP Endpoint.*travel\s+in\s+clear`},
		"proxy of another scheme, redacted": {settings: `proxy = "ftp://u:S3cret@proxy.internal"`,
			want: `(?s)Invalid Proxy.*"ftp://u:xxxxx@proxy.internal": the scheme must be`},
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

// TestProvider_validateConfig calls ValidateConfig with settings that
// must fail the plan, each holding a password with the characters that
// url.Parse reads otherwise, and checks the diagnostic, its attribute, and
// that no part of the password shows in it; and with settings that pass.
func TestProvider_validateConfig(t *testing.T) {
	t.Parallel()
	const secret = "Qx7/#?@: %Zk4"
	tests := map[string]struct {
		settings map[string]string
		// wantSummary and wantAttribute are the one error's, wantDetail a part of its detail; none for no error.
		wantSummary, wantAttribute, wantDetail string
	}{
		"endpoint with a password": {
			settings:    map[string]string{"endpoint": "http://admin:" + secret + "@rabbit.internal:15672"},
			wantSummary: "Invalid Endpoint", wantAttribute: "endpoint",
			wantDetail: `"http://admin:xxxxx@rabbit.internal:15672": give the credentials as username and password, not in the URL`,
		},
		"endpoint whose password looks like a port": {
			settings:    map[string]string{"endpoint": "http://admin:1234/Qx7Zk4@127.0.0.1:1"},
			wantSummary: "Invalid Endpoint", wantAttribute: "endpoint", wantDetail: `"http://admin:xxxxx@127.0.0.1:1"`,
		},
		"amqp_endpoint with a password": {
			settings:    map[string]string{"endpoint": "http://127.0.0.1:15672", "amqp_endpoint": "amqp://admin:" + secret + "@127.0.0.1:5672"},
			wantSummary: "Invalid AMQP Endpoint", wantAttribute: "amqp_endpoint",
			wantDetail: `"amqp://admin:xxxxx@127.0.0.1:5672": the credentials are the management API's`,
		},
		"amqp_endpoint that is no URL": {
			settings:    map[string]string{"amqp_endpoint": "amqp://rabbit:56x72"},
			wantSummary: "Invalid AMQP Endpoint", wantAttribute: "amqp_endpoint", wantDetail: "its port is not a number",
		},
		"amqp_endpoint of another scheme": {
			settings:    map[string]string{"amqp_endpoint": "http://127.0.0.1:5672"},
			wantSummary: "Invalid AMQP Endpoint", wantAttribute: "amqp_endpoint", wantDetail: "the scheme must be amqp or amqps",
		},
		"amqp:// beside https://": {
			settings:    map[string]string{"endpoint": "https://rabbit.internal:15671", "amqp_endpoint": "amqp://rabbit.internal:5672"},
			wantSummary: "Invalid AMQP Endpoint", wantAttribute: "amqp_endpoint", wantDetail: "would travel in clear over AMQP",
		},
		"proxy with a % that starts no escape": {
			settings:    map[string]string{"proxy": "http://proxy:" + secret + "@proxy.internal:3128"},
			wantSummary: "Invalid Proxy", wantAttribute: "proxy", wantDetail: `"http://proxy:xxxxx@proxy.internal:3128": its userinfo holds a "%"`,
		},
		"proxy with / # ? @ in the password": {settings: map[string]string{"proxy": "http://proxy:Qx7/#?@:Zk4@proxy.internal:3128"}},
		"amqps:// beside https://":           {settings: map[string]string{"endpoint": "https://rabbit.internal:15671", "amqp_endpoint": "amqps://rabbit.internal:5671"}},
		"amqp:// beside http://":             {settings: map[string]string{"endpoint": "http://127.0.0.1:15672", "amqp_endpoint": "amqp://127.0.0.1:5672"}},
		"amqp:// beside an unknown endpoint": {settings: map[string]string{"endpoint": "", "amqp_endpoint": "amqp://rabbit.internal:5672"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var resp fwprovider.ValidateConfigResponse
			p := &RabbitMQProvider{version: "test", clock: delayset.SystemClock{}}
			p.ValidateConfig(context.Background(),
				fwprovider.ValidateConfigRequest{Config: testProviderSettings(t, tc.settings)}, &resp)
			errs := resp.Diagnostics.Errors()
			if tc.wantSummary == "" {
				if len(errs) > 0 {
					t.Fatalf("ValidateConfig: %v, want no error", resp.Diagnostics)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("ValidateConfig: %v, want one error", resp.Diagnostics)
			}
			d := errs[0]
			attribute, _ := d.(interface{ Path() path.Path })
			switch {
			case d.Summary() != tc.wantSummary:
				t.Errorf("summary %q, want %q", d.Summary(), tc.wantSummary)
			case attribute == nil || !attribute.Path().Equal(path.Root(tc.wantAttribute)):
				t.Errorf("the error names %v, want the attribute %s", attribute, tc.wantAttribute)
			case !strings.Contains(d.Detail(), tc.wantDetail):
				t.Errorf("detail %q, want one saying %q", d.Detail(), tc.wantDetail)
			}
			if text := d.Summary() + d.Detail(); strings.Contains(text, "Qx7") || strings.Contains(text, "Zk4") {
				t.Errorf("the error shows the password: %s: %s", d.Summary(), d.Detail())
			}
		})
	}
}

// testProviderSettings is a provider block with settings, the rest unset;
// a setting of "" is unknown.
func testProviderSettings(t *testing.T, settings map[string]string) tfsdk.Config {
	t.Helper()
	ctx := context.Background()
	schema := providerSchema()
	objectType, ok := schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatalf("the provider schema's type is %T", schema.Type().TerraformType(ctx))
	}
	values := map[string]tftypes.Value{}
	for name, attributeType := range objectType.AttributeTypes {
		values[name] = tftypes.NewValue(attributeType, nil)
		switch value, set := settings[name]; {
		case set && value == "":
			values[name] = tftypes.NewValue(attributeType, tftypes.UnknownValue)
		case set:
			values[name] = tftypes.NewValue(attributeType, value)
		}
	}
	return tfsdk.Config{Schema: schema, Raw: tftypes.NewValue(objectType, values)}
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

// testClock is the provider's clock in a test: it stands still until the
// test moves it (Advance), and a wait on it (After) moves it by the time
// waited and is over at once.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

var _ delayset.Clock = (*testClock)(nil)

func newTestClock() *testClock {
	return &testClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) After(d time.Duration) <-chan time.Time {
	fired := make(chan time.Time, 1)
	fired <- c.Advance(d)
	return fired
}

// Advance moves the clock on by d and returns the time it shows then.
func (c *testClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// testProviderFactoriesWithClock serves the provider as
// testAccProtoV6ProviderFactories does, with clock for its clock.
func testProviderFactoriesWithClock(clock delayset.Clock) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"rabbitmq": providerserver.NewProtocol6WithError(&RabbitMQProvider{version: "test", clock: clock}),
	}
}

// TestProvider_configureHandsOverItsClock checks that the resource drains
// by the provider's clock: New gives the provider the machine's, and
// Configure hands the provider's to the resource with the client.
func TestProvider_configureHandsOverItsClock(t *testing.T) {
	t.Parallel()
	fresh, ok := New("test")().(*RabbitMQProvider)
	if !ok {
		t.Fatalf("New gives a %T, want a *RabbitMQProvider", New("test")())
	}
	if fresh.clock != (delayset.SystemClock{}) {
		t.Errorf("New gives the provider the clock %#v, want the machine's", fresh.clock)
	}
	ctx := context.Background()
	clock := newTestClock()
	p := &RabbitMQProvider{version: "test", clock: clock}
	var schema fwprovider.SchemaResponse
	p.Schema(ctx, fwprovider.SchemaRequest{}, &schema)
	configType, ok := schema.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatalf("the provider's schema is a %T, not an object", schema.Schema.Type().TerraformType(ctx))
	}
	unset := map[string]tftypes.Value{}
	for name, attributeType := range configType.AttributeTypes {
		unset[name] = tftypes.NewValue(attributeType, nil)
	}
	var configured fwprovider.ConfigureResponse
	p.Configure(ctx, fwprovider.ConfigureRequest{Config: tfsdk.Config{Schema: schema.Schema, Raw: tftypes.NewValue(configType, unset)}}, &configured)
	if configured.Diagnostics.HasError() {
		t.Fatal(configured.Diagnostics)
	}
	r := &DelayQueueSetResource{}
	var resp fwresource.ConfigureResponse
	r.Configure(ctx, fwresource.ConfigureRequest{ProviderData: configured.ResourceData}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	if r.data == nil || r.data.clock != clock {
		t.Errorf("the configured resource drains by %#v, want the provider's clock", r.data)
	}
}
