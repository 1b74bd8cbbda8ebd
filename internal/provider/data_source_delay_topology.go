package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var _ datasource.DataSource = &DelayTopologyDataSource{}

// NewDelayTopologyDataSource is the rabbitmq_delay_topology data source's constructor.
func NewDelayTopologyDataSource() datasource.DataSource {
	return &DelayTopologyDataSource{}
}

// DelayTopologyDataSource plans a delay queue set without a broker and
// renders the plan: RabbitMQ definitions, a Mermaid diagram, the bindings.
type DelayTopologyDataSource struct{}

// delayTopologyModel maps the data source's schema: the spec attributes of
// rabbitmq_delay_queue_set and what the planner derives, then the renderings.
type delayTopologyModel struct {
	delaySpecModel
	DefinitionsJSON types.String `tfsdk:"definitions_json"`
	Mermaid         types.String `tfsdk:"mermaid"`
	BindingTable    types.String `tfsdk:"binding_table"`
}

func (d *DelayTopologyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_delay_topology"
}

func (d *DelayTopologyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = delayTopologySchema()
}

func delayTopologySchema() schema.Schema {
	computed := func(description string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: description}
	}
	attributes, routeBlock := dataSourceSharedSchema()
	attributes["definitions_json"] = computed("Every exchange, queue and binding of the set as RabbitMQ definitions " +
		"(`exchanges`, `queues` and `bindings`, all durable), for `rabbitmqctl import_definitions` or the " +
		"management API's `POST /api/definitions`. The vhost must exist; the routes' destinations must too.")
	attributes["mermaid"] = computed("A Mermaid sequence diagram of the set: one arrow per binding, labelled with its routing key.")
	attributes["binding_table"] = computed("The bindings as a plain text table: source, destination, type and routing key.")
	return schema.Schema{
		MarkdownDescription: "Plans a delay queue set from the same arguments as `rabbitmq_delay_queue_set`, with no " +
			"broker and no credentials, and renders the plan: RabbitMQ definitions to load with " +
			"`rabbitmqctl import_definitions` (for brokers Terraform does not reach), a Mermaid diagram and the " +
			"bindings. Invalid arguments fail the plan with the same messages as the resource's.",
		Attributes: attributes,
		Blocks:     map[string]schema.Block{"route": routeBlock},
	}
}

// Read plans the set. Terraform calls it only once every argument is known,
// at plan time when the configuration is literal.
func (d *DelayTopologyDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m delayTopologyModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, _, diags := specFromModel(m.delaySpecModel)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resolved, planned, diags := newSetAndPlan(spec, "Invalid Delay Topology")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	definitions, err := topology.DefinitionsJSON(planned)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Render the Delay Topology", err.Error())
		return
	}
	setDerived(&m.delaySpecModel, resolved)
	setBindings(&m.delaySpecModel, planned)
	m.DefinitionsJSON = types.StringValue(string(definitions))
	m.Mermaid = types.StringValue(topology.Mermaid(planned))
	m.BindingTable = types.StringValue(topology.BindingTable(planned))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// newSetAndPlan resolves a spec as the resource creates a set of it
// (topology.NewSet) and plans it, reporting a refused spec per attribute
// under summary.
func newSetAndPlan(spec topology.Spec, summary string) (topology.Spec, topology.Topology, diag.Diagnostics) {
	resolved, err := topology.NewSet(spec)
	if err != nil {
		return spec, topology.Topology{}, problemDiagnostics(err, summary, nil)
	}
	desired, err := topology.Plan(resolved)
	return resolved, desired, problemDiagnostics(err, summary, nil)
}
