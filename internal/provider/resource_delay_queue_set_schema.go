package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func delayQueueSetSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A complete arbitrary-delay topology on one vhost: an ingest exchange, one TTL queue per " +
			"power of two of the resolution, the exchanges and bindings that chain them, an out exchange with the " +
			"routes to your queues, and an unroutable queue that parks every message no binding matches. " +
			"`terraform plan` shows every exchange, queue and binding before anything is declared.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The URL-escaped vhost and the name, joined by `/` (for example `%2F/delay`); the import ID.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("The prefix of every object of the set (`<name>.ingest`, `<name>.level.00`, …): "+
					"1 to %d bytes of ASCII letters, digits, `.`, `_`, `-` and `:`, not starting with `amq.`. "+
					"Changing it replaces the set.", topology.MaxSetNameLength),
				Required:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"vhost": schema.StringAttribute{
				MarkdownDescription: "The vhost the set lives in; it must exist. Defaults to `/`. Changing it replaces the set.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString("/"),
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"max_delay": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("The longest delay the set must hold, as a duration such as `\"36h\"`; "+
					"`levels` becomes the smallest N with (2^N − 1) × `resolution` ≥ `max_delay` (N ≤ %d). "+
					"Set exactly one of `max_delay` and `levels`.", topology.MaxLevels),
				Optional: true,
			},
			"levels": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("N, the number of TTL queues, from %d to %d: delays go up to "+
					"(2^N − 1) × `resolution`, and publishers write the delay as exactly N binary digits. "+
					"Computed from `max_delay` when that is set instead. Adding levels happens in place; removing "+
					"them deletes their queues, which must be empty.", topology.MinLevels, topology.MaxLevels),
				Optional: true,
				Computed: true,
			},
			"resolution": schema.StringAttribute{
				MarkdownDescription: "The tick: every delay is rounded up to a whole number of ticks, and level k's " +
					"queue holds messages for 2^k ticks. A duration of whole milliseconds, at least `\"1ms\"`; " +
					"defaults to `\"1s\"`. Changing it replaces the set.",
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(topology.DefaultResolution.String()),
			},
			"queue_type": schema.StringAttribute{
				MarkdownDescription: "The type of the set's queues: " + quoted(topology.QueueTypes) + ". Defaults to " +
					"`quorum`: replicated, and in the data-path benchmark (`make bench-delays`, RabbitMQ 3.10, 8 levels) " +
					"more punctual than classic queues under load (p99 lateness 29–43 ms against 399 ms at 500 msg/s) " +
					"with a higher top rate. Choose `classic` only where one node without replication will do. " +
					"Changing it replaces the set.",
				Optional:      true,
				Computed:      true,
				Default:       stringdefault.StaticString(string(topology.QueueTypeQuorum)),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"dead_letter_strategy": schema.StringAttribute{
				MarkdownDescription: "How expired messages move between the queues: " +
					quoted(topology.DeadLetterStrategies) + ". Defaults to `at-least-once` for quorum queues: a level " +
					"keeps an expired message until the next queue has confirmed it, so none is lost between levels, " +
					"even when a node fails (in the node-loss test at-most-once lost 456 of 700 messages, at-least-once " +
					"none); a confirm lost in a failure can deliver a message twice, so consumers should be idempotent. " +
					"It costs 10–20 % more broker CPU than `at-most-once` and reached the same top rate; bound its wait " +
					"after an outage with the broker setting of the operating guide. Classic queues support only " +
					"`at-most-once`, their default. Changing it replaces the set.",
				Optional: true,
				Computed: true,
			},
			"force_destroy": schema.BoolAttribute{
				MarkdownDescription: "Delete the set's queues even when they hold messages, losing those messages. " +
					"Defaults to `false`: destroy and level removal refuse, naming each non-empty queue.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
			"max_delay_effective": schema.StringAttribute{
				MarkdownDescription: "The longest delay the set holds: (2^N − 1) × `resolution`.",
				Computed:            true,
			},
			"ingest_exchange": schema.StringAttribute{
				MarkdownDescription: "The topic exchange to publish delayed messages to, with routing key `<key>.<N binary digits>`.",
				Computed:            true,
			},
			"out_exchange": schema.StringAttribute{
				MarkdownDescription: "The topic exchange messages leave through when their delay is over.",
				Computed:            true,
			},
			"unroutable_queue": schema.StringAttribute{
				MarkdownDescription: "The queue that parks every message no binding of the set matches (a malformed key, or no matching route).",
				Computed:            true,
			},
			"exchanges": schema.ListNestedAttribute{
				MarkdownDescription: "Every exchange of the set, as the plan declares it or as the broker has it after a refresh.",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: computedStrings(exchangeAttributes, true)},
			},
			"queues": schema.ListNestedAttribute{
				MarkdownDescription: "Every queue of the set with its arguments (`message_ttl` in milliseconds).",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: queueSchemaAttributes()},
			},
			"bindings": schema.ListAttribute{
				MarkdownDescription: "Every binding of the set, one line each (`<source> -> <queue|exchange> <destination>, key \"<routing key>\"`), " +
					"in the layout's order: the delay bindings from the ingest and done exchanges, then the routes. " +
					"Lines rather than objects: a set of 32 levels has 562 bindings, and lines keep its plans fast.",
				Computed:    true,
				ElementType: types.StringType,
			},
		},
		Blocks: map[string]schema.Block{
			"route": schema.ListNestedBlock{
				MarkdownDescription: "Where messages go when their delay is over: every message whose key matches is " +
					"delivered to the destination. Adding and removing routes happens in place.",
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"destination": schema.StringAttribute{
							MarkdownDescription: "The name of the queue or exchange to deliver to, in the set's vhost.",
							Required:            true,
						},
						"destination_type": schema.StringAttribute{
							MarkdownDescription: "Whether `destination` is a " + quoted(topology.DestinationTypes) + ". Defaults to `queue`.",
							Optional:            true,
						},
						"key": schema.StringAttribute{
							MarkdownDescription: "The message key this route takes (the part of the routing key before the delay digits), " +
								"without `#` or `*`. Unset or empty, the route takes every message.",
							Optional: true,
						},
					},
				},
			},
		},
	}
}

// The computed object lists: attribute names, shared by the schema and the values.
var (
	exchangeAttributes = []string{"name", "type", "alternate_exchange"}
	queueAttributes    = []string{"name", "queue_type", "dead_letter_exchange", "dead_letter_strategy", "overflow"}
)

// computedStrings is the schema of a computed object of string attributes,
// with the map of the arguments the layout does not set when withOther.
func computedStrings(names []string, withOther bool) map[string]schema.Attribute {
	attributes := make(map[string]schema.Attribute, len(names)+1)
	for _, name := range names {
		attributes[name] = schema.StringAttribute{Computed: true, MarkdownDescription: "`" + name + "`; null when absent."}
	}
	if withOther {
		attributes["other_arguments"] = schema.MapAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Arguments the layout does not set, as JSON text; only a refresh finds them, and apply replaces the object without them.",
		}
	}
	return attributes
}

func queueSchemaAttributes() map[string]schema.Attribute {
	attributes := computedStrings(queueAttributes, true)
	attributes["message_ttl"] = schema.Int64Attribute{Computed: true, MarkdownDescription: "`x-message-ttl` in milliseconds; null when absent."}
	return attributes
}

func quoted[T ~string](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = "`" + string(v) + "`"
	}
	return strings.Join(parts, ", ")
}
