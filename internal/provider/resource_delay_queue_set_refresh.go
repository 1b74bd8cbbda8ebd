package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The steps of Read: the read of a set the state knows or of one just
// imported, then the refresh of the state from what was read.

// isImportStub tells whether state is what ImportState writes: the name,
// the vhost and perhaps the layout, nothing read from the broker yet.
func isImportStub(state delayQueueSetModel) bool {
	return state.Levels.IsNull()
}

// readStateSet reads the set of a state from the broker, by name (see
// readKnownSet), sharing binding listings with the other sets a refresh
// reads. found is false when the set is gone.
func readStateSet(ctx context.Context, client *broker.Client, state *delayQueueSetModel) (actual topology.Topology, found bool, diags diag.Diagnostics) {
	actual, err := readKnownSet(ctx, client, *state, broker.ReadOptions{ShareBindings: true})
	found, diags = setFound(ctx, *state, actual, err)
	return actual, found, diags
}

// readImportedSet reads the set of an import stub by listing every object
// named like it, in the layout the import ID names or, when it names none,
// in the layout its objects tell (readToldLayout), and writes the spec the
// objects explain into state. An import of objects that explain no set
// fails, naming why.
func readImportedSet(ctx context.Context, client *broker.Client, state *delayQueueSetModel) (actual topology.Topology, found bool, diags diag.Diagnostics) {
	vhost, name, layout := state.VHost.ValueString(), state.Name.ValueString(), layoutOf(state.Layout)
	var err error
	if state.Layout.IsNull() {
		actual, err = client.ReadSetOfAnyLayout(ctx, vhost, name)
	} else {
		actual, err = client.ReadSetOf(ctx, vhost, name, layout)
	}
	if found, diags = setFound(ctx, *state, actual, err); !found {
		return actual, false, diags
	}
	if state.Layout.IsNull() {
		if layout, actual, diags = readToldLayout(ctx, client, vhost, name, actual); diags.HasError() {
			return actual, false, diags
		}
	}
	inferred, _, err := topology.InferLayout(name, layout, actual)
	if err != nil {
		diags.Append(cannotImport(vhost, name, err, ""))
		return actual, false, diags
	}
	setSpec(state, inferred)
	return actual, true, diags
}

// readToldLayout tells the layout of a set from all, the objects of every
// layout named like it, and reads the objects of that layout alone.
func readToldLayout(ctx context.Context, client *broker.Client, vhost, name string, all topology.Topology) (
	topology.Layout, topology.Topology, diag.Diagnostics,
) {
	told, err := topology.Infer(name, all)
	if err != nil {
		return "", all, diag.Diagnostics{cannotImport(vhost, name, err, fmt.Sprintf(". If they are those of two layouts, "+
			"name the one to import at the end of the import ID: %s/<layout>, one of %s.", importID(vhost, name), quoted(topology.Layouts)))}
	}
	layout := told.Layout.OrDefault()
	actual, err := client.ReadSetOf(ctx, vhost, name, layout)
	if err != nil {
		return layout, actual, brokerError("read", topology.Spec{Name: name, VHost: vhost, Layout: layout}, err, "")
	}
	return layout, actual, nil
}

// cannotImport is the error of an import whose objects explain no set,
// the detail ending with hint.
func cannotImport(vhost, name string, err error, hint string) diag.Diagnostic {
	return diag.NewErrorDiagnostic("Cannot Import the Delay Queue Set",
		fmt.Sprintf("The objects of %q in vhost %q do not explain a delay queue set: %s%s", name, vhost, err, hint))
}

// setFound judges the first read of a state's set: a vhost that is gone,
// or no object of the set left, means the set is gone (found false, and
// the resource leaves the state); any other error is reported.
func setFound(ctx context.Context, state delayQueueSetModel, actual topology.Topology, err error) (found bool, diags diag.Diagnostics) {
	vhost, name := state.VHost.ValueString(), state.Name.ValueString()
	switch {
	case errors.Is(err, broker.ErrVHostNotFound):
		tflog.Warn(ctx, "vhost of the delay queue set is gone; removing the set from state", map[string]any{"vhost": vhost})
		return false, nil
	case err != nil:
		return false, brokerError("read", topology.Spec{Name: name, VHost: vhost, Layout: layoutOf(state.Layout)}, err, "")
	case len(actual.Exchanges)+len(actual.Queues) == 0:
		tflog.Warn(ctx, "no object of the delay queue set exists; removing it from state", map[string]any{"vhost": vhost, "name": name})
		return false, nil
	}
	return true, nil
}

// refresh sets the response's state to state refreshed from actual, the
// broker's objects of its set: the generation the broker holds
// (followBroker), the draining generations with their messages
// (drainingCounts), the objects in the plan's order, and where the
// queues are. It notes the drifted queues that hold messages for the next
// plan (noteDriftedHolding).
func (r *DelayQueueSetResource) refresh(ctx context.Context, client *broker.Client, state delayQueueSetModel, actual topology.Topology,
	private privateState, resp *resource.ReadResponse,
) {
	spec, desired, draining, diags := followBroker(&state, actual)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	switched, diags := switchedAt(ctx, private)
	resp.Diagnostics.Append(diags...)
	counts, err := r.drainingCounts(ctx, client, spec, draining, switched)
	if err != nil {
		resp.Diagnostics.Append(brokerError("read", spec, err, "")...)
		return
	}
	resp.Diagnostics.Append(r.noteDriftedHolding(ctx, client, spec, desired, actual, resp.Private)...)
	state.Draining, diags = drainingValue(spec.Name, draining, counts)
	resp.Diagnostics.Append(diags...)
	// Listed in the plan's order so that an unchanged set reads back exactly
	// as planned; the draining generations show in draining instead. The
	// delivery bindings a library made for itself do not show at all: the set
	// leaves them to the library, so they are never drift.
	current := topology.WithoutLibraryBindings(spec, desired, topology.CurrentObjects(spec, actual))
	setPlanned(&state, spec, topology.Align(current, desired))
	setPlacement(&state, client.Placements(spec.VHost, actual.QueueNames()))
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// followBroker plans the set of state against actual, the broker's objects
// of it: its spec, what it is to hold, and the generations that drain, as
// the broker tells them. When the broker holds a generation the state does
// not know (an apply was cut off in the middle of a change), the state
// follows it (topology.FollowBroker), so the next plan starts from it.
// When the objects explain no set, that is drift, which the next plan
// shows: the state's generations stand, the draining ones too.
func followBroker(state *delayQueueSetModel, actual topology.Topology) (
	spec topology.Spec, desired topology.Topology, draining []topology.Generation, diags diag.Diagnostics,
) {
	inferred, draining, inferErr := topology.InferLayout(state.Name.ValueString(), layoutOf(state.Layout), actual)
	if spec, desired, diags = planOf(*state, actual); diags.HasError() {
		return spec, desired, nil, diags
	}
	if inferErr != nil {
		draining, _ = drainingOf(*state)
		return spec, desired, draining, diags
	}
	followed := topology.FollowBroker(spec, inferred)
	if followed.Generation == spec.Generation && followed.FormatGeneration == spec.FormatGeneration {
		return spec, desired, draining, diags
	}
	setGeneration(state, followed)
	spec, desired, diags = planOf(*state, actual)
	return spec, desired, draining, diags
}
