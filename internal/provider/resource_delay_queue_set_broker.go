package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// How the resource reads a set from the broker and applies changes to it.

// readKnownSet reads the set of a state (or a plan) whose objects it
// knows: those of its current and draining generations, by name (see
// broker.Client.ReadSetNamed), so that a refresh costs the broker the same
// however many other objects the vhost holds. A state that cannot be
// planned (written by a provider that planned it otherwise) is read by the
// name-filtered listing instead. opts.ShareBindings is for a refresh,
// whose reads of many sets share listings of their bindings; a read in an
// apply does not share.
func readKnownSet(ctx context.Context, client *broker.Client, m delayQueueSetModel, opts broker.ReadOptions) (topology.Topology, error) {
	vhost, name, layout := m.VHost.ValueString(), m.Name.ValueString(), layoutOf(m.Layout)
	if known, ok := knownSet(m); ok {
		return client.ReadSetNamed(ctx, vhost, name, layout, known, opts)
	}
	return client.ReadSetOf(ctx, vhost, name, layout)
}

// plansAllOf tells whether planned holds every exchange, queue and binding
// the state's last refresh or apply showed (its lines).
func plansAllOf(planned topology.Topology, state delayQueueSetModel) bool {
	names := map[string]bool{}
	for _, x := range planned.Exchanges {
		names["exchange "+x.Name] = true
	}
	for _, q := range planned.Queues {
		names["queue "+q.Name] = true
	}
	for _, b := range planned.Bindings {
		names[b.String()] = true
	}
	for _, line := range lines(state.Exchanges) {
		if !names["exchange "+topology.LineName(line)] {
			return false
		}
	}
	for _, line := range lines(state.Queues) {
		if !names["queue "+topology.LineName(line)] {
			return false
		}
	}
	for _, line := range lines(state.Bindings) {
		if !names[line] {
			return false
		}
	}
	return true
}

// knownSet is the planned topology of a state's current and draining
// generations, or false when the state cannot be planned.
func knownSet(m delayQueueSetModel) (topology.Topology, bool) {
	spec, diags := specOf(m)
	if diags.HasError() {
		return topology.Topology{}, false
	}
	draining, _ := drainingOf(m)
	known, err := desiredSet(spec, draining, shownQueues(m))
	return known, err == nil
}

// desiredSet is what the set of spec is to hold, the one way ModifyPlan,
// Read, Create, Update and Delete work it out: spec's generation and the
// draining ones, with the parking lot of the queue type it has in seen,
// since declaring it again would drop the messages it parks
// (topology.KeepParkingLot). seen is what the broker holds, or, for a plan,
// which reads no broker, what the state's last read showed (shownQueues);
// nothing for a new set.
func desiredSet(spec topology.Spec, draining []topology.Generation, seen topology.Topology) (topology.Topology, error) {
	desired, err := topology.PlanGenerations(spec, draining)
	if err != nil {
		return topology.Topology{}, err
	}
	return topology.KeepParkingLot(spec.Name, desired, topology.ParkingLotType(spec.Name, seen)), nil
}

// shownQueues is the queues of a state's queues attribute, with their queue
// types (all desiredSet needs of them).
func shownQueues(state delayQueueSetModel) topology.Topology {
	var queues []topology.Queue
	for _, line := range lines(state.Queues) {
		name, queueType := topology.QueueTypeInLine(line)
		queues = append(queues, topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: queueType}})
	}
	return topology.Topology{Queues: queues}
}

// desiredAndActual plans a fully known model and reads what the broker has
// of that set, for Create and Update (the action, for errors) to diff. A
// create looks for the planned objects by name; an update lists every
// object named like the set, so that no generation the state has lost
// track of escapes it.
func (r *DelayQueueSetResource) desiredAndActual(ctx context.Context, action string, m delayQueueSetModel) (
	client *broker.Client, spec topology.Spec, desired, actual topology.Topology, diags diag.Diagnostics,
) {
	client, diags = r.data.brokerClient()
	if diags.HasError() {
		return
	}
	spec, desired, planDiags := planOf(m, topology.Topology{}) // a create's; an update plans in applyGenerations
	diags.Append(planDiags...)
	if diags.HasError() {
		return
	}
	var err error
	if action == "create" {
		actual, err = client.ReadSetNamed(ctx, spec.VHost, spec.Name, spec.Layout, desired, broker.ReadOptions{})
	} else {
		actual, err = client.ReadSetOf(ctx, spec.VHost, spec.Name, spec.Layout)
	}
	if err != nil {
		diags.Append(brokerError(action, spec, err, "")...)
	}
	return client, spec, desired, actual, diags
}

// apply runs the changes after refusing, with every non-empty queue named,
// any deletion of a queue that holds messages unless force is set, so that a
// refused change changes nothing. The broker layer checks again at the moment
// of each deletion, for messages that arrive in between (see package broker).
func (r *DelayQueueSetResource) apply(ctx context.Context, client *broker.Client, spec topology.Spec, changes []topology.Change, force bool) error {
	var doomed []string
	redeclared := map[string]bool{}
	for _, change := range changes {
		switch change.Kind {
		case topology.DeleteQueue:
			doomed = append(doomed, change.Queue.Name)
		case topology.CreateQueue:
			redeclared[change.Queue.Name] = true
		}
	}
	if len(doomed) > 0 && !force {
		counts, err := client.HeldMessages(ctx, spec.VHost, doomed)
		if err != nil && !broker.IsUncounted(err) {
			return err
		}
		uncounted := broker.Uncounted(err)
		refused := &queuesHoldMessagesError{}
		for _, queue := range doomed {
			if why, ok := uncounted[queue]; ok {
				refused.held = append(refused.held, why.Error())
			} else if n := counts[queue]; n > 0 {
				refused.held = append(refused.held, fmt.Sprintf("%s holds %d message(s)", queue, n))
				if redeclared[queue] && spec.Layout.DeclaredByLibrary() {
					refused.redeclaredIn = spec.Layout
				}
			}
		}
		if len(refused.held) > 0 {
			return refused
		}
	}
	started, before := time.Now(), client.Requests()
	err := client.Apply(ctx, spec.VHost, changes, broker.ApplyOptions{ForceDeleteQueues: force})
	tflog.Debug(ctx, "applied delay queue set changes", map[string]any{
		"changes": len(changes), "requests": client.Requests() - before, "duration": time.Since(started).String(),
	})
	return err
}
