package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
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
// rabbitmq_delay_queue_set, then what the planner derives and renders.
type delayTopologyModel struct {
	Name               types.String `tfsdk:"name"`
	VHost              types.String `tfsdk:"vhost"`
	MaxDelay           types.String `tfsdk:"max_delay"`
	Levels             types.Int64  `tfsdk:"levels"`
	Resolution         types.String `tfsdk:"resolution"`
	QueueType          types.String `tfsdk:"queue_type"`
	DeadLetterStrategy types.String `tfsdk:"dead_letter_strategy"`
	Routes             types.List   `tfsdk:"route"`

	MaxDelayEffective types.String `tfsdk:"max_delay_effective"`
	IngestExchange    types.String `tfsdk:"ingest_exchange"`
	OutExchange       types.String `tfsdk:"out_exchange"`
	UnroutableQueue   types.String `tfsdk:"unroutable_queue"`
	DefinitionsJSON   types.String `tfsdk:"definitions_json"`
	Mermaid           types.String `tfsdk:"mermaid"`
	BindingTable      types.String `tfsdk:"binding_table"`
	Bindings          types.List   `tfsdk:"bindings"`
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
	return schema.Schema{
		MarkdownDescription: "Plans a delay queue set from the same arguments as `rabbitmq_delay_queue_set`, with no " +
			"broker and no credentials, and renders the plan: RabbitMQ definitions to load with " +
			"`rabbitmqctl import_definitions` (for brokers Terraform does not reach), a Mermaid diagram and the " +
			"bindings. Invalid arguments fail the plan with the same messages as the resource's.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("The prefix of every object of the set: 1 to %d bytes of ASCII letters, "+
					"digits, `.`, `_`, `-` and `:`, not starting with `amq.`.", topology.MaxSetNameLength),
				Required: true,
			},
			"vhost": schema.StringAttribute{
				MarkdownDescription: "The vhost the definitions name. Defaults to `/`.",
				Optional:            true,
				Computed:            true,
			},
			"max_delay": schema.StringAttribute{
				MarkdownDescription: "The longest delay the set must hold, as a duration such as `\"36h\"`. Set exactly one of `max_delay` and `levels`.",
				Optional:            true,
			},
			"levels": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("N, the number of TTL queues, from %d to %d; computed from `max_delay` when that is set instead.",
					topology.MinLevels, topology.MaxLevels),
				Optional: true,
				Computed: true,
			},
			"resolution": schema.StringAttribute{
				MarkdownDescription: "The tick, a duration of whole milliseconds, at least `\"1ms\"`. Defaults to `\"1s\"`.",
				Optional:            true,
				Computed:            true,
			},
			"queue_type": schema.StringAttribute{
				MarkdownDescription: "The type of the set's queues: " + quoted(topology.QueueTypes) + ". Defaults to `quorum`.",
				Optional:            true,
				Computed:            true,
			},
			"dead_letter_strategy": schema.StringAttribute{
				MarkdownDescription: "How expired messages move between the queues: " + quoted(topology.DeadLetterStrategies) +
					". Defaults to `at-least-once` for quorum queues and `at-most-once` for classic queues.",
				Optional: true,
				Computed: true,
			},
			"max_delay_effective": computed("The longest delay the set holds: (2^N − 1) × `resolution`."),
			"ingest_exchange":     computed("The topic exchange publishers send delayed messages to."),
			"out_exchange":        computed("The topic exchange messages leave through when their delay is over."),
			"unroutable_queue":    computed("The queue that parks every message no binding matches."),
			"definitions_json": computed("Every exchange, queue and binding of the set as RabbitMQ definitions " +
				"(`exchanges`, `queues` and `bindings`, all durable), for `rabbitmqctl import_definitions` or the " +
				"management API's `POST /api/definitions`. The vhost must exist; the routes' destinations must too."),
			"mermaid":       computed("A Mermaid sequence diagram of the set: one arrow per binding, labelled with its routing key."),
			"binding_table": computed("The bindings as a plain text table: source, destination, type and routing key."),
			"bindings": schema.ListAttribute{
				MarkdownDescription: "Every binding of the set in the layout's order, one line each, as the `bindings` of `rabbitmq_delay_queue_set` list them.",
				Computed:            true,
				ElementType:         types.StringType,
			},
		},
		Blocks: map[string]schema.Block{
			"route": schema.ListNestedBlock{
				MarkdownDescription: "Where messages go when their delay is over, as in `rabbitmq_delay_queue_set`.",
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"destination": schema.StringAttribute{
							MarkdownDescription: "The name of the queue or exchange to deliver to.",
							Required:            true,
						},
						"destination_type": schema.StringAttribute{
							MarkdownDescription: "Whether `destination` is a " + quoted(topology.DestinationTypes) + ". Defaults to `queue`.",
							Optional:            true,
						},
						"key": schema.StringAttribute{
							MarkdownDescription: "The message key this route takes, without `#` or `*`; unset, every message.",
							Optional:            true,
						},
					},
				},
			},
		},
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
	// The resource's model carries the conversions to and from the planner.
	set := delayQueueSetModel{
		Name: m.Name, VHost: m.VHost, MaxDelay: m.MaxDelay, Levels: m.Levels, Resolution: m.Resolution,
		QueueType: m.QueueType, DeadLetterStrategy: m.DeadLetterStrategy, Routes: m.Routes,
	}
	spec, _, diags := specFromModel(set)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resolved, planned, diags := resolveAndPlan(spec, "Invalid Delay Topology")
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	definitions, err := topology.DefinitionsJSON(planned)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Render the Delay Topology", err.Error())
		return
	}
	setDerived(&set, resolved)
	resp.Diagnostics.Append(setObjects(ctx, &set, planned)...)
	if resp.Diagnostics.HasError() {
		return
	}

	// Configured values stay as written ("1000ms" is not rewritten "1s"); only unset ones are filled.
	m.VHost = types.StringValue(resolved.VHost)
	m.Levels = set.Levels
	m.DeadLetterStrategy = set.DeadLetterStrategy
	if m.Resolution.IsNull() {
		m.Resolution = types.StringValue(topology.FormatDuration(resolved.Resolution))
	}
	if m.QueueType.IsNull() {
		m.QueueType = types.StringValue(string(resolved.QueueType))
	}
	m.MaxDelayEffective = set.MaxDelayEffective
	m.IngestExchange = set.IngestExchange
	m.OutExchange = set.OutExchange
	m.UnroutableQueue = set.UnroutableQueue
	m.DefinitionsJSON = types.StringValue(string(definitions))
	m.Mermaid = types.StringValue(topology.Mermaid(planned))
	m.BindingTable = types.StringValue(topology.BindingTable(planned))
	m.Bindings = set.Bindings
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
