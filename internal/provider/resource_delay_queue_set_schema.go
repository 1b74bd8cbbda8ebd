package provider

import (
	"fmt"
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
		MarkdownDescription: "The URL-escaped vhost and the name, joined by `/` (for example `%2F/delay`); the import ID.",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
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
			"change of `queue_type`, `dead_letter_strategy`, `resolution` or `radix`. Generation g > 0 names its objects like " +
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
	attributes["exchanges"] = schema.ListNestedAttribute{
		MarkdownDescription: "Every exchange of the set, as the plan declares it or as the broker has it after a refresh.",
		Computed:            true,
		NestedObject:        schema.NestedAttributeObject{Attributes: computedStrings(exchangeAttributes, true)},
	}
	attributes["queues"] = schema.ListNestedAttribute{
		MarkdownDescription: "Every queue of the set with its arguments (`message_ttl` in milliseconds).",
		Computed:            true,
		NestedObject:        schema.NestedAttributeObject{Attributes: queueSchemaAttributes()},
	}
	return schema.Schema{
		MarkdownDescription: "A complete arbitrary-delay topology on one vhost: an ingest exchange, one TTL queue per " +
			"power of two of the resolution (in radix r, r − 1 per power of r), the exchanges and bindings that chain them, an out exchange with the " +
			"routes to your queues, and an unroutable queue that parks every message no binding matches. " +
			"`terraform plan` shows every exchange, queue and binding before anything is declared.",
		Attributes: attributes,
		Blocks:     map[string]schema.Block{"route": routeBlock},
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

var (
	exchangeObjectType = objectType(exchangeAttributes, true, false)
	queueObjectType    = objectType(queueAttributes, true, true)
)

func objectType(names []string, otherArguments, ttl bool) types.ObjectType {
	attributeTypes := make(map[string]attr.Type, len(names)+2)
	for _, name := range names {
		attributeTypes[name] = types.StringType
	}
	if otherArguments {
		attributeTypes["other_arguments"] = types.MapType{ElemType: types.StringType}
	}
	if ttl {
		attributeTypes["message_ttl"] = types.Int64Type
	}
	return types.ObjectType{AttrTypes: attributeTypes}
}

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
	for _, name := range []string{"generation", "exchange_generation", "levels", "radix"} {
		attributes[name] = schema.Int64Attribute{Computed: true, MarkdownDescription: "Its `" + name + "`."}
	}
	for _, name := range []string{"resolution", "queue_type", "dead_letter_strategy"} {
		attributes[name] = schema.StringAttribute{Computed: true, MarkdownDescription: "Its `" + name + "`."}
	}
	return attributes
}

// drainingObjectType is the type of one draining generation.
var drainingObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"generation": types.Int64Type, "exchange_generation": types.Int64Type, "levels": types.Int64Type, "radix": types.Int64Type,
	"resolution": types.StringType, "queue_type": types.StringType, "dead_letter_strategy": types.StringType,
	"messages": types.Int64Type, "queues": types.MapType{ElemType: types.Int64Type},
}}
