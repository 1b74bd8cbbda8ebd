package brokertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The Broker's Apply: changes in the client's batches, with its refusals.

// Apply makes changes in vhost, in order, as (*broker.Client).Apply does:
// in batches of consecutive changes of one kind, stopping after a batch
// with failures, each a *broker.ChangeError. Without ForceDeleteQueues a
// queue that holds messages (Messages.Held) or is uncounted
// (Messages.Uncounted) is refused and stays. Declarations fail as the
// broker's do (inequivalent arguments, a missing end, a missing vhost);
// deleting what is gone succeeds, and a queue or exchange takes its
// bindings with it.
func (b *Broker) Apply(_ context.Context, vhost string, changes []topology.Change, opts broker.ApplyOptions) error {
	err := b.record(Call{Method: MethodApply, VHost: vhost, Changes: changes, Options: opts})
	defer b.mu.Unlock()
	if err != nil {
		return err
	}
	for start := 0; start < len(changes); {
		end := start + 1
		for end < len(changes) && changes[end].Kind == changes[start].Kind && changes[end].Opens == changes[start].Opens {
			end++
		}
		var failures []error
		for _, change := range changes[start:end] {
			if err := b.applyChange(vhost, change, opts.ForceDeleteQueues); err != nil {
				failures = append(failures, &broker.ChangeError{Change: change, Err: err})
			}
		}
		if len(failures) > 0 {
			return errors.Join(failures...)
		}
		start = end
	}
	return nil
}

// applyChange makes one change.
func (b *Broker) applyChange(vhost string, c topology.Change, force bool) error {
	v := b.vhost(vhost, false)
	deletion := c.Kind == topology.DeleteExchange || c.Kind == topology.DeleteQueue || c.Kind == topology.DeleteBinding
	switch {
	case v == nil && deletion:
		return nil // the broker answers 404, which a deletion takes for gone
	case v == nil:
		return fmt.Errorf("%w: %q", broker.ErrVHostNotFound, vhost)
	case c.Kind == topology.CreateExchange && c.Exchange != nil:
		return declare(&v.Exchanges, cloneExchange(*c.Exchange), func(e topology.Exchange) string { return e.Name }, sameExchange, vhost)
	case c.Kind == topology.CreateQueue && c.Queue != nil:
		_, existed := queueNamed(v, c.Queue.Name)
		err := declare(&v.Queues, cloneQueue(*c.Queue), func(q topology.Queue) string { return q.Name }, sameQueue, vhost)
		if err == nil && !existed && c.Queue.Arguments.QueueType == topology.QueueTypeQuorum {
			b.declared[vhostQueue{vhost, c.Queue.Name}] = broker.LogMark{Term: 1, Index: 3}
		}
		return err
	case c.Kind == topology.CreateBinding && c.Binding != nil:
		return bind(v, *c.Binding)
	case c.Kind == topology.DeleteBinding && c.Binding != nil:
		v.Bindings = slices.DeleteFunc(v.Bindings, sameBinding(*c.Binding))
		return nil
	case c.Kind == topology.DeleteQueue && c.Queue != nil:
		return b.deleteQueue(v, c.Queue.Name, force)
	case c.Kind == topology.DeleteExchange && c.Exchange != nil:
		removeExchange(v, c.Exchange.Name, true)
		return nil
	}
	return fmt.Errorf("a %s change without its object", c.Kind)
}

// deleteQueue deletes a queue, unless it holds messages by its exact check
// and force is false.
func (b *Broker) deleteQueue(v *topology.Topology, name string, force bool) error {
	if _, ok := queueNamed(v, name); !ok {
		return nil
	}
	if !force {
		s := b.script(v.VHost, name)
		held := next(s.Held, &s.held)
		switch {
		case s.Uncounted != "":
			return b.uncounted(v.VHost, name, s.Uncounted)
		case held > 0:
			return &broker.QueueNotEmptyError{Queue: name, Messages: held}
		}
	}
	removeQueue(v, name, true)
	delete(b.scripts, vhostQueue{v.VHost, name})
	return nil
}

// declare adds object to objects unless one of its name exists: the same
// (equal) changes nothing, another fails as the broker refuses it.
func declare[T any](objects *[]T, object T, name func(T) string, equal func(a, b T) bool, vhost string) error {
	i := slices.IndexFunc(*objects, func(o T) bool { return name(o) == name(object) })
	switch {
	case i < 0:
		*objects = append(*objects, object)
		return nil
	case equal((*objects)[i], object):
		return nil
	}
	return &broker.APIError{Method: http.MethodPut, Path: "/api/…/" + vhost + "/" + name(object),
		StatusCode: http.StatusBadRequest, Code: "bad_request",
		Reason: "inequivalent arg: " + name(object) + " exists with other arguments"}
}

// bind adds a binding whose ends exist.
func bind(v *topology.Topology, binding topology.Binding) error {
	sourceFound := hasExchange(v, binding.Source)
	destinationFound := false
	if binding.DestinationType == topology.DestinationExchange {
		destinationFound = hasExchange(v, binding.Destination)
	} else {
		_, destinationFound = queueNamed(v, binding.Destination)
	}
	if !sourceFound || !destinationFound {
		return &broker.APIError{Method: http.MethodPost, Path: "/api/bindings/" + v.VHost,
			StatusCode: http.StatusNotFound, Code: "Object Not Found", Reason: "Not Found"}
	}
	if !slices.ContainsFunc(v.Bindings, sameBinding(binding)) {
		v.Bindings = append(v.Bindings, binding)
	}
	return nil
}

func hasExchange(v *topology.Topology, name string) bool {
	return slices.ContainsFunc(v.Exchanges, func(e topology.Exchange) bool { return e.Name == name })
}

func queueNamed(v *topology.Topology, name string) (topology.Queue, bool) {
	if v == nil {
		return topology.Queue{}, false
	}
	i := slices.IndexFunc(v.Queues, func(q topology.Queue) bool { return q.Name == name })
	if i < 0 {
		return topology.Queue{}, false
	}
	return v.Queues[i], true
}

// removeExchange removes an exchange and, with its bindings, those from it
// and into it.
func removeExchange(v *topology.Topology, name string, withBindings bool) {
	v.Exchanges = slices.DeleteFunc(v.Exchanges, func(e topology.Exchange) bool { return e.Name == name })
	if withBindings {
		v.Bindings = slices.DeleteFunc(v.Bindings, func(b topology.Binding) bool {
			return b.Source == name || b.DestinationType == topology.DestinationExchange && b.Destination == name
		})
	}
}

// removeQueue removes a queue and, with its bindings, those into it.
func removeQueue(v *topology.Topology, name string, withBindings bool) {
	v.Queues = slices.DeleteFunc(v.Queues, func(q topology.Queue) bool { return q.Name == name })
	if withBindings {
		v.Bindings = slices.DeleteFunc(v.Bindings, func(b topology.Binding) bool {
			return b.DestinationType != topology.DestinationExchange && b.Destination == name
		})
	}
}

// sameBinding matches the bindings equal to b, an unset destination type
// read as queue.
func sameBinding(b topology.Binding) func(topology.Binding) bool {
	return func(o topology.Binding) bool { return topology.CompareBindings(o, b) == 0 }
}

// sameExchange and sameQueue tell whether a declaration of b changes
// nothing of a, as the broker takes it: the same type and arguments.
func sameExchange(a, b topology.Exchange) bool {
	return a.Type == b.Type && a.Arguments.AlternateExchange == b.Arguments.AlternateExchange &&
		maps.Equal(a.Arguments.Other, b.Arguments.Other)
}

func sameQueue(a, b topology.Queue) bool {
	x, y := a.Arguments, b.Arguments
	same := maps.Equal(x.Other, y.Other)
	x.Other, y.Other = nil, nil
	return same && reflect.DeepEqual(x, y)
}

// sorted is a copy of the objects of t whose names match, and the bindings
// whose source is one of those exchanges, sorted as a read of the broker
// sorts them.
func sorted(t topology.Topology, match func(string) bool) topology.Topology {
	found := topology.Topology{VHost: t.VHost}
	sources := map[string]bool{}
	for _, e := range t.Exchanges {
		if match(e.Name) {
			found.Exchanges = append(found.Exchanges, cloneExchange(e))
			sources[e.Name] = true
		}
	}
	for _, q := range t.Queues {
		if match(q.Name) {
			found.Queues = append(found.Queues, cloneQueue(q))
		}
	}
	for _, binding := range t.Bindings {
		if sources[binding.Source] {
			binding = binding.Canonical()
			found.Bindings = append(found.Bindings, binding)
		}
	}
	slices.SortFunc(found.Exchanges, func(a, b topology.Exchange) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(found.Queues, func(a, b topology.Queue) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(found.Bindings, topology.CompareBindings)
	return found
}

func cloneExchange(e topology.Exchange) topology.Exchange {
	e.Arguments.Other = maps.Clone(e.Arguments.Other)
	return e
}

func cloneQueue(q topology.Queue) topology.Queue {
	q.Arguments.Other = maps.Clone(q.Arguments.Other)
	return q
}
