package provider

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func delayQueueSetSchema() schema.Schema {
	attributes, routeBlock := resourceSharedSchema()
	attributes["id"] = schema.StringAttribute{
		MarkdownDescription: "The set's ID: its URL-escaped vhost (`@` as `%40`) and its name, joined by `/` (`%2F/delay`). " +
			"Import also takes `<name>@<vhost>` (see Import).",
		Computed:      true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attributes["force_destroy"] = schema.BoolAttribute{
		MarkdownDescription: "Delete the set's queues even when they hold messages, losing them. " +
			"Defaults to `false`: destroy and level removal refuse while a queue holds messages.",
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
	}
	attributes["generation"] = schema.Int64Attribute{
		MarkdownDescription: "The generation of the set's TTL queues: 0 when first declared, one more for each new generation, " +
			"whose objects' names end in `.g<g>`.",
		Computed: true,
	}
	attributes["exchange_generation"] = schema.Int64Attribute{
		MarkdownDescription: "The generation whose ingest and out exchanges the set uses: the first one of its key format.",
		Computed:            true,
	}
	attributes["migration_wait"] = schema.StringAttribute{
		MarkdownDescription: fmt.Sprintf("How long an apply waits for older generations to empty, from `0s` to `%s`. Defaults to `%s`.",
			maxMigrationWait, defaultMigrationWait),
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(defaultMigrationWait.String()),
	}
	attributes["draining"] = schema.ListNestedAttribute{
		MarkdownDescription: "The older generations whose queues still held messages, oldest first; an apply deletes each once empty.",
		Computed:            true,
		NestedObject:        schema.NestedAttributeObject{Attributes: drainingAttributes()},
	}
	attributes["exchanges"] = schema.StringAttribute{
		MarkdownDescription: "Every exchange of the set, one line each, with its type and arguments. " + linesRatherThanLists,
		Computed:            true,
	}
	attributes["queues"] = schema.StringAttribute{
		MarkdownDescription: "Every queue of the set, one line each, with its arguments (`x-message-ttl` in milliseconds). " + linesRatherThanLists,
		Computed:            true,
	}
	maps.Copy(attributes, placementAttributes())
	return schema.Schema{
		Version: delayQueueSetSchemaVersion,
		MarkdownDescription: "The exchanges, TTL queues and bindings that delay each message by the time its routing key names, " +
			"on one vhost; `terraform plan` shows every one of them.",
		Attributes: attributes,
		Blocks:     map[string]schema.Block{"route": routeBlock},
	}
}

// linesRatherThanLists says why the set's objects are lines of one text.
const linesRatherThanLists = "`split(\"\\n\", …)` makes it a list."

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

// The attributes rabbitmq_delay_queue_set and rabbitmq_delay_topology share:
// the spec and what the planner derives from it. Both schemas are built from
// these tables (they use different schema packages), and both models embed
// delaySpecModel, which they map.

// defaultVHost is the vhost of a set that names none.
const defaultVHost = "/"

type attributeKind int

const (
	stringAttribute attributeKind = iota
	int64Attribute
)

// replacement says what a change of an attribute does to the resource's set.
type replacement int

const (
	changesInPlace replacement = iota
	// replacedByModifier: a RequiresReplace plan modifier says so.
	replacedByModifier
)

// newGeneration is what a change of the queues' kind or of the key format
// does to a resource's set: in place, through a new generation.
const newGeneration = "Changing it declares a new generation of queues while the old one drains (`generation`)."

// generationAttributes are the arguments a change of which declares a new
// generation of the set's TTL queues (newGeneration): those of the queues'
// declaration and of the key format that topology.Generation compares, all
// but levels, which change in place. Every list of them, in the schema's
// descriptions and in the docs (README.md, templates/), is written from
// this one, by generationAttributeList; TestGenerationAttributes holds the
// schema and the docs to it.
var generationAttributes = []string{
	"queue_type", "dead_letter_strategy", "resolution", "radix", "queue_leader_locator", groupSizeAttribute,
}

// generationAttributeList writes names as the docs list them:
// "`queue_type`, `dead_letter_strategy`, … or `quorum_initial_group_size`".
func generationAttributeList(names []string) string {
	list := quoted(names)
	if i := strings.LastIndex(list, ", "); i >= 0 {
		list = list[:i] + " or " + list[i+len(", "):]
	}
	return list
}

// newKeyFormat is what a change of the key format adds to newGeneration.
const newKeyFormat = " Publishers then use the new `ingest_exchange` and key format."

// sharedAttribute is one attribute both schemas declare alike.
type sharedAttribute struct {
	kind        attributeKind
	description string
	// onResource is what the resource's description adds: what a change does
	// to the set on the broker.
	onResource                   string
	replaces                     replacement
	required, optional, computed bool
	// resourceDefault (of a string) and int64Default (of an int64, 0 for
	// none) are the resource's schema default; a data source cannot have one
	// and fills the same value from the resolved spec.
	resourceDefault string
	int64Default    int64
	// stringModifiers are the resource's plan modifiers of a string
	// attribute, in place of RequiresReplace.
	stringModifiers []planmodifier.String
}

// sharedAttributes are the spec's attributes and the outputs both derive.
var sharedAttributes = map[string]sharedAttribute{
	"name": {required: true, replaces: replacedByModifier,
		description: fmt.Sprintf("The prefix of every object of the set (`<name>.ingest`, …): 1 to %d bytes of ASCII letters, digits, `.`, `_`, `-` and `:`, not starting with `amq.`.", topology.MaxSetNameLength)},
	"layout": {optional: true, computed: true, resourceDefault: string(topology.LayoutDefault), replaces: replacedByModifier,
		stringModifiers: []planmodifier.String{requiresReplaceOfLayout()},
		description: "How the set's objects and keys are laid out: " + quoted(topology.Layouts) + "; defaults to `" +
			string(topology.LayoutDefault) + "`. `" + string(topology.LayoutNServiceBus) + "` and `" + string(topology.LayoutCelery) +
			"` declare that library's own delay infrastructure."},
	"vhost": {optional: true, computed: true, resourceDefault: defaultVHost, replaces: replacedByModifier,
		description: "The vhost the set lives in. Defaults to `" + defaultVHost + "`.",
		onResource:  "It must exist."},
	"max_delay": {optional: true,
		description: "The longest delay the set must hold, as a duration such as `\"36h\"`, from which `levels` is computed. " +
			"Set exactly one of `max_delay` and `levels`."},
	"levels": {kind: int64Attribute, optional: true, computed: true,
		description: fmt.Sprintf("The number of delay digits N, from %d to %d: the set holds delays up to "+
			"(`radix`^N − 1) × `resolution`. Computed from `max_delay` when that is set instead.", topology.MinLevels, topology.MaxLevels),
		onResource: "Removing levels deletes their queues, which must be empty."},
	"resolution": {optional: true, computed: true, resourceDefault: topology.DefaultResolution.String(), onResource: newGeneration + newKeyFormat,
		description: fmt.Sprintf("The tick, whole milliseconds of at least `%q`, to which every delay is rounded up. Defaults to `%q`.", topology.MinResolution.String(), topology.DefaultResolution.String())},
	"radix": {kind: int64Attribute, optional: true, computed: true, int64Default: topology.DefaultRadix, onResource: newGeneration + newKeyFormat,
		description: fmt.Sprintf("The base of the delay digits: %s; defaults to `%d`. A larger radix makes fewer hops for more queues.", numbers(topology.Radixes), topology.DefaultRadix)},
	"queue_type": {optional: true, computed: true, resourceDefault: string(topology.QueueTypeQuorum), onResource: newGeneration,
		description: "The type of the set's queues: " + quoted(topology.QueueTypes) + ". Defaults to `" +
			string(topology.QueueTypeQuorum) + "`, which is replicated and can dead-letter at least once."},
	"dead_letter_strategy": {optional: true, computed: true, onResource: newGeneration,
		description: "How expired messages move between the queues: " + quoted(topology.DeadLetterStrategies) +
			". Defaults to `at-least-once` for quorum queues and to `at-most-once`, their only one, for classic queues."},
	"queue_leader_locator": {optional: true, computed: true,
		description: "Where the broker places each TTL queue on a cluster (`x-queue-leader-locator`): " +
			quoted(topology.LeaderLocators) + ". Defaults to `balanced` for quorum queues and to none for classic queues.",
		onResource: newGeneration},
	groupSizeAttribute: groupSizeShared,

	"max_delay_effective": {computed: true,
		description: "The longest delay the set holds: (`radix`^N − 1) × `resolution`."},
	"ingest_exchange": {computed: true,
		description: "The exchange to publish delayed messages to, with routing key `<key>.<N digits>` (in a library's " +
			"`layout`, `<28 bits>.<key>`)."},
	"out_exchange": {computed: true,
		description: "The topic exchange messages leave through when their delay is over: in a library's `layout`, " +
			"its delivery exchange."},
	"unroutable_queue": {computed: true,
		description: "The queue that parks every message no binding matches; null in a library's `layout`, which has none."},
	"bindings": {computed: true,
		description: "Every binding of the set, one line each: the delay bindings, then the routes. " + linesRatherThanLists},
}

// requiresReplaceOfLayout replaces the set when its layout changes, and
// not when a state written before layouts existed, which has none, meets
// the default layout: both are the default layout.
func requiresReplaceOfLayout() planmodifier.String {
	const description = "Changing the layout replaces the set: the layouts' objects have other names."
	return stringplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		resp.RequiresReplace = layoutOf(req.StateValue) != layoutOf(req.PlanValue)
	}, description, description)
}

// layoutOf is a layout attribute's value as the planner's layout, the
// default one when null.
func layoutOf(v types.String) topology.Layout {
	return topology.Layout(v.ValueString()).OrDefault()
}

// The route block: its description and its attributes.
var (
	routeDescription = sharedAttribute{
		description: "Where messages go when their delay is over, by their key.",
		onResource:  "Adding and removing routes happens in place.",
	}
	routeAttributes = map[string]sharedAttribute{
		"destination": {required: true,
			description: "The name of the queue or exchange to deliver to, in the set's vhost."},
		"destination_type": {optional: true,
			description: "Whether `destination` is a queue or an exchange: " + quoted(topology.DestinationTypes) + ". Defaults to `" +
				string(topology.DestinationQueue) + "`."},
		"key": {optional: true,
			description: "The message key this route takes, before the delay digits; unset, every message. In a library's " +
				"`layout`, the key after the delay bits."},
	}
)

// routeObjectType is the type of one route block.
var routeObjectType = func() types.ObjectType {
	attributeTypes := make(map[string]attr.Type, len(routeAttributes))
	for name := range routeAttributes {
		attributeTypes[name] = types.StringType
	}
	return types.ObjectType{AttrTypes: attributeTypes}
}()

func (a sharedAttribute) resourceDescription() string {
	sentences := []string{a.description, a.onResource}
	if a.replaces != changesInPlace {
		sentences = append(sentences, "Changing it replaces the set.")
	}
	return strings.Join(slices.DeleteFunc(sentences, func(s string) bool { return s == "" }), " ")
}

func (a sharedAttribute) resourceAttribute() schema.Attribute {
	description := a.resourceDescription()
	if a.kind == int64Attribute {
		attribute := schema.Int64Attribute{MarkdownDescription: description, Required: a.required, Optional: a.optional, Computed: a.computed}
		if a.int64Default != 0 {
			attribute.Default = int64default.StaticInt64(a.int64Default)
		}
		return attribute
	}
	attribute := schema.StringAttribute{MarkdownDescription: description, Required: a.required, Optional: a.optional, Computed: a.computed}
	if a.resourceDefault != "" {
		attribute.Default = stringdefault.StaticString(a.resourceDefault)
	}
	switch {
	case a.stringModifiers != nil:
		attribute.PlanModifiers = a.stringModifiers
	case a.replaces == replacedByModifier:
		attribute.PlanModifiers = []planmodifier.String{stringplanmodifier.RequiresReplace()}
	}
	return attribute
}

func (a sharedAttribute) dataSourceAttribute() dsschema.Attribute {
	if a.kind == int64Attribute {
		return dsschema.Int64Attribute{MarkdownDescription: a.description, Required: a.required, Optional: a.optional, Computed: a.computed}
	}
	return dsschema.StringAttribute{MarkdownDescription: a.description, Required: a.required, Optional: a.optional, Computed: a.computed}
}

// resourceSharedSchema is the resource's share: its attributes and route block.
func resourceSharedSchema() (map[string]schema.Attribute, schema.Block) {
	return built(sharedAttributes, sharedAttribute.resourceAttribute), schema.ListNestedBlock{
		MarkdownDescription: routeDescription.resourceDescription(),
		NestedObject:        schema.NestedBlockObject{Attributes: built(routeAttributes, sharedAttribute.resourceAttribute)},
	}
}

// dataSourceSharedSchema is the data source's share: its attributes and route block.
func dataSourceSharedSchema() (map[string]dsschema.Attribute, dsschema.Block) {
	return built(sharedAttributes, sharedAttribute.dataSourceAttribute), dsschema.ListNestedBlock{
		MarkdownDescription: routeDescription.description,
		NestedObject:        dsschema.NestedBlockObject{Attributes: built(routeAttributes, sharedAttribute.dataSourceAttribute)},
	}
}

// built is a table's attributes in one schema package.
func built[A any](table map[string]sharedAttribute, build func(sharedAttribute) A) map[string]A {
	attributes := make(map[string]A, len(table))
	for name, a := range table {
		attributes[name] = build(a)
	}
	return attributes
}

// numbers spells integers as a list of code: "`2`, `4`, `8`, `16`".
func numbers(values []int) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = "`" + strconv.Itoa(v) + "`"
	}
	return strings.Join(parts, ", ")
}

func quoted[T ~string](values []T) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = "`" + string(v) + "`"
	}
	return strings.Join(parts, ", ")
}

// groupSizeAttribute is the attribute of a set's quorum initial group
// size (topology.Spec.QuorumInitialGroupSize), and of each draining
// generation's.
const groupSizeAttribute = "quorum_initial_group_size"

// groupSizeShared is quorum_initial_group_size in the table both schemas
// are built from.
var groupSizeShared = sharedAttribute{kind: int64Attribute, optional: true, onResource: newGeneration,
	description: "How many nodes hold a replica of each quorum TTL queue (`x-quorum-initial-group-size`). " +
		"Unset by default: the broker's own size applies."}

// groupSizeOf reads quorum_initial_group_size: 0 when unset or unknown
// (specFromModel reports unknown values). A configured 0, which the
// planner would read as unset, is refused in the planner's words, and so is
// a size beyond what every platform's int holds (the broker's argument is a
// 64-bit integer; no cluster has that many nodes).
func groupSizeOf(v types.Int64, diags *diag.Diagnostics) int {
	if v.IsNull() || v.IsUnknown() {
		return 0
	}
	size := v.ValueInt64()
	switch {
	case size == 0:
		diags.AddAttributeError(path.Root(groupSizeAttribute), "Invalid Delay Queue Set", topology.ExplicitZero(groupSizeAttribute).Error())
	case size > math.MaxInt32:
		diags.AddAttributeError(path.Root(groupSizeAttribute), "Invalid Delay Queue Set",
			fmt.Sprintf("%s: must be at most %d, got %d", groupSizeAttribute, math.MaxInt32, size))
		return 0
	}
	return int(max(size, math.MinInt32)) // the planner refuses a negative size
}

// optionalInt64 is n, or null for 0 (unset).
func optionalInt64(n int) types.Int64 {
	if n == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(int64(n))
}

// Where the set's queues run: read by every refresh with the queues
// themselves (no request of its own) and by every apply after its changes
// (a read of each queue by name); shown, never planned: the broker places a
// queue when it is declared, so a plan that changes the set knows it only
// after.
const placementWhen = "As the last refresh or apply read it."

func placementAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"placement": schema.StringAttribute{
			MarkdownDescription: "Where each queue runs, one line each: a quorum queue's leader and members, a classic queue's node. " + placementWhen,
			Computed:            true,
		},
		"leaders": schema.MapAttribute{
			MarkdownDescription: "How many of the set's queues each node leads (a classic queue counts for its node). " +
				placementWhen,
			ElementType: types.Int64Type,
			Computed:    true,
		},
		"members": schema.MapAttribute{
			MarkdownDescription: "The nodes that hold each queue, by queue, separated by spaces. " + placementWhen,
			ElementType:         types.StringType,
			Computed:            true,
		},
	}
}
