package provider

import (
	"fmt"
	"maps"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func delayQueueSetSchema() schema.Schema {
	attributes, routeBlock := resourceSharedSchema()
	attributes["id"] = schema.StringAttribute{
		MarkdownDescription: "The URL-escaped vhost (`@` too, as `%40`) and the name, joined by `/` (for example " +
			"`%2F/delay`), whichever form of import ID the set was imported with. Import takes this form, optionally " +
			"followed by `/<layout>`, or `<name>@<vhost>` with the vhost as it is (for example `delay@/`, `delay@team/a`), " +
			"the community RabbitMQ provider's form.",
		Computed:      true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attributes["force_destroy"] = schema.BoolAttribute{
		MarkdownDescription: "Delete the set's queues even when they hold messages, losing those messages. " +
			"Defaults to `false`: destroy and level removal refuse, naming each non-empty queue.",
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
	}
	attributes["generation"] = schema.Int64Attribute{
		MarkdownDescription: "The generation of the set's TTL queues and done exchanges: 0 as first declared, one more for each " +
			"change of " + generationAttributeList(generationAttributes) + ". Generation g > 0 names its objects like " +
			"generation 0 followed by `.g<g>` (`<name>.level.03.g2`).",
		Computed: true,
	}
	attributes["exchange_generation"] = schema.Int64Attribute{
		MarkdownDescription: "The generation whose ingest and out exchanges the set uses: the first generation of its key " +
			"format (`levels`, `radix`, `resolution`). A change of key format brings new exchanges (`<name>.ingest.g<g>`).",
		Computed: true,
	}
	attributes["migration_wait"] = schema.StringAttribute{
		MarkdownDescription: fmt.Sprintf("How long an apply that starts a new generation, or finds one draining, waits for the older "+
			"generations to empty before it leaves them to a later apply: a duration from `0s` (do not wait) to `%s`. Defaults to `%s`.",
			maxMigrationWait, defaultMigrationWait),
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(defaultMigrationWait.String()),
	}
	attributes["draining"] = schema.ListNestedAttribute{
		MarkdownDescription: "The older generations still on the broker because their queues held messages at the last refresh " +
			"or apply, oldest first, each with the settings it was declared with and how many messages each of its queues holds. " +
			"Their messages go on through their own queues and leave through the out exchange of their key format, on time; the " +
			"first apply that finds a generation empty deletes it. Destroy refuses while any of them holds messages, as for the current queues.",
		Computed:     true,
		NestedObject: schema.NestedAttributeObject{Attributes: drainingAttributes()},
	}
	attributes["exchanges"] = schema.StringAttribute{
		MarkdownDescription: "Every exchange of the set, one line each, as the plan declares it or as the broker has it after a " +
			"refresh: its name, type and arguments as RabbitMQ names them (`<name>.ingest: topic, alternate-exchange " +
			"\"<name>.unroutable\"`). " + linesRatherThanLists,
		Computed: true,
	}
	attributes["queues"] = schema.StringAttribute{
		MarkdownDescription: "Every queue of the set, one line each, with its arguments as RabbitMQ names them, `x-message-ttl` " +
			"in milliseconds (`<name>.level.03: x-queue-type \"quorum\", x-message-ttl 8000, x-dead-letter-exchange " +
			"\"<name>.level.03.done\", …`); an argument the layout does not set shows as its JSON. " + linesRatherThanLists,
		Computed: true,
	}
	maps.Copy(attributes, placementAttributes())
	return schema.Schema{
		Version: delayQueueSetSchemaVersion,
		MarkdownDescription: "A complete arbitrary-delay topology on one vhost: an ingest exchange, one TTL queue per " +
			"power of two of the resolution (in radix r, r − 1 per power of r), the exchanges and bindings that chain them, an out exchange with the " +
			"routes to your queues, and an unroutable queue that parks every message no binding matches. " +
			"`terraform plan` shows every exchange, queue and binding before anything is declared.",
		Attributes: attributes,
		Blocks:     map[string]schema.Block{"route": routeBlock},
	}
}

// linesRatherThanLists says why the set's objects are lines of one text.
const linesRatherThanLists = "Lines of one text rather than a list: a plan reads and compares one value per set " +
	"rather than one per object (a plan without refresh of 100 sets of 17 levels, 21,100 objects, took 0.88 s, the median of 3 runs, on " +
	"RabbitMQ 3.10.8: [benchmarks/control-plane.md](" + benchmarksURL + "control-plane.md)), and `terraform plan` " +
	"shows a changed text line by line, marking each line added or removed. `split(\"\\n\", …)` makes it a list."

// The bounds of migration_wait.
const (
	defaultMigrationWait = 10 * time.Second
	maxMigrationWait     = time.Hour
)

// drainingAttributes are the attributes of one draining generation.
func drainingAttributes() map[string]schema.Attribute {
	attributes := map[string]schema.Attribute{
		"messages": schema.Int64Attribute{Computed: true, MarkdownDescription: "The messages its queues hold, at least."},
		"queues": schema.MapAttribute{Computed: true, ElementType: types.Int64Type,
			MarkdownDescription: "Each of its TTL queues and the messages it holds, at least."},
	}
	for _, name := range []string{"generation", "exchange_generation", "levels", "radix", groupSizeAttribute} {
		attributes[name] = schema.Int64Attribute{Computed: true, MarkdownDescription: "Its `" + name + "`."}
	}
	for _, name := range []string{"resolution", "queue_type", "dead_letter_strategy", "queue_leader_locator"} {
		attributes[name] = schema.StringAttribute{Computed: true, MarkdownDescription: "Its `" + name + "`."}
	}
	return attributes
}

// drainingObjectType is the type of one draining generation.
var drainingObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"generation": types.Int64Type, "exchange_generation": types.Int64Type, "levels": types.Int64Type, "radix": types.Int64Type,
	"resolution": types.StringType, "queue_type": types.StringType, "dead_letter_strategy": types.StringType,
	"queue_leader_locator": types.StringType, groupSizeAttribute: types.Int64Type, "messages": types.Int64Type, "queues": types.MapType{ElemType: types.Int64Type},
}}
