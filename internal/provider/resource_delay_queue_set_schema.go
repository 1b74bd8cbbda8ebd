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

// The attributes rabbitmq_delay_queue_set and rabbitmq_delay_topology share:
// the spec and what the planner derives from it. Both schemas are built from
// these tables (they use different schema packages), and both models embed
// delaySpecModel, which they map.

// benchmarksURL is where the docs/ pages link to the figures these
// descriptions cite: the benchmarks' results files at the release the
// docs are published with. It is absolute: the docs are read on the
// Terraform Registry, where a link relative to the repository leads
// nowhere; cmd/doclinks checks that the tag is the release's and that
// every file it names exists.
const benchmarksURL = "https://github.com/delayqueue/terraform-provider-rabbitmq/blob/v0.1.0/benchmarks/"

// dataPathLink and faultsLink point to the sections of the benchmarks
// that measure the data path and the faults.
const (
	dataPathLink = "[data-path benchmarks](" + benchmarksURL + "README.md#data-path-make-bench-delays)"
	faultsLink   = "[fault tests](" + benchmarksURL + "README.md#faults-make-test-faults)"
)

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
const newGeneration = "Changing it declares a new generation of the set's TTL queues beside the old one (`generation`): " +
	"messages already waiting go on through the old queues and leave on time, new ones take the new queues, and the old " +
	"generation is deleted once empty (`draining`, `migration_wait`)."

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
const newKeyFormat = " The key format changes with it, so the new generation gets its own ingest and out exchanges " +
	"(`ingest_exchange`, `out_exchange`): publishers switch to the new exchange and format together, and the old exchanges " +
	"keep serving the old format until their generation is deleted."

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
		description: fmt.Sprintf("The prefix of every object of the set (`<name>.ingest`, `<name>.level.00`, …): "+
			"1 to %d bytes of ASCII letters, digits, `.`, `_`, `-` and `:`, not starting with `amq.`. In a library's "+
			"`layout` the objects have the library's names whatever the set's name, which then only names the set "+
			"(and its import ID).", topology.MaxSetNameLength)},
	"layout": {optional: true, computed: true, resourceDefault: string(topology.LayoutDefault), replaces: replacedByModifier,
		stringModifiers: []planmodifier.String{requiresReplaceOfLayout()},
		description: "How the set's objects and keys are laid out: " + quoted(topology.Layouts) + ". Defaults to `" +
			string(topology.LayoutDefault) + "`, this provider's own layout. `" + string(topology.LayoutNServiceBus) +
			"` declares, byte for byte, the delay infrastructure of the NServiceBus RabbitMQ transport (v2: " +
			"`nsb.v2.delay-level-00` … `27` and `nsb.v2.delay-delivery`), and `" + string(topology.LayoutCelery) +
			"` the one Celery declares through kombu (`celery_delayed_0` … `27` and `celery_delayed_delivery`): " +
			"the library's own declarations then succeed against the set, and an existing one imports. Such a layout " +
			"fixes `levels` (28), `resolution` (`1s`), `radix` (2), the names and, for NServiceBus, `queue_type` " +
			"(`quorum`): leave them unset (they are computed), or set them to exactly those values. Its routes are " +
			"the delivery exchange's bindings on `#.<key>`, and it has no unroutable queue. Its names are fixed, so a " +
			"vhost holds at most one set of each library's layout. See the guides for NServiceBus and Celery.",
		onResource: "The delivery exchange's bindings that no route lists are the library's, which binds its " +
			"destinations itself: the set never deletes them one by one, and they are no drift."},
	"vhost": {optional: true, computed: true, resourceDefault: defaultVHost, replaces: replacedByModifier,
		description: "The vhost the set lives in. Defaults to `" + defaultVHost + "`.",
		onResource:  "It must exist."},
	"max_delay": {optional: true,
		description: fmt.Sprintf("The longest delay the set must hold, as a duration such as `\"36h\"`; "+
			"`levels` becomes the smallest N with (`radix`^N − 1) × `resolution` ≥ `max_delay` (N ≤ %d). "+
			"Set exactly one of `max_delay` and `levels`.", topology.MaxLevels)},
	"levels": {kind: int64Attribute, optional: true, computed: true,
		description: fmt.Sprintf("N, the number of delay digits, from %d to %d: delays go up to "+
			"(`radix`^N − 1) × `resolution`, and publishers write the delay as exactly N digits in base `radix`. "+
			"Computed from `max_delay` when that is set instead.", topology.MinLevels, topology.MaxLevels),
		onResource: "Adding levels happens in place; removing them deletes their queues, which must be empty."},
	"resolution": {optional: true, computed: true, resourceDefault: topology.DefaultResolution.String(), onResource: newGeneration + newKeyFormat,
		description: fmt.Sprintf("The tick: every delay is rounded up to a whole number of ticks, and the queue of "+
			"digit v at level k holds messages for v × `radix`^k ticks (2^k in radix 2). A duration of whole "+
			"milliseconds, at least `%q`; defaults to `%q`.",
			topology.MinResolution.String(), topology.DefaultResolution.String())},
	"radix": {kind: int64Attribute, optional: true, computed: true, int64Default: topology.DefaultRadix, onResource: newGeneration + newKeyFormat,
		description: fmt.Sprintf("The base the delay digits are written in: %s; defaults to `%d`. In radix 2 the set "+
			"has one TTL queue per level (`<name>.level.<kk>`); in radix r, r − 1 per level (`<name>.r<r>.<kk>.<v>`, one "+
			"per nonzero digit v). A message passes one queue per nonzero digit of its delay, so a larger radix holds "+
			"the same delays with fewer levels and fewer hops per message, for more queues and bindings (the %s "+
			"compare them). "+
			"Publishers write their keys in the same radix: pass it to the `delay_routing_key` function.",
			numbers(topology.Radixes), topology.DefaultRadix, dataPathLink)},
	"queue_type": {optional: true, computed: true, resourceDefault: string(topology.QueueTypeQuorum), onResource: newGeneration,
		description: "The type of the set's queues: " + quoted(topology.QueueTypes) + ". Defaults to `" +
			string(topology.QueueTypeQuorum) + "`: replicated, and the type whose dead-lettering can be " +
			"`at-least-once`. Choose `classic` only where one node without replication will do. The " + dataPathLink +
			" give each type's lateness and broker CPU per message."},
	"dead_letter_strategy": {optional: true, computed: true, onResource: newGeneration,
		description: "How expired messages move between the queues: " + quoted(topology.DeadLetterStrategies) +
			". Defaults to `at-least-once` for quorum queues: a level keeps an expired message until the next queue " +
			"has confirmed it, so none is lost between levels, even when a node fails (see the " + faultsLink +
			"); a confirm lost in a failure can deliver a message twice, so consumers should be idempotent. It " +
			"costs more broker CPU than `at-most-once`: 1.87 against 1.68 ms per message for radix 2 at 1,000 msg/s " +
			"on RabbitMQ 3.10.8 ([benchmarks/delays.md](" + benchmarksURL + "delays.md)). Bound its wait " +
			"after an outage with the broker setting of the [operating guide](../guides/operating-a-delay-queue-set). " +
			"Classic queues support only `at-most-once`, their default."},
	"queue_leader_locator": {optional: true, computed: true,
		description: "How the broker places each TTL queue on a cluster's nodes (a quorum queue's leader, a classic queue's " +
			"node), the queues' `x-queue-leader-locator`: " + quoted(topology.LeaderLocators) + ". `balanced` spreads the " +
			"set's queues, and with them its expiry and dead-lettering work, over the nodes; `client-local` puts them on " +
			"the node whose management API the provider talks to. On one node both are the same. Defaults to `balanced` " +
			"for quorum queues; classic queues get none unless set (RabbitMQ 3.x refuses it on them). A policy with " +
			"`queue-leader-locator` overrides it. In a library's `layout` it must stay unset: the library declares its " +
			"queues without it, so give the broker such a policy instead (see the operating guide).",
		onResource: "Unset, a set keeps the locator its queues have — none, for a set made before this attribute existed, " +
			"which plans no change — until a change declares new queues anyway (a change of " +
			generationAttributeList(generationAttributes) + "), whose queues get the default. " + newGeneration},
	groupSizeAttribute: groupSizeShared,

	"max_delay_effective": {computed: true,
		description: "The longest delay the set holds: (`radix`^N − 1) × `resolution`."},
	"ingest_exchange": {computed: true,
		description: "The topic exchange to publish delayed messages to, with routing key `<key>.<N digits>`: " +
			"the delay in ticks in base `radix`, each digit a decimal word. In a library's `layout`, the top level's " +
			"exchange (`nsb.v2.delay-level-27`, `celery_delayed_27`), which takes every delay, with routing key " +
			"`<28 bits>.<key>` (see the `layout_delay_routing_key` function)."},
	"out_exchange": {computed: true,
		description: "The topic exchange messages leave through when their delay is over: in a library's `layout`, " +
			"its delivery exchange."},
	"unroutable_queue": {computed: true,
		description: "The queue that parks every message no binding of the set matches (a malformed key, or no matching route). " +
			"Null in a library's `layout`, which has none: the broker drops such a message."},
	"bindings": {computed: true,
		description: "Every binding of the set, one line each (`<source> -> <queue|exchange> <destination>, key \"<routing key>\"`), " +
			"in the layout's order: the delay bindings from the ingest and done exchanges, then the routes. " +
			fmt.Sprintf("A set of N levels in radix r has (r − 1) × N(N + 1)/2 + N + 1 delay bindings (%d at %d levels of radix 2). ",
				(topology.MaxLevels+1)*(topology.MaxLevels+2)/2, topology.MaxLevels) + linesRatherThanLists,
		onResource: "In a library's `layout` it leaves out the delivery exchange's bindings that no route lists: the " +
			"library's own, which the set leaves to it."},
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
		description: "Where messages go when their delay is over: every message whose key matches is delivered to the destination.",
		onResource: "Adding and removing routes happens in place. In a library's `layout` removing a route leaves its " +
			"binding on the broker: the library binds its destinations from the delivery exchange itself, so the " +
			"binding is the library's too, and deleting it would drop the delayed messages on their way there.",
	}
	routeAttributes = map[string]sharedAttribute{
		"destination": {required: true,
			description: "The name of the queue or exchange to deliver to, in the set's vhost."},
		"destination_type": {optional: true,
			description: "Whether `destination` is a " + quoted(topology.DestinationTypes) + ". Defaults to `" +
				string(topology.DestinationQueue) + "`."},
		"key": {optional: true,
			description: "The message key this route takes (the part of the routing key before the delay digits), " +
				"without `#` or `*`. Unset or empty, the route takes every message. In a library's `layout` it is " +
				"the part after the delay bits, bound from the delivery exchange as `#.<key>`, and may hold " +
				"wildcards (a Celery queue bound on `tasks.#`)."},
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

// clusterLink points to the benchmarks of a set on a cluster.
const clusterLink = "[cluster benchmarks](" + benchmarksURL + "README.md#a-set-on-a-cluster-make-bench-cluster)"

// groupSizeShared is quorum_initial_group_size in the table both schemas
// are built from.
var groupSizeShared = sharedAttribute{kind: int64Attribute, optional: true, onResource: newGeneration,
	description: "How many nodes hold a replica of each TTL queue: RabbitMQ's initial group size, the queues' " +
		"`x-quorum-initial-group-size`, a whole number from 1, for `quorum` queues only. Unset, the queues get none and the " +
		"broker's own size applies: its `quorum_queue.initial_cluster_size` (3 unless set), or every node of a smaller " +
		"cluster. With fewer replicas than nodes, a node writes only the messages of the queues it holds, so a larger " +
		"cluster carries more: see the " + clusterLink + ". The broker picks a queue's members when it declares it: the " +
		"node that declares it, then the nodes that hold the fewest members. With `queue_leader_locator = \"balanced\"` the " +
		"provider therefore declares the set's queues through the nodes its vhost runs on in turn (through the management " +
		"endpoint it has), so that each node holds about as many of them; `members` shows where they went. No policy sets " +
		"it. In a library's `layout` it must stay unset: the library declares its queues without it (see the operating guide)."}

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
const placementWhen = "As the last refresh or apply read it; known after apply when a plan changes the set. It is " +
	"never a change of the set: a queue's leader moves when its node goes down or the operator rebalances."

func placementAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"placement": schema.StringAttribute{
			MarkdownDescription: "Where each queue of the set runs, one line each: a quorum queue's leader node and members, " +
				"and its members on nodes that are down (`<queue>: leader rabbit@a, members rabbit@a rabbit@b rabbit@c, " +
				"offline rabbit@c`), or a classic queue's node (`<queue>: node rabbit@a`). " + placementWhen,
			Computed: true,
		},
		"leaders": schema.MapAttribute{
			MarkdownDescription: "How many of the set's queues each node leads (a classic queue counts for its node): a set " +
				"whose queues all lead on one node leaves that node all of its expiry and dead-lettering work " +
				"(see `queue_leader_locator`). " + placementWhen,
			ElementType: types.Int64Type,
			Computed:    true,
		},
		"members": schema.MapAttribute{
			MarkdownDescription: "The nodes that hold each queue of `queues`, by queue, sorted and separated by spaces: a quorum " +
				"queue's members (`rabbit@a rabbit@b`), a classic queue's node. A plan shows it for every queue the apply keeps, as " +
				"the last refresh read it, and as known after apply for each queue the apply declares (those of a new set or " +
				"generation, a queue declared again): the broker picks a queue's members when it declares it (see " +
				"`quorum_initial_group_size`). Members change only when an operator adds or removes one, not when a node goes " +
				"down; after an apply, a queue it did not declare shows what the plan showed until the next refresh.",
			ElementType: types.StringType,
			Computed:    true,
		},
	}
}
