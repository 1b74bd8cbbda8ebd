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
			"can read, for adopting them all with one `for_each` and one `import` block (Terraform 1.7 and later; see " +
			"the guide \"Adopting every set of a broker\"). It finds sets of this provider's own layout at every radix and " +
			"generation (a set with draining generations is one set), chains built by hand in that layout, and the " +
			"NServiceBus and Celery layouts. It changes nothing on the broker: it lists each vhost's exchanges, " +
			"queues and bindings once each, however many sets it holds, and infers each set as an import does. A set " +
			"is listed in `sets` only when its objects are exactly the set its arguments describe, so that adopting it " +
			"changes nothing; whatever is named as a set's objects but is not one whole set is listed in `unreadable`, " +
			"with the reason.",
		Attributes: map[string]schema.Attribute{
			"vhost": schema.StringAttribute{Optional: true,
				MarkdownDescription: "The vhost to look in. A vhost that does not exist, or that the user may not read, fails " +
					"the read, naming it. Unset, every vhost the user sees is looked in: an administrator or a " +
					"`monitoring` user sees every vhost, any other user those it has permissions in. A vhost the " +
					"user sees but may not read is listed in `unreadable`, and the others are still looked in."},
			"sets":       schema.ListNestedAttribute{Computed: true, NestedObject: foundSetObject(), MarkdownDescription: setsDescription},
			"unreadable": schema.ListNestedAttribute{Computed: true, NestedObject: unreadableObject(), MarkdownDescription: unreadableDescription},
		},
	}
}

const setsDescription = "Every whole delay queue set found, by vhost, then name, then layout. Each element holds " +
	"the arguments of a `rabbitmq_delay_queue_set` that adopts the set as it is, written as an import writes them " +
	"into the state, and the set's `import_id`: key a `for_each` by `import_id`, and an `import` block with the same " +
	"`for_each` adopts them all in one apply, after which the plan shows no change."

const unreadableDescription = "What is named as a set's objects but is not one whole set, and each vhost that could " +
	"not be read, with the reason: a set that exists only in part (each missing object and binding named), objects " +
	"named as a set's whose arguments describe no set or another one, objects that are not the set's bound from it. " +
	"Only names count: a group of objects counts when a TTL queue or a done exchange is among them (in a library's " +
	"layout, a level exchange or queue); names such as `billing.out` or `orders.unroutable` alone make no set."

func foundSetObject() schema.NestedAttributeObject {
	str := func(description string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: description}
	}
	number := func(description string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: description}
	}
	return schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		"vhost":  str("The vhost the set lives in."),
		"name":   str("The set's name: the prefix of its objects' names, or in a library's layout the layout's name (a vhost holds one set of each library's layout)."),
		"layout": str("The set's layout: " + quoted(topology.Layouts) + "."),
		"import_id": str("The set's import ID: `<url-escaped vhost>/<name>`, followed by `/<layout>` in a library's layout. " +
			"Unique among the sets found: the key for `for_each`."),
		"levels":               number("The number of delay digits, N."),
		"radix":                number("The base the delay digits are written in: " + numbers(topology.Radixes) + "."),
		"resolution":           str("The tick, as a duration such as `1s` or `100ms`."),
		"queue_type":           str("The type of the set's TTL queues: " + quoted(topology.QueueTypes) + "."),
		"dead_letter_strategy": str("How expired messages move between the queues: " + quoted(topology.DeadLetterStrategies) + "."),
		"queue_leader_locator": str("The TTL queues' `x-queue-leader-locator`, " + quoted(topology.LeaderLocators) +
			", or null when they have none (a set made by hand or before the argument existed): passed on as it is, it keeps them so."),
		groupSizeAttribute: number("The TTL queues' `x-quorum-initial-group-size`, or null when they have none (the broker's own " +
			"size applied): passed on as it is, it keeps them so."),
		"routes": schema.ListNestedAttribute{Computed: true,
			MarkdownDescription: "The set's routes, for the resource's `route` blocks (a `dynamic` block over them).",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"destination":      str(routeAttributes["destination"].description),
				"destination_type": str("`exchange` for a route to an exchange; null for one to a queue, the resource's default."),
				"key":              str("The message key the route takes; null for a route that takes every message."),
			}}},
		"generation": number("The set's current generation: 0 unless a change declared new TTL queues beside the old ones. " +
			"The resource reads it back on import; it is no argument."),
		"draining_generations": number("How many older generations of the set still drain. They belong to the set: the " +
			"adopting resource keeps them and deletes each once it is empty, as it does for any set it manages."),
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
		"import_id": str("The ID that imports the objects on their own, as a set to complete or repair, after review; null for a vhost."),
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
