package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var (
	_ datasource.DataSource              = &DelayQueueSetsDataSource{}
	_ datasource.DataSourceWithConfigure = &DelayQueueSetsDataSource{}
)

// NewDelayQueueSetsDataSource is the rabbitmq_delay_queue_sets data source's constructor.
func NewDelayQueueSetsDataSource() datasource.DataSource {
	return &DelayQueueSetsDataSource{}
}

// DelayQueueSetsDataSource finds every delay set that a vhost, or every
// vhost the user can read, already holds (topology.Discover), for adopting
// them with one for_each and one import block.
type DelayQueueSetsDataSource struct {
	data *providerData
}

// delayQueueSetsModel maps the data source's schema.
type delayQueueSetsModel struct {
	VHost      types.String `tfsdk:"vhost"`
	Sets       types.List   `tfsdk:"sets"`
	Unreadable types.List   `tfsdk:"unreadable"`
}

func (d *DelayQueueSetsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_delay_queue_sets"
}

func (d *DelayQueueSetsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = delayQueueSetsSchema()
}

func (d *DelayQueueSetsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data, resp.Diagnostics = configuredData(req.ProviderData, "Data Source")
}

// Read lists the vhost, or every vhost the user sees, once per kind of
// object, and finds the sets in each: nothing on the broker changes.
func (d *DelayQueueSetsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m delayQueueSetsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	client, diags := d.data.brokerClient()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	var found []vhostDiscovery
	if m.VHost.IsNull() {
		found, diags = discoverEveryVHost(ctx, client)
	} else {
		found, diags = discoverVHost(ctx, client, m.VHost.ValueString())
	}
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Sets, m.Unreadable, diags = discoveredValues(found)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// vhostDiscovery is what one vhost showed: its sets, or why it could not
// be read (unreadable set).
type vhostDiscovery struct {
	vhost      string
	found      topology.Discovery
	unreadable string
}

// discoverVHost finds the sets of the vhost a configuration names: a vhost
// that does not exist, or that the user may not read, is an error naming it.
func discoverVHost(ctx context.Context, client *broker.Client, vhost string) ([]vhostDiscovery, diag.Diagnostics) {
	var diags diag.Diagnostics
	listing, err := client.ListVHost(ctx, vhost)
	switch {
	case errors.Is(err, broker.ErrVHostNotFound):
		diags.AddAttributeError(pathVHost, "Vhost Not Found",
			fmt.Sprintf("Could not look for delay queue sets in the vhost %q: it does not exist on the broker. "+
				"Correct the vhost, or leave it unset to look in every vhost the user can read.", vhost))
	case errors.Is(err, broker.ErrVHostNotReadable):
		diags.AddAttributeError(pathVHost, "RabbitMQ Refused to List the Vhost",
			fmt.Sprintf("Could not look for delay queue sets in the vhost %q: the broker refuses the user this vhost "+
				"(%s). Finding its sets needs the management tag and permissions in the vhost.",
				vhost, describeFailures(err, 1)))
	case err != nil:
		diags.AddError(listFailedSummary(err), fmt.Sprintf("Could not look for delay queue sets in the vhost %q: %s", vhost, describeFailures(err, 1)))
	}
	if diags.HasError() {
		return nil, diags
	}
	return []vhostDiscovery{{vhost: vhost, found: topology.Discover(listing)}}, nil
}

// discoverEveryVHost finds the sets of every vhost the user sees. A vhost
// that the user sees but may not read, or that is deleted meanwhile, is
// reported among the unreadable, not an error: the others are still found.
func discoverEveryVHost(ctx context.Context, client *broker.Client) ([]vhostDiscovery, diag.Diagnostics) {
	var diags diag.Diagnostics
	vhosts, err := client.VHosts(ctx)
	if err != nil {
		diags.AddError(listFailedSummary(err), "Could not list the vhosts to look for delay queue sets in: "+describeFailures(err, 1))
		return nil, diags
	}
	found := make([]vhostDiscovery, 0, len(vhosts))
	for _, vhost := range vhosts {
		listing, err := client.ListVHost(ctx, vhost)
		switch {
		case errors.Is(err, broker.ErrVHostNotReadable):
			found = append(found, vhostDiscovery{vhost: vhost, unreadable: "the broker refuses the user this vhost, so its " +
				"sets are not listed: " + describeFailures(err, 1)})
		case errors.Is(err, broker.ErrVHostNotFound):
			found = append(found, vhostDiscovery{vhost: vhost, unreadable: "the vhost was deleted while the vhosts were listed"})
		case err != nil:
			diags.AddError(listFailedSummary(err), fmt.Sprintf("Could not look for delay queue sets in the vhost %q: %s",
				vhost, describeFailures(err, 1)))
			return nil, diags
		default:
			found = append(found, vhostDiscovery{vhost: vhost, found: topology.Discover(listing)})
		}
	}
	return found, diags
}

// listFailedSummary is the summary of a failed listing.
func listFailedSummary(err error) string {
	var unreachable *broker.UnreachableError
	var auth *broker.AuthError
	switch {
	case errors.As(err, &unreachable):
		return "Cannot Reach RabbitMQ"
	case errors.As(err, &auth):
		return "RabbitMQ Refused the Credentials"
	}
	return "RabbitMQ Request Failed"
}

// discoveredValues are the sets and unreadable attributes of what the
// vhosts showed, in vhost order, then as topology.Discover orders them.
func discoveredValues(found []vhostDiscovery) (sets, unreadable types.List, diags diag.Diagnostics) {
	var setValues, unreadableValues []attr.Value
	for _, v := range found {
		if v.unreadable != "" {
			unreadableValues = append(unreadableValues, object(&diags, unreadableObjectType, map[string]attr.Value{
				"vhost": types.StringValue(v.vhost), "name": types.StringNull(), "layout": types.StringNull(),
				"import_id": types.StringNull(), "reason": types.StringValue(v.unreadable),
			}))
		}
		for _, s := range v.found.Sets {
			setValues = append(setValues, foundSetValue(&diags, s))
		}
		for _, u := range v.found.Unreadable {
			unreadableValues = append(unreadableValues, object(&diags, unreadableObjectType, map[string]attr.Value{
				"vhost": types.StringValue(v.vhost), "name": types.StringValue(u.Name), "layout": types.StringValue(string(u.Layout)),
				"import_id": types.StringValue(setImportID(v.vhost, u.Name, u.Layout)), "reason": types.StringValue(unreadableReason(u)),
			}))
		}
	}
	return list(&diags, foundSetObjectType, setValues), list(&diags, unreadableObjectType, unreadableValues), diags
}

// foundSetValue is one element of sets: what the resource's arguments take
// from it, as an import of the set writes them into the state, so that the
// set adopted with them plans no change.
func foundSetValue(diags *diag.Diagnostics, found topology.FoundSet) attr.Value {
	s := found.Spec
	routes := make([]attr.Value, len(s.Routes))
	for i, r := range s.Routes {
		routes[i] = routeValue(r)
	}
	return object(diags, foundSetObjectType, map[string]attr.Value{
		"vhost":                types.StringValue(s.VHost),
		"name":                 types.StringValue(s.Name),
		"layout":               types.StringValue(string(s.Layout.OrDefault())),
		"import_id":            types.StringValue(setImportID(s.VHost, s.Name, s.Layout.OrDefault())),
		"levels":               types.Int64Value(int64(s.Levels)),
		"radix":                types.Int64Value(int64(s.Radix)),
		"resolution":           types.StringValue(topology.FormatDuration(s.Resolution)),
		"queue_type":           types.StringValue(string(s.QueueType)),
		"dead_letter_strategy": types.StringValue(string(s.DeadLetterStrategy)),
		"queue_leader_locator": optionalString(string(s.QueueLeaderLocator)),
		groupSizeAttribute:     optionalInt64(s.QuorumInitialGroupSize),
		"routes":               list(diags, routeObjectType, routes),
		"generation":           types.Int64Value(int64(s.Generation)),
		"draining_generations": types.Int64Value(int64(len(found.Draining))),
	})
}

// routeValue is a route as an import writes it: destination_type null
// for a queue, key null for every message (the resource's defaults).
func routeValue(r topology.Route) attr.Value {
	destinationType := types.StringNull()
	if r.DestinationType == topology.DestinationExchange {
		destinationType = types.StringValue(string(r.DestinationType))
	}
	return types.ObjectValueMust(routeObjectType.AttrTypes, map[string]attr.Value{
		"destination": types.StringValue(r.Destination), "destination_type": destinationType, "key": optionalString(r.Key),
	})
}

// setImportID is the import ID of a found set: the vhost and name, and in
// a library's layout the layout too, which a vhost that holds both
// libraries' objects needs.
func setImportID(vhost, name string, layout topology.Layout) string {
	if layout.DeclaredByLibrary() {
		return importID(vhost, name) + "/" + string(layout)
	}
	return importID(vhost, name)
}

// unreadableReason says why a group of objects is no set it could adopt.
func unreadableReason(u topology.UnreadableSet) string {
	reasons := strings.Join(u.Reasons, "; ")
	if u.Inferred == nil {
		return "the objects named as this set's explain no delay queue set: " + reasons
	}
	s := u.Inferred
	return fmt.Sprintf("the objects describe a set of %d levels of radix %d at %s, %s queues, %s, but are not all of it, "+
		"or more, so adopting it would change the broker: %s. To adopt it anyway, import it on its own "+
		"(import block or terraform import) and review the plan.",
		s.Levels, s.Radix, topology.FormatDuration(s.Resolution), s.QueueType, s.DeadLetterStrategy, reasons)
}
