package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
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
