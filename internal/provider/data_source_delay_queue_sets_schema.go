package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The schema of rabbitmq_delay_queue_sets, and the types of its lists'
// elements, which come from it.

// pathVHost is the data source's vhost argument.
var pathVHost = path.Root("vhost")

func delayQueueSetsSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Finds every delay queue set that already exists in a vhost, or in every vhost the user " +
			"can read, so that one `for_each` and one `import` block can adopt them all. It changes nothing on the broker.",
		Attributes: map[string]schema.Attribute{
			"vhost": schema.StringAttribute{Optional: true,
				MarkdownDescription: "The vhost to look in; a vhost that does not exist or that the user may not read fails " +
					"the read. Unset by default: every vhost the user sees."},
			"sets":       schema.ListNestedAttribute{Computed: true, NestedObject: foundSetObject(), MarkdownDescription: setsDescription},
			"unreadable": schema.ListNestedAttribute{Computed: true, NestedObject: unreadableObject(), MarkdownDescription: unreadableDescription},
		},
	}
}

const setsDescription = "Every whole set found, by vhost, name and layout, with the arguments of a " +
	"`rabbitmq_delay_queue_set` that adopts it unchanged and its `import_id`, the key for `for_each`."

const unreadableDescription = "What is named as a set's objects but is not one whole set (a set in part, arguments " +
	"that describe no set), and each vhost that could not be read, with the reason."

func foundSetObject() schema.NestedAttributeObject {
	str := func(description string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: description}
	}
	number := func(description string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: description}
	}
	return schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"vhost":                str("The vhost the set lives in."),
		"name":                 str("The set's name; in a library's layout, the layout's name."),
		"layout":               str("The set's layout: " + quoted(topology.Layouts) + "."),
		"import_id":            str("The set's import ID, unique among the sets found: the key for `for_each`."),
		"levels":               number("The number of delay digits, N."),
		"radix":                number("The base the delay digits are written in: " + numbers(topology.Radixes) + "."),
		"resolution":           str("The tick, as a duration such as `1s` or `100ms`."),
		"queue_type":           str("The type of the set's TTL queues: " + quoted(topology.QueueTypes) + "."),
		"dead_letter_strategy": str("How expired messages move between the queues: " + quoted(topology.DeadLetterStrategies) + "."),
		"queue_leader_locator": str("The TTL queues' `x-queue-leader-locator`, " + quoted(topology.LeaderLocators) +
			", or null when they have none."),
		groupSizeAttribute: number("The TTL queues' `x-quorum-initial-group-size`, or null when they have none."),
		"routes": schema.ListNestedAttribute{Computed: true,
			MarkdownDescription: "The set's routes, for the resource's `route` blocks (a `dynamic` block over them).",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"destination":      str(routeAttributes["destination"].description),
				"destination_type": str("`exchange` for a route to an exchange; null for one to a queue, the resource's default."),
				"key":              str("The message key the route takes; null for a route that takes every message."),
			}}},
		"generation":           number("The set's current generation, which an import reads back; it is no argument."),
		"draining_generations": number("How many older generations of the set still drain; the adopting resource deletes each once empty."),
	}}
}

func unreadableObject() schema.NestedAttributeObject {
	str := func(description string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: description}
	}
	return schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"vhost":     str("The vhost the objects are in, or the vhost that could not be read."),
		"name":      str("The name of the set the objects are named for; null for a vhost that could not be read."),
		"layout":    str("The layout whose names the objects have; null for a vhost that could not be read."),
		"import_id": str("The ID that imports the objects as a set to complete or repair; null for a vhost."),
		"reason":    str("Why they are no whole set, naming every object and binding involved."),
	}}
}

// foundSetObjectType and unreadableObjectType are the types of an element
// of sets and of unreadable, from the schema.
var (
	foundSetObjectType   = objectTypeOf(foundSetObject())
	unreadableObjectType = objectTypeOf(unreadableObject())
)

func objectTypeOf(o schema.NestedAttributeObject) types.ObjectType {
	attributeTypes := make(map[string]attr.Type, len(o.Attributes))
	for name, a := range o.Attributes {
		attributeTypes[name] = a.GetType()
	}
	return types.ObjectType{AttrTypes: attributeTypes}
}
