package provider

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestProvider_unknownEndpointFailsThePlan plans with the provider's
// endpoint taken from a resource the same apply creates, while
// RABBITMQ_ENDPOINT names a broker: the plan must fail and name the
// endpoint, for a resource and for a data source, rather than plan against
// the environment's broker. terraform_data is Terraform's own, so nothing
// is downloaded, and no broker is needed.
func TestProvider_unknownEndpointFailsThePlan(t *testing.T) {
	t.Setenv("RABBITMQ_ENDPOINT", "http://127.0.0.1:15672")
	const unknownEndpoint = `
resource "terraform_data" "broker" {
  input = "http://127.0.0.1:15672"
}

provider "rabbitmq" {
  endpoint = terraform_data.broker.output
}
`
	wantError := regexp.MustCompile(`(?s)Unknown RabbitMQ API Endpoint.*endpoint = terraform_data\.broker\.output.*RABBITMQ_ENDPOINT`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: unknownEndpoint + `
resource "rabbitmq_delay_queue_set" "test" {
  name      = "unknown-endpoint"
  max_delay = "15s"
}`,
				PlanOnly:    true,
				ExpectError: wantError,
			},
			{
				Config: unknownEndpoint + `
data "rabbitmq_delay_topology" "test" {
  name      = "unknown-endpoint"
  max_delay = "15s"
}`,
				PlanOnly:    true,
				ExpectError: wantError,
			},
		},
	})
}

// TestUnknownSettings makes each setting of the provider block unknown in
// turn, through the framework's own decoding of the block, and expects one
// error on that attribute that names its environment variable; a block
// with every value known or unset has none.
func TestUnknownSettings(t *testing.T) {
	t.Parallel()
	if diags := unknownSettings(providerConfig(t, "")); diags.HasError() {
		t.Errorf("unknownSettings of a block without unknown values = %v", diags)
	}
	for _, setting := range (providerModel{}).settings() {
		t.Run(setting.attribute, func(t *testing.T) {
			t.Parallel()
			diags := unknownSettings(providerConfig(t, setting.attribute))
			if len(diags) != 1 {
				t.Fatalf("unknownSettings = %v, want one error", diags)
			}
			d, ok := diags[0].(interface{ Path() path.Path })
			if !ok || !d.Path().Equal(path.Root(setting.attribute)) ||
				!strings.Contains(diags[0].Detail(), setting.env) || !strings.HasPrefix(diags[0].Summary(), "Unknown RabbitMQ ") {
				t.Errorf("unknownSettings = %q: %q, want an error on %s naming %s", diags[0].Summary(), diags[0].Detail(), setting.attribute, setting.env)
			}
		})
	}
}

// TestProviderSettingsCoverTheSchema: settings lists every attribute of
// the provider's schema once, with the environment variable its
// description names.
func TestProviderSettingsCoverTheSchema(t *testing.T) {
	t.Parallel()
	attributes := providerSchema().Attributes
	var listed []string
	for _, setting := range (providerModel{}).settings() {
		listed = append(listed, setting.attribute)
		a, ok := attributes[setting.attribute]
		if !ok {
			t.Errorf("settings lists %s, which the schema does not have", setting.attribute)
			continue
		}
		if !strings.Contains(a.GetMarkdownDescription(), "`"+setting.env+"`") {
			t.Errorf("the description of %s does not name %s: %q", setting.attribute, setting.env, a.GetMarkdownDescription())
		}
	}
	slices.Sort(listed)
	if all := slices.Sorted(maps.Keys(attributes)); !slices.Equal(listed, all) {
		t.Errorf("settings lists %v, the schema has %v", listed, all)
	}
}

// providerConfig decodes a provider block as the framework hands it to
// Configure: every attribute unset but unknown, whose value is unknown.
func providerConfig(t *testing.T, unknown string) providerModel {
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
		if name == unknown {
			values[name] = tftypes.NewValue(attributeType, tftypes.UnknownValue)
		}
	}
	var model providerModel
	config := tfsdk.Config{Schema: schema, Raw: tftypes.NewValue(objectType, values)}
	if diags := config.Get(ctx, &model); diags.HasError() {
		t.Fatalf("decoding the provider block: %v", diags)
	}
	return model
}
