package provider

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func TestProvider_passwordIsSensitive(t *testing.T) {
	t.Parallel()
	var resp provider.SchemaResponse
	New("test")().Schema(context.Background(), provider.SchemaRequest{}, &resp)
	password, ok := resp.Schema.Attributes["password"]
	if !ok {
		t.Fatal("the provider schema has no password attribute")
	}
	if !password.IsSensitive() {
		t.Error("the provider's password attribute is not Sensitive")
	}
	for name, attribute := range delayQueueSetSchema().Attributes {
		if strings.Contains(name, "password") && !attribute.IsSensitive() {
			t.Errorf("the resource attribute %s is not Sensitive", name)
		}
	}
}

// testBrokerUser creates a broker user with the given tags and permissions
// in vhost, and deletes it when the test ends. It returns the name.
func testBrokerUser(t *testing.T, password, tags, vhost string, permissions rabbithole.Permissions) string {
	t.Helper()
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	user := "acc-user-" + strings.ToLower(acctest.RandString(8))
	testSetBrokerUser(t, user, password, tags, vhost, permissions)
	t.Cleanup(func() {
		if _, err := admin.DeleteUser(user); err != nil {
			t.Errorf("deleting the test user %s: %v", user, err)
		}
	})
	return user
}

// testSetBrokerUser creates or changes a broker user and its permissions in vhost.
func testSetBrokerUser(t *testing.T, user, password, tags, vhost string, permissions rabbithole.Permissions) {
	t.Helper()
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	var tagList rabbithole.UserTags
	if tags != "" {
		tagList = strings.Split(tags, ",")
	}
	if _, err := admin.PutUser(user, rabbithole.UserSettings{Password: password, Tags: tagList}); err != nil {
		t.Fatalf("creating the test user %s: %v", user, err)
	}
	if _, err := admin.UpdatePermissionsIn(vhost, user, permissions); err != nil {
		t.Fatalf("setting the permissions of the test user %s: %v", user, err)
	}
}

// testBuildProvider builds the provider binary into a directory of its own
// and returns a Terraform CLI configuration file whose dev_overrides run it,
// as scripts/dev-overrides.sh does for the demo.
func testBuildProvider(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-rabbitmq"),
		"github.com/delayqueue/terraform-provider-rabbitmq")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	config := filepath.Join(dir, "dev-overrides.tfrc")
	overrides := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"delayqueue/rabbitmq\" = %q\n  }\n  direct {}\n}\n", dir)
	if err := os.WriteFile(config, []byte(overrides), 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// testTerraformPath is the terraform binary the acceptance tests use.
func testTerraformPath(t *testing.T) string {
	t.Helper()
	if path := os.Getenv("TF_ACC_TERRAFORM_PATH"); path != "" {
		return path
	}
	path, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("no terraform: set TF_ACC_TERRAFORM_PATH or put terraform on PATH")
	}
	return path
}

// TestAccProvider_passwordNeverShown runs terraform itself, with the provider
// binary built from this checkout and TF_LOG=TRACE, through an apply, a
// plan and a destroy, with a distinctive password in the provider block (by
// a sensitive variable), and looks for the password in everything they
// leave: the trace log, every command's output, the state and its backup.
func TestAccProvider_passwordNeverShown(t *testing.T) {
	client := testBrokerClient(t)
	testAccPreCheck(t)
	terraform := testTerraformPath(t)
	cliConfig := testBuildProvider(t)
	password := "pw-" + acctest.RandString(24) + "-never-shown"
	user := testBrokerUser(t, password, "management", "/", rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"})
	name := testSetName(t)
	testCleanupSet(t, "/", name)

	dir := t.TempDir()
	config := fmt.Sprintf(`
terraform {
  required_providers {
    rabbitmq = { source = "delayqueue/rabbitmq" }
  }
}

variable "rabbitmq_password" {
  type      = string
  sensitive = true
}

provider "rabbitmq" {
  endpoint = %q
  username = %q
  password = var.rabbitmq_password
}

resource "rabbitmq_delay_queue_set" "test" {
  name   = %q
  levels = 3
}
`, os.Getenv("RABBITMQ_ENDPOINT"), user, name)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "trace.log")
	var env []string
	for _, kv := range os.Environ() {
		// The credentials come from the configuration only; no other CLI configuration applies.
		if !strings.HasPrefix(kv, "RABBITMQ_") && !strings.HasPrefix(kv, "TF_") {
			env = append(env, kv)
		}
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_LOG=TRACE", "TF_LOG_PATH="+logPath,
		"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_VAR_rabbitmq_password="+password)

	var outputs bytes.Buffer
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(terraform, append([]string{"-chdir=" + dir}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(&outputs, "$ terraform %s\n%s\n", strings.Join(args, " "), out)
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("apply", "-auto-approve", "-input=false", "-no-color")
	spec := topology.Spec{Name: name, VHost: "/", Levels: 3, Resolution: time.Second}
	if err := testCheckSetMatchesPlan(client, spec)(nil); err != nil {
		t.Fatalf("after apply: %v", err)
	}
	// Refreshes the set and plans; -detailed-exitcode fails on any change.
	run("plan", "-detailed-exitcode", "-input=false", "-no-color")
	run("apply", "-destroy", "-auto-approve", "-input=false", "-no-color")
	if err := testCheckSetGone(client, name)(nil); err != nil {
		t.Fatalf("after destroy: %v", err)
	}

	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The provider's own log lines must be there, or the check below proves nothing.
	if !bytes.Contains(logged, []byte("RabbitMQ management API: read set")) {
		t.Fatalf("the trace log (%d bytes) has none of the provider's debug lines", len(logged))
	}
	places := map[string][]byte{"the TF_LOG=TRACE log": logged, "the output of terraform": outputs.Bytes()}
	for _, file := range []string{"terraform.tfstate", "terraform.tfstate.backup"} {
		content, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		places[file] = content
	}
	for place, content := range places {
		if i := bytes.Index(content, []byte(password)); i >= 0 {
			t.Errorf("the password appears in %s: …%s…", place, content[max(0, i-200):i])
		}
	}
	t.Logf("the password is in none of: %d bytes of trace log, %d bytes of terraform output, and the state files",
		len(logged), outputs.Len())
}

// testLeastPrivilegePermissions are the permissions, in the set's vhost,
// that the provider needs for the set called name whose only route goes to
// the queue destination: configure and read on the set's own objects, write
// on them and on the route's destination.
func testLeastPrivilegePermissions(name, destination string) rabbithole.Permissions {
	own := topology.Names(name).ObjectNamePattern()
	return rabbithole.Permissions{
		Configure: own,
		Write:     own + "|^" + regexp.QuoteMeta(destination) + "$",
		Read:      own,
	}
}

// TestAccDelayQueueSet_leastPrivilege manages a set in a vhost of its own as
// a user who may touch nothing there but the set's own objects and its
// route's destination, with the management tag only: create, refresh,
// update, import and destroy all work. Without the tag the management API
// refuses the user; without write on the route's destination the broker
// refuses the route; both say so clearly.
func TestAccDelayQueueSet_leastPrivilege(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	vhost := testVhost(t)
	testCleanupSet(t, vhost, name)
	destination := name + "-work"
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.DeclareQueue(vhost, destination, rabbithole.QueueSettings{Durable: true}); err != nil {
		t.Fatalf("declaring the route's queue: %v", err)
	}
	password := acctest.RandString(20)
	enough := testLeastPrivilegePermissions(name, destination)
	user := testBrokerUser(t, password, "", vhost, enough)

	provider := fmt.Sprintf("provider \"rabbitmq\" {\n  username = %q\n  password = %q\n}\n", user, password)
	set := func(levels int, key string) string {
		return provider + testSetConfig(name, fmt.Sprintf(
			"  vhost  = %q\n  levels = %d\n  route {\n    destination = %q\n    key         = %q\n  }", vhost, levels, destination, key))
	}
	two, three := set(2, "orders"), set(3, "billing")
	spec := func(levels int, key string) topology.Spec {
		return topology.Spec{Name: name, VHost: vhost, Levels: levels, Resolution: time.Second,
			Routes: []topology.Route{{Destination: destination, Key: key}}}
	}

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckOnlyPlanned(client, topology.Spec{Name: name, VHost: vhost}),
		Steps: []resource.TestStep{
			{
				// No tag: the management API refuses the user outright.
				Config:      two,
				ExpectError: regexp.MustCompile(`(?s)RabbitMQ Refused the Credentials.*` + regexp.QuoteMeta(user) + `.*Not\s+management\s+user`),
			},
			{
				// The management tag, but no write permission on the route's destination.
				PreConfig: func() {
					withoutRoute := enough
					withoutRoute.Write = enough.Configure
					testSetBrokerUser(t, user, password, "management", vhost, withoutRoute)
				},
				Config: two,
				ExpectError: regexp.MustCompile(`(?s)RabbitMQ Refused the Operation.*` + regexp.QuoteMeta(destination) +
					`.*Access\s+refused.*write\s+permission\s+on\s+them\s+and\s+on\s+each\s+route.s\s+destination`),
			},
			{
				// Enough: the partly created set is tainted, deleted and created again.
				PreConfig: func() { testSetBrokerUser(t, user, password, "management", vhost, enough) },
				Config:    two,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionDestroyBeforeCreate)},
				},
				Check: testCheckOnlyPlanned(client, spec(2, "orders")),
			},
			{
				Config:   two,
				PlanOnly: true,
			},
			{
				// More levels and another route key, in place.
				Config: three,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				Check: testCheckOnlyPlanned(client, spec(3, "billing")),
			},
			{
				// Fewer levels: the queue to delete is peeked first.
				Config: two,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				Check: testCheckOnlyPlanned(client, spec(2, "orders")),
			},
			{
				Config:            two,
				ResourceName:      testResource,
				ImportState:       true,
				ImportStateVerify: true,
			},
		},
	})
}

// testVhost creates a vhost of the test's own, deleted with everything in
// it when the test ends.
func testVhost(t *testing.T) string {
	t.Helper()
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	vhost := "acc-vhost-" + strings.ToLower(acctest.RandString(8))
	if _, err := admin.PutVhost(vhost, rabbithole.VhostSettings{}); err != nil {
		t.Fatalf("creating the test vhost %s: %v", vhost, err)
	}
	t.Cleanup(func() {
		if _, err := admin.DeleteVhost(vhost); err != nil {
			t.Errorf("deleting the test vhost %s: %v", vhost, err)
		}
	})
	return vhost
}
