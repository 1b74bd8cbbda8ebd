package provider

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
)

// testSecretsConfig is the configuration of TestAccProvider_secretsNeverShown:
// the provider block (%s) takes each setting from a sensitive variable,
// null unless the run sets it (a credential in a literal would show in
// Terraform's own source snippets), and the set needs the broker at apply,
// the data source at plan.
const testSecretsConfig = `
terraform {
  required_providers {
    rabbitmq = { source = "delayqueue/rabbitmq" }
  }
}

variable "endpoint" {
  type      = string
  sensitive = true
  default   = null
}
variable "password" {
  type      = string
  sensitive = true
  default   = null
}
variable "proxy" {
  type      = string
  sensitive = true
  default   = null
}
variable "amqp_endpoint" {
  type      = string
  sensitive = true
  default   = null
}
variable "insecure" {
  type    = bool
  default = null
}
variable "read_sets" {
  type    = bool
  default = false
}

%s

resource "rabbitmq_delay_queue_set" "test" {
  name   = %q
  levels = 2
}

data "rabbitmq_delay_queue_sets" "all" {
  count = var.read_sets ? 1 : 0
}
`

// TestAccProvider_secretsNeverShown runs terraform itself, with the provider
// binary built from this checkout and TF_LOG=TRACE, through a validate, a
// plan and applies that fail, with one secret in every place a credential
// can come from: the password attribute and RABBITMQ_PASSWORD, and the
// userinfo of the endpoint, of the proxy and of the AMQP endpoint, each
// from the block and from the environment. The secret holds "/", "#", "?"
// and "@", which url.Parse reads otherwise than as a password. Each run
// must fail with the diagnostic it is there for, or show the warnings it
// is there for, and no part of the secret may be in their outputs or in
// the trace log.
func TestAccProvider_secretsNeverShown(t *testing.T) {
	testBrokerClient(t) // skips without TF_ACC
	testAccPreCheck(t)
	terraform := testTerraformPath(t)
	cliConfig := testBuildProvider(t)
	// Each part alone must show nowhere either: a parser that cuts the
	// password at one of its odd characters shows the part before it.
	parts := []string{"S3c" + acctest.RandString(10), acctest.RandString(10) + "t9"}
	secret := parts[0] + "/#?@" + parts[1]
	endpoint := os.Getenv("RABBITMQ_ENDPOINT")
	name := testSetName(t)
	testCleanupSet(t, "/", name)

	// From variables, which terraform validate takes for unknown: plan and apply.
	fromVariables := `provider "rabbitmq" {
  endpoint = var.endpoint
  password = var.password
  proxy    = var.proxy
  insecure = var.insecure

  amqp_endpoint = var.amqp_endpoint
}`
	// Known at validate, sensitive, and not on the lines of the provider
	// block that Terraform shows with a diagnostic.
	fromLocals := fmt.Sprintf(`locals {
  endpoint = sensitive("amqp://admin:%[1]s@rabbit.internal:5672")
  password = sensitive(%[1]q)
  proxy    = sensitive("ftp://proxy:%[1]s@proxy.internal:3128")
  amqp     = sensitive("amqp://admin:%[1]s@rabbit.internal:5672")
}

provider "rabbitmq" {
  endpoint = local.endpoint
  password = local.password
  proxy    = local.proxy

  amqp_endpoint = local.amqp
}`, secret)
	dir := t.TempDir()
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RABBITMQ_") && !strings.HasPrefix(kv, "TF_") {
			base = append(base, kv)
		}
	}
	base = append(base, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_LOG=TRACE", "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")

	runs := []struct {
		name string
		// provider is the provider block.
		provider string
		args     []string
		env      []string
		// want are texts the output must hold: the diagnostic or warning the run is for.
		want []string
		// fails says the run must fail.
		fails bool
	}{
		{
			name:     "validate: endpoint, proxy and amqp_endpoint of the block, with userinfo; password attribute",
			provider: fromLocals,
			args:     []string{"validate", "-no-color"},
			want: []string{"Invalid Endpoint", "amqp://admin:xxxxx@rabbit.internal:5672", "Invalid Proxy", "ftp://proxy:xxxxx@proxy.internal:3128",
				"Invalid AMQP Endpoint", "the credentials are the management API's"},
			fails: true,
		},
		{
			name:  "plan: RABBITMQ_ENDPOINT of another scheme with userinfo, RABBITMQ_PASSWORD",
			args:  []string{"plan", "-input=false", "-no-color", "-var=read_sets=true"},
			env:   []string{"RABBITMQ_ENDPOINT=amqp://admin:" + secret + "@rabbit.internal:5672", "RABBITMQ_PASSWORD=" + secret, "RABBITMQ_USERNAME=admin"},
			want:  []string{"amqp://admin:xxxxx@rabbit.internal:5672", "the scheme must be http or https"},
			fails: true,
		},
		{
			name:  "plan: RABBITMQ_ENDPOINT of http with userinfo, RABBITMQ_PROXY with userinfo",
			args:  []string{"plan", "-input=false", "-no-color", "-var=read_sets=true"},
			env:   []string{"RABBITMQ_ENDPOINT=http://admin:" + secret + "@rabbit.internal:15672", "RABBITMQ_PROXY=http://proxy:" + secret + "@127.0.0.1:9", "RABBITMQ_USERNAME=admin"},
			want:  []string{"http://admin:xxxxx@rabbit.internal:15672", "not in the URL"},
			fails: true,
		},
		{
			name:  "plan: RABBITMQ_AMQP_ENDPOINT with userinfo",
			args:  []string{"plan", "-input=false", "-no-color", "-var=read_sets=true"},
			env:   []string{"RABBITMQ_ENDPOINT=" + endpoint, "RABBITMQ_PASSWORD=" + secret, "RABBITMQ_USERNAME=guest", "RABBITMQ_AMQP_ENDPOINT=amqp://admin:" + secret + "@rabbit.internal:5672"},
			want:  []string{"amqp://admin:xxxxx@rabbit.internal:5672", "give none in the URL"},
			fails: true,
		},
		{
			name:  "plan: amqp_endpoint amqp:// beside an https:// endpoint, password attribute",
			args:  []string{"plan", "-input=false", "-no-color"},
			env:   []string{"TF_VAR_endpoint=https://rabbit.internal:15671", "TF_VAR_amqp_endpoint=amqp://rabbit.internal:5672", "TF_VAR_password=" + secret, "RABBITMQ_USERNAME=admin"},
			want:  []string{"Invalid AMQP Endpoint", "would travel in clear over AMQP"},
			fails: true,
		},
		{
			name:  "plan: RABBITMQ_AMQP_ENDPOINT amqp:// beside an https:// RABBITMQ_ENDPOINT, RABBITMQ_PASSWORD",
			args:  []string{"plan", "-input=false", "-no-color", "-var=read_sets=true"},
			env:   []string{"RABBITMQ_ENDPOINT=https://rabbit.internal:15671", "RABBITMQ_AMQP_ENDPOINT=amqp://rabbit.internal:5672", "RABBITMQ_PASSWORD=" + secret, "RABBITMQ_USERNAME=admin"},
			want:  []string{"Cannot Configure the RabbitMQ Client", "would travel in clear over AMQP"},
			fails: true,
		},
		{
			name: "plan: http:// and amqp:// to another host and insecure, password attribute: three warnings",
			args: []string{"plan", "-input=false", "-no-color"},
			env: []string{"TF_VAR_endpoint=http://rabbit.internal:15672", "TF_VAR_amqp_endpoint=amqp://rabbit.internal:5672",
				"TF_VAR_password=" + secret, "TF_VAR_insecure=true", "RABBITMQ_USERNAME=admin"},
			want: []string{"RabbitMQ Credentials Sent in Clear", "RabbitMQ Credentials Sent in Clear over AMQP", "RabbitMQ TLS Certificate Not Verified"},
		},
		{
			name: "plan: https:// and insecure, RABBITMQ_PASSWORD: the warning names the AMQP listener too",
			args: []string{"plan", "-input=false", "-no-color"},
			env:  []string{"TF_VAR_endpoint=https://rabbit.internal:15671", "RABBITMQ_PASSWORD=" + secret, "TF_VAR_insecure=true", "RABBITMQ_USERNAME=admin"},
			want: []string{"RabbitMQ TLS Certificate Not Verified", "of the management API and of the broker's AMQP listener"},
		},
		{
			name:  "apply: the broker refuses the password attribute",
			args:  []string{"apply", "-auto-approve", "-input=false", "-no-color"},
			env:   []string{"TF_VAR_endpoint=" + endpoint, "TF_VAR_password=" + secret, "RABBITMQ_USERNAME=guest"},
			want:  []string{"RabbitMQ Refused the Credentials", `refused user "guest" (401 Unauthorized`},
			fails: true,
		},
		{
			name:  "apply: RABBITMQ_PASSWORD through a RABBITMQ_PROXY with userinfo that is down",
			args:  []string{"apply", "-auto-approve", "-input=false", "-no-color", "-var=read_sets=true"},
			env:   []string{"RABBITMQ_ENDPOINT=" + endpoint, "RABBITMQ_PASSWORD=" + secret, "RABBITMQ_USERNAME=guest", "RABBITMQ_PROXY=http://proxy:" + secret + "@127.0.0.1:9"},
			want:  []string{"Cannot Reach RabbitMQ"},
			fails: true,
		},
	}
	var searched int
	for i, run := range runs {
		if run.provider == "" {
			run.provider = fromVariables
		}
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), fmt.Appendf(nil, testSecretsConfig, run.provider, name), 0o600); err != nil {
			t.Fatal(err)
		}
		logPath := filepath.Join(dir, fmt.Sprintf("trace-%d.log", i))
		cmd := exec.Command(terraform, append([]string{"-chdir=" + dir}, run.args...)...)
		cmd.Env = append(append(append([]string{}, base...), run.env...), "TF_LOG_PATH="+logPath)
		out, err := cmd.CombinedOutput()
		if run.fails != (err != nil) {
			t.Errorf("%s: failed = %v, want %v\n%s", run.name, err != nil, run.fails, out)
		}
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("%s: %v", run.name, err)
		}
		normalized := strings.Join(strings.Fields(string(out)), " ")
		for _, want := range run.want {
			if !strings.Contains(normalized, want) {
				t.Errorf("%s: the output does not say %q:\n%s", run.name, want, out)
			}
		}
		logged, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(logged, []byte("provider.terraform-provider-rabbitmq")) {
			t.Errorf("%s: the trace log (%d bytes) has none of the provider's lines", run.name, len(logged))
		}
		for place, content := range map[string][]byte{"output": out, "trace log": logged} {
			for _, shown := range append([]string{secret}, parts...) {
				if i := bytes.Index(content, []byte(shown)); i >= 0 {
					t.Errorf("%s: the secret appears in the %s: …%s…", run.name, place, content[max(0, i-300):min(len(content), i+50)])
				}
			}
		}
		searched += len(out) + len(logged)
	}
	t.Logf("the secret is in none of %d bytes of output and trace log of %d runs", searched, len(runs))
}
