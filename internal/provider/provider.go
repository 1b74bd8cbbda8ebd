package provider

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var (
	_ provider.Provider                   = &RabbitMQProvider{}
	_ provider.ProviderWithValidateConfig = &RabbitMQProvider{}
	_ provider.ProviderWithFunctions      = &RabbitMQProvider{}
)

// New returns the provider factory providerserver.Serve expects.
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &RabbitMQProvider{version: version, clock: delayset.SystemClock{}}
	}
}

// RabbitMQProvider is the rabbitmq provider. Its settings and their
// environment variables match the community RabbitMQ provider's, so both
// providers' blocks can take the same values; they still need a block each,
// under two local names, since both have the type name rabbitmq.
type RabbitMQProvider struct {
	version string
	// clock is the one the resources drain generations by, handed to
	// them by Configure: the machine's, or a test's.
	clock delayset.Clock
	// clientBuilt, when set, sees every management API client Configure
	// builds: the acceptance tests count the requests of a refresh with it.
	clientBuilt func(*broker.Client)
}

// providerModel maps the provider block.
type providerModel struct {
	Endpoint       types.String `tfsdk:"endpoint"`
	Username       types.String `tfsdk:"username"`
	Password       types.String `tfsdk:"password"`
	Insecure       types.Bool   `tfsdk:"insecure"`
	CACertFile     types.String `tfsdk:"cacert_file"`
	ClientCertFile types.String `tfsdk:"clientcert_file"`
	ClientKeyFile  types.String `tfsdk:"clientkey_file"`
	Proxy          types.String `tfsdk:"proxy"`
	Timeout        types.String `tfsdk:"timeout"`
	AMQPEndpoint   types.String `tfsdk:"amqp_endpoint"`
	AMQPCounts     types.Bool   `tfsdk:"amqp_counts"`
}

// defaultTimeout bounds each management API request when the configuration names no timeout.
const defaultTimeout = 30 * time.Second

func (p *RabbitMQProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "rabbitmq"
	resp.Version = p.version
}

func (p *RabbitMQProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = providerSchema()
}

func providerSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Declares broker-native delay topologies on RabbitMQ through its management HTTP API. " +
			"The settings `endpoint`, `username`, `password`, `insecure`, `cacert_file`, `clientcert_file`, `clientkey_file` " +
			"and `proxy`, with their environment variables, are those of the community RabbitMQ provider " +
			"(`cyrilgdn/rabbitmq`), so both providers' blocks can take the same values; `timeout`, `amqp_endpoint` and " +
			"`amqp_counts` are this provider's own. Both have the type name `rabbitmq`: give them two local names, as the " +
			"guide [Using it beside the community RabbitMQ provider](guides/using-the-community-rabbitmq-provider) shows.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				MarkdownDescription: "The URL of the RabbitMQ management API, such as `http://127.0.0.1:15672`. " +
					"Falls back to `RABBITMQ_ENDPOINT`; no default.",
				Optional: true,
			},
			"username": schema.StringAttribute{
				MarkdownDescription: "The user to authenticate as. Falls back to `RABBITMQ_USERNAME`.",
				Optional:            true,
			},
			"password": schema.StringAttribute{
				MarkdownDescription: "The user's password. Falls back to `RABBITMQ_PASSWORD`. Never stored in state.",
				Optional:            true,
				Sensitive:           true,
			},
			"insecure": schema.BoolAttribute{
				MarkdownDescription: "Skip verification of the management API's TLS certificate. Falls back to " +
					"`RABBITMQ_INSECURE`; defaults to `false`.",
				Optional: true,
			},
			"cacert_file": schema.StringAttribute{
				MarkdownDescription: "A PEM file of the CA certificates that verify the management API's certificate. " +
					"Falls back to `RABBITMQ_CACERT`; defaults to the system's CAs.",
				Optional: true,
			},
			"clientcert_file": schema.StringAttribute{
				MarkdownDescription: "The path to a PEM client certificate for mutual TLS. Falls back to " +
					"`RABBITMQ_CLIENTCERT`. Needs `clientkey_file`.",
				Optional: true,
			},
			"clientkey_file": schema.StringAttribute{
				MarkdownDescription: "The path to the PEM private key of `clientcert_file`. Falls back to " +
					"`RABBITMQ_CLIENTKEY`.",
				Optional: true,
			},
			"proxy": schema.StringAttribute{
				MarkdownDescription: "The URL of an HTTP proxy to the management API. Falls back to `RABBITMQ_PROXY`; " +
					"defaults to the `HTTPS_PROXY` and `NO_PROXY` variables.",
				Optional: true,
			},
			"timeout": schema.StringAttribute{
				MarkdownDescription: "How long one management API request may take, as a duration such as `\"30s\"`. " +
					"Falls back to `RABBITMQ_TIMEOUT`; defaults to `\"30s\"`.",
				Optional: true,
			},
			"amqp_endpoint": schema.StringAttribute{
				MarkdownDescription: "The AMQP URL (`amqp://` or `amqps://`, host and port only) through which the provider counts " +
					"a quorum queue's messages before deleting it. Falls back to `RABBITMQ_AMQP_ENDPOINT`; defaults to the " +
					"management endpoint's host at the broker's AMQP port.",
				Optional: true,
			},
			"amqp_counts": schema.BoolAttribute{
				MarkdownDescription: "Whether the provider may count a quorum queue's messages over AMQP rather than wait for " +
					"statistics. Falls back to `RABBITMQ_AMQP_COUNTS`; defaults to `true`.",
				Optional: true,
			},
		},
	}
}

// ValidateConfig checks the settings that are known at plan time, so a typo
// fails `terraform validate` rather than the first apply.
func (p *RabbitMQProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var config providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if v := config.Endpoint; !v.IsNull() && !v.IsUnknown() {
		if err := checkEndpoint(v.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("endpoint"), "Invalid Endpoint", err.Error())
		}
	}
	if v := config.Proxy; !v.IsNull() && !v.IsUnknown() {
		if err := broker.CheckProxy(v.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("proxy"), "Invalid Proxy", err.Error())
		}
	}
	if v := config.AMQPEndpoint; !v.IsNull() && !v.IsUnknown() {
		// Paired with the endpoint only when the block gives it; Configure
		// checks the pair again with the environment's values.
		var endpoint string
		if !config.Endpoint.IsUnknown() {
			endpoint = config.Endpoint.ValueString()
		}
		if err := broker.CheckAMQPEndpoint(v.ValueString(), endpoint); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("amqp_endpoint"), "Invalid AMQP Endpoint", err.Error())
		}
	}
	if v := config.Timeout; !v.IsNull() && !v.IsUnknown() {
		if _, err := parseTimeout(v.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("timeout"), "Invalid Timeout", err.Error())
		}
	}
}

func (p *RabbitMQProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var config providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(unknownSettings(config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data := &providerData{clock: p.clock}
	var settings broker.Config
	settings, data.clientErr = clientConfig(config)
	if data.clientErr == nil {
		resp.Diagnostics.Append(transportWarnings(settings)...)
		data.client, data.clientErr = broker.New(settings)
	}
	if data.clientErr == nil {
		tflog.Debug(ctx, "RabbitMQ management API client configured", map[string]any{"endpoint": broker.RedactURL(data.client.Endpoint())})
		if p.clientBuilt != nil {
			p.clientBuilt(data.client)
		}
	}
	resp.ResourceData = data
	resp.DataSourceData = data
}

func (p *RabbitMQProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewDelayQueueSetResource,
		NewDelayedExchangeResource,
	}
}

func (p *RabbitMQProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewDelayTopologyDataSource,
		NewDelayQueueSetsDataSource,
	}
}

func (p *RabbitMQProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{
		NewDelayRoutingKeyFunction,
		NewLayoutDelayRoutingKeyFunction,
		NewObjectNamePatternFunction,
		NewObjectNamePrefixPatternFunction,
	}
}

// providerData is what Configure hands to resources: a client, or the reason
// there is none, and the provider's clock. The reason is reported by the
// first operation that needs the broker, so plans that need none
// (validation, functions) never fail on it.
type providerData struct {
	client    *broker.Client
	clientErr error
	clock     delayset.Clock

	// created names, by library layout and vhost, the set that this
	// provider instance (one Terraform run) has begun to create: the
	// layout's objects have the library's names, so a second set of it
	// created at the same time would find none on the broker yet and
	// declare the same objects (see claimLibraryLayout).
	createdMu sync.Mutex
	created   map[libraryLayoutIn]string
}

// libraryLayoutIn is a library layout in a vhost.
type libraryLayoutIn struct {
	layout topology.Layout
	vhost  string
}

// claimLibraryLayout records that the set name is being created with the
// library layout in vhost, and returns "" — or the name of the set that
// this run already creates with that layout in that vhost (Terraform
// creates a resource at most once a run), which then keeps the claim.
func (d *providerData) claimLibraryLayout(layout topology.Layout, vhost, name string) (other string) {
	d.createdMu.Lock()
	defer d.createdMu.Unlock()
	key := libraryLayoutIn{layout, vhost}
	if other, ok := d.created[key]; ok {
		return other
	}
	if d.created == nil {
		d.created = map[libraryLayoutIn]string{}
	}
	d.created[key] = name
	return ""
}

// brokerClient returns the client or a diagnostic that says why there is none.
func (d *providerData) brokerClient() (*broker.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if d == nil {
		diags.AddError("Provider Not Configured",
			"The rabbitmq provider was not configured before this operation needed the broker. "+
				"This is a bug in the provider; please report it.")
		return nil, diags
	}
	if d.clientErr != nil {
		diags.AddError("Cannot Configure the RabbitMQ Client",
			"The provider needs the RabbitMQ management API for this operation but its settings are incomplete "+
				"or invalid: "+d.clientErr.Error())
		return nil, diags
	}
	return d.client, diags
}

// clientConfig is the management API client's configuration from the
// provider block, falling back to the RABBITMQ_* environment variables;
// broker.New builds the client from it, without I/O.
func clientConfig(config providerModel) (broker.Config, error) {
	endpoint := stringSetting(config.Endpoint, "RABBITMQ_ENDPOINT")
	if endpoint == "" {
		return broker.Config{}, fmt.Errorf("no endpoint is set: set endpoint in the provider block or RABBITMQ_ENDPOINT")
	}
	if err := checkEndpoint(endpoint); err != nil {
		return broker.Config{}, err
	}
	insecure, err := boolSetting(config.Insecure, "RABBITMQ_INSECURE")
	if err != nil {
		return broker.Config{}, err
	}
	timeout, err := parseTimeout(stringSetting(config.Timeout, "RABBITMQ_TIMEOUT"))
	if err != nil {
		return broker.Config{}, err
	}
	amqpCounts, err := boolSetting(config.AMQPCounts, "RABBITMQ_AMQP_COUNTS")
	if err != nil {
		return broker.Config{}, err
	}
	if config.AMQPCounts.IsNull() && os.Getenv("RABBITMQ_AMQP_COUNTS") == "" {
		amqpCounts = true
	}
	return broker.Config{
		Endpoint:       endpoint,
		Username:       stringSetting(config.Username, "RABBITMQ_USERNAME"),
		Password:       stringSetting(config.Password, "RABBITMQ_PASSWORD"),
		Insecure:       insecure,
		CACertFile:     stringSetting(config.CACertFile, "RABBITMQ_CACERT"),
		ClientCertFile: stringSetting(config.ClientCertFile, "RABBITMQ_CLIENTCERT"),
		ClientKeyFile:  stringSetting(config.ClientKeyFile, "RABBITMQ_CLIENTKEY"),
		Proxy:          stringSetting(config.Proxy, "RABBITMQ_PROXY"),
		Timeout:        timeout,
		AMQPEndpoint:   stringSetting(config.AMQPEndpoint, "RABBITMQ_AMQP_ENDPOINT"),
		// DisableAMQPCounts: counting over AMQP is on unless turned off.
		DisableAMQPCounts: !amqpCounts,
		// One debug line per broker operation, with its request count and duration.
		Logf: func(ctx context.Context, msg string, fields map[string]any) { tflog.Debug(ctx, msg, fields) },
	}, nil
}

// providerSetting is one attribute of the provider block.
type providerSetting struct {
	attribute string
	env       string     // the environment variable the attribute falls back to
	title     string     // what it is, in a diagnostic's summary
	value     attr.Value // as configured
}

// settings lists every attribute of the provider block with its value.
func (m providerModel) settings() []providerSetting {
	return []providerSetting{
		{"endpoint", "RABBITMQ_ENDPOINT", "RabbitMQ API Endpoint", m.Endpoint},
		{"username", "RABBITMQ_USERNAME", "RabbitMQ Username", m.Username},
		{"password", "RABBITMQ_PASSWORD", "RabbitMQ Password", m.Password},
		{"insecure", "RABBITMQ_INSECURE", "RabbitMQ TLS Verification Setting", m.Insecure},
		{"cacert_file", "RABBITMQ_CACERT", "RabbitMQ CA Certificate File", m.CACertFile},
		{"clientcert_file", "RABBITMQ_CLIENTCERT", "RabbitMQ Client Certificate File", m.ClientCertFile},
		{"clientkey_file", "RABBITMQ_CLIENTKEY", "RabbitMQ Client Key File", m.ClientKeyFile},
		{"proxy", "RABBITMQ_PROXY", "RabbitMQ Proxy", m.Proxy},
		{"timeout", "RABBITMQ_TIMEOUT", "RabbitMQ Request Timeout", m.Timeout},
		{"amqp_endpoint", "RABBITMQ_AMQP_ENDPOINT", "RabbitMQ AMQP Endpoint", m.AMQPEndpoint},
		{"amqp_counts", "RABBITMQ_AMQP_COUNTS", "RabbitMQ AMQP Counts Setting", m.AMQPCounts},
	}
}

// unknownSettings reports each setting whose value is not known at plan
// time, such as an endpoint taken from a resource not yet created. Terraform
// still configures the provider for the plan; falling back to the
// environment variable then would refresh and plan against another broker
// than the one the value will name, so the plan fails instead, as the
// scaffolding template's provider does.
func unknownSettings(config providerModel) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, s := range config.settings() {
		if s.value.IsUnknown() {
			diags.AddAttributeError(path.Root(s.attribute), "Unknown "+s.title,
				fmt.Sprintf("The provider cannot create the RabbitMQ management API client: the value of %s is not known "+
					"until apply. Either target apply the source of the value first, set the value statically in the "+
					"configuration, or leave %s unset and use the %s environment variable.", s.attribute, s.attribute, s.env))
		}
	}
	return diags
}

// stringSetting is the configured value, else the environment variable's.
// Configure has refused unknown values (unknownSettings).
func stringSetting(v types.String, env string) string {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	return os.Getenv(env)
}

func boolSetting(v types.Bool, env string) (bool, error) {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueBool(), nil
	}
	s := os.Getenv(env)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%s=%q is not a boolean (true or false)", env, s)
	}
	return b, nil
}

// checkEndpoint refuses an endpoint the client cannot use, as the client
// itself would, naming it redacted: it may hold a password.
func checkEndpoint(endpoint string) error {
	return broker.CheckEndpoint(endpoint)
}

func parseTimeout(s string) (time.Duration, error) {
	if s == "" {
		return defaultTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("timeout %q is not a positive duration such as \"30s\" or \"2m\"", s)
	}
	return d, nil
}
