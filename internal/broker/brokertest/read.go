package brokertest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The Broker's reads: a set's objects, placements and scripted counts.

// ReadSetOf reads the objects of vhost that layout.ObjectNamePattern(name)
// matches, and the bindings whose source is one of those exchanges, as
// (*broker.Client).ReadSetOf does.
func (b *Broker) ReadSetOf(_ context.Context, vhost, name string, layout topology.Layout) (topology.Topology, error) {
	err := b.record(Call{Method: MethodReadSetOf, VHost: vhost, Set: name, Layout: layout})
	defer b.mu.Unlock()
	if err != nil {
		return topology.Topology{}, err
	}
	return b.readMatching(vhost, layout.ObjectNamePattern(name))
}

// ReadSetOfAnyLayout reads the objects of the set name in every layout
// (topology.AnyLayoutObjectNamePattern), as (*broker.Client).ReadSetOfAnyLayout does.
func (b *Broker) ReadSetOfAnyLayout(_ context.Context, vhost, name string) (topology.Topology, error) {
	err := b.record(Call{Method: MethodReadSetOfAnyLayout, VHost: vhost, Set: name})
	defer b.mu.Unlock()
	if err != nil {
		return topology.Topology{}, err
	}
	return b.readMatching(vhost, topology.AnyLayoutObjectNamePattern(name))
}

// readMatching is a read of the objects of vhost whose names match pattern.
func (b *Broker) readMatching(vhost, pattern string) (topology.Topology, error) {
	ofSet, err := regexp.Compile(pattern)
	if err != nil {
		return topology.Topology{}, fmt.Errorf("invalid name pattern %q: %w", pattern, err)
	}
	v := b.vhost(vhost, false)
	if v == nil {
		return topology.Topology{}, fmt.Errorf("listing queues: %w: %q", broker.ErrVHostNotFound, vhost)
	}
	return b.found(sorted(*v, ofSet.MatchString)), nil
}

// ReadSetNamed reads, as (*broker.Client).ReadSetNamed does, the objects
// known names, then round after round those named like the set
// (layout.ObjectNamePattern) that what it found refers to: a binding's
// destination, an exchange's alternate exchange, a queue's dead-letter
// exchange; with the bindings whose source is one of the exchanges found.
// An object of the set that nothing found refers to is not read. opts
// change nothing here.
func (b *Broker) ReadSetNamed(_ context.Context, vhost, name string, layout topology.Layout, known topology.Topology, opts broker.ReadOptions) (topology.Topology, error) {
	_ = opts
	err := b.record(Call{Method: MethodReadSetNamed, VHost: vhost, Set: name, Layout: layout, Known: known})
	defer b.mu.Unlock()
	if err != nil {
		return topology.Topology{}, err
	}
	return b.readNamed(vhost, layout.ObjectNamePattern(name), known)
}

// ReadObjectsNamed is ReadSetNamed of the objects whose names match
// pattern, as (*broker.Client).ReadObjectsNamed does.
func (b *Broker) ReadObjectsNamed(_ context.Context, vhost, pattern string, known topology.Topology, opts broker.ReadOptions) (topology.Topology, error) {
	_ = opts
	err := b.record(Call{Method: MethodReadObjectsNamed, VHost: vhost, Set: pattern, Known: known})
	defer b.mu.Unlock()
	if err != nil {
		return topology.Topology{}, err
	}
	return b.readNamed(vhost, pattern, known)
}

// ReadObjectsMatching is ReadSetOf of the objects whose names match
// pattern, as (*broker.Client).ReadObjectsMatching does.
func (b *Broker) ReadObjectsMatching(_ context.Context, vhost, pattern string) (topology.Topology, error) {
	err := b.record(Call{Method: MethodReadObjects, VHost: vhost, Set: pattern})
	defer b.mu.Unlock()
	if err != nil {
		return topology.Topology{}, err
	}
	return b.readMatching(vhost, pattern)
}

// readNamed is ReadSetNamed's read, b.mu held.
func (b *Broker) readNamed(vhost, pattern string, known topology.Topology) (topology.Topology, error) {
	ofSet, err := regexp.Compile(pattern)
	if err != nil {
		return topology.Topology{}, fmt.Errorf("reading %s: invalid name pattern: %w", pattern, err)
	}
	if len(known.Exchanges)+len(known.Queues) == 0 {
		return topology.Topology{VHost: vhost}, nil
	}
	v := b.vhost(vhost, false)
	if v == nil {
		return topology.Topology{}, fmt.Errorf("reading %s: %w: %q", pattern, broker.ErrVHostNotFound, vhost)
	}
	read := map[string]bool{} // "e:" or "q:" and a name
	var pending []string
	add := func(kind, name string, ofSetOnly bool) {
		if key := kind + ":" + name; name != "" && !read[key] && (!ofSetOnly || ofSet.MatchString(name)) {
			read[key] = true
			pending = append(pending, key)
		}
	}
	for _, e := range known.Exchanges {
		add("e", e.Name, false)
	}
	for _, q := range known.Queues {
		add("q", q.Name, false)
	}
	found := map[string]bool{}
	for len(pending) > 0 {
		key := pending[0]
		pending = pending[1:]
		kind, objectName, _ := strings.Cut(key, ":")
		if kind == "q" {
			if i := slices.IndexFunc(v.Queues, func(q topology.Queue) bool { return q.Name == objectName }); i >= 0 {
				found[key] = true
				add("e", v.Queues[i].Arguments.DeadLetterExchange, true)
			}
			continue
		}
		i := slices.IndexFunc(v.Exchanges, func(e topology.Exchange) bool { return e.Name == objectName })
		if i < 0 {
			continue
		}
		found[key] = true
		add("e", v.Exchanges[i].Arguments.AlternateExchange, true)
		for _, binding := range v.Bindings {
			if binding.Source != objectName {
				continue
			}
			if binding.DestinationType == topology.DestinationExchange {
				add("e", binding.Destination, true)
			} else {
				add("q", binding.Destination, true)
			}
		}
	}
	t := sorted(*v, func(string) bool { return false })
	for _, e := range v.Exchanges {
		if found["e:"+e.Name] {
			t.Exchanges = append(t.Exchanges, cloneExchange(e))
		}
	}
	for _, q := range v.Queues {
		if found["q:"+q.Name] {
			t.Queues = append(t.Queues, cloneQueue(q))
		}
	}
	for _, binding := range v.Bindings {
		if found["e:"+binding.Source] {
			t.Bindings = append(t.Bindings, binding)
		}
	}
	return b.found(sorted(t, func(string) bool { return true })), nil
}

// found notes where the queues of what a read found run, for Placements,
// and returns it.
func (b *Broker) found(t topology.Topology) topology.Topology {
	for _, q := range t.Queues {
		b.seen[vhostQueue{t.VHost, q.Name}] = b.placementOf(t.VHost, q)
	}
	return t
}

// placementOf is where a queue runs: as SetPlacement set, else on
// DefaultNode.
func (b *Broker) placementOf(vhost string, q topology.Queue) broker.Placement {
	if p, ok := b.placements[vhostQueue{vhost, q.Name}]; ok {
		return broker.Placement{Leader: p.Leader, Members: slices.Clone(p.Members), Online: slices.Clone(p.Online)}
	}
	p := broker.Placement{Leader: DefaultNode}
	if q.Arguments.QueueType == topology.QueueTypeQuorum {
		p.Members, p.Online = []string{DefaultNode}, []string{DefaultNode}
	}
	return p
}

// Placements says where each named queue of vhost was when a read of a
// set last found it, as (*broker.Client).Placements does: a queue no read
// found is absent.
func (b *Broker) Placements(vhost string, queues []string) map[string]broker.Placement {
	_ = b.record(Call{Method: MethodPlacements, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	found := make(map[string]broker.Placement, len(queues))
	for _, queue := range queues {
		if p, ok := b.seen[vhostQueue{vhost, queue}]; ok {
			found[queue] = p
		}
	}
	return found
}

// ReadPlacements says where each named queue of vhost that exists runs
// now, as (*broker.Client).ReadPlacements does: a queue that does not
// exist, or whose vhost does not, is absent.
func (b *Broker) ReadPlacements(_ context.Context, vhost string, queues []string) (map[string]broker.Placement, error) {
	err := b.record(Call{Method: MethodReadPlacements, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	found := make(map[string]broker.Placement, len(queues))
	if v := b.vhost(vhost, false); v != nil {
		for _, name := range queues {
			if q, ok := queueNamed(v, name); ok {
				found[name] = b.placementOf(vhost, q)
			}
		}
	}
	return found, nil
}

// HeldMessages answers, as (*broker.Client).HeldMessages does, the queues
// that hold messages by the exact checks' script (Messages.Held), each
// named queue that exists taking its next answer: only those holding
// something are in the map. An uncounted queue (Messages.Uncounted)
// counts as holding one message, and its *broker.UncountedError comes
// back beside the counts, joined with the others' (broker.IsUncounted
// holds). A vhost that does not exist is broker.ErrVHostNotFound.
func (b *Broker) HeldMessages(_ context.Context, vhost string, queues []string) (map[string]int64, error) {
	err := b.record(Call{Method: MethodHeldMessages, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return b.count(vhost, queues, func(s *script) (int64, string) { return next(s.Held, &s.held), s.Uncounted })
}

// ExactMessages is HeldMessages, taking the same answers of the exact
// checks' script, but for a queue whose Messages.Inexact is set: it is
// uncounted, as (*broker.Client).ExactMessages uncounts a queue it could
// count only by waiting for statistics.
func (b *Broker) ExactMessages(_ context.Context, vhost string, queues []string, _ time.Duration) (map[string]int64, error) {
	err := b.record(Call{Method: MethodExactMessages, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return b.count(vhost, queues, func(s *script) (int64, string) {
		n := next(s.Held, &s.held)
		if s.Inexact != "" {
			return n, s.Inexact
		}
		return n, s.Uncounted
	})
}

// CountedMessages is HeldMessages by the statistics' script
// (Messages.Counted, Messages.UncountedByStatistics), as
// (*broker.Client).CountedMessages counts by the statistics.
func (b *Broker) CountedMessages(_ context.Context, vhost string, queues []string) (map[string]int64, error) {
	err := b.record(Call{Method: MethodCountedMessages, VHost: vhost, Queues: queues})
	defer b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return b.count(vhost, queues, func(s *script) (int64, string) {
		return next(s.Counted, &s.counted), s.UncountedByStatistics
	})
}

// count counts each named queue of vhost that exists once, sorted, by
// answer: its count, or why it is uncounted.
func (b *Broker) count(vhost string, queues []string, answer func(*script) (int64, string)) (map[string]int64, error) {
	names := slices.Compact(slices.Sorted(slices.Values(queues)))
	v := b.vhost(vhost, false)
	if v == nil && len(names) > 0 {
		return nil, fmt.Errorf("reading queues: %w: %q", broker.ErrVHostNotFound, vhost)
	}
	held := map[string]int64{}
	var uncounted []error
	for _, name := range names {
		if _, ok := queueNamed(v, name); !ok {
			continue
		}
		n, reason := answer(b.script(vhost, name))
		if reason != "" {
			uncounted = append(uncounted, b.uncounted(vhost, name, reason))
			n = 1
		}
		if n > 0 {
			held[name] = n
		}
	}
	return held, errors.Join(uncounted...)
}

// script is the script of a queue, an empty one if none was set.
func (b *Broker) script(vhost, queue string) *script {
	key := vhostQueue{vhost, queue}
	if b.scripts[key] == nil {
		b.scripts[key] = &script{}
	}
	return b.scripts[key]
}

func (b *Broker) uncounted(vhost, queue, reason string) *broker.UncountedError {
	return &broker.UncountedError{VHost: vhost, Queue: queue, Version: b.Version, Reason: reason}
}
