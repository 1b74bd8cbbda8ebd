package delayset_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The steps of a set against brokertest's in-memory broker and a clock
// that never sleeps: what each step asks the broker, what it changes, and
// what it refuses. The acceptance tests make the same steps on a real
// broker through Terraform.

// clock advances at once when waited on: nothing sleeps.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }
func (c *clock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	fired := make(chan time.Time, 1)
	fired <- c.now
	return fired
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)} }

// resolved is the README's kind of set, small: "delay", 3 levels of 1 s,
// of queueType.
func resolved(t *testing.T, queueType topology.QueueType) topology.Spec {
	t.Helper()
	spec, err := topology.Resolve(topology.Spec{Name: "delay", VHost: "/", Levels: 3, Resolution: time.Second, QueueType: queueType})
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// created is a broker holding the set of spec, created through Sets, and
// what the state remembers of it.
func created(t *testing.T, spec topology.Spec) (*brokertest.Broker, *clock, delayset.Sets, delayset.Remembered) {
	t.Helper()
	b, c := brokertest.New("/"), newClock()
	sets := delayset.Sets{Broker: b, Clock: c}
	result, err := sets.Create(t.Context(), spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	b.ResetCalls()
	return b, c, sets, result.Remembered
}

func queueNames(t topology.Topology) []string { return t.QueueNames() }

func applied(b *brokertest.Broker) []topology.Change {
	var changes []topology.Change
	for _, call := range b.CallsOf(brokertest.MethodApply) {
		changes = append(changes, call.Changes...)
	}
	return changes
}

func TestCreate(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	b, _, _, remembered := created(t, spec)
	planned, err := topology.PlanGenerations(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	actual, _ := b.Topology("/")
	if got, want := queueNames(actual), queueNames(planned); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("the broker holds queues %v, want the plan's %v", got, want)
	}
	if len(actual.Bindings) != len(planned.Bindings) || len(actual.Exchanges) != len(planned.Exchanges) {
		t.Errorf("the broker holds %d exchanges and %d bindings, want %d and %d",
			len(actual.Exchanges), len(actual.Bindings), len(planned.Exchanges), len(planned.Bindings))
	}
	if len(remembered.Shown.Queues) != len(planned.Queues) || remembered.Spec.Name != "delay" {
		t.Errorf("Create remembers %+v, want the planned set", remembered)
	}
}

func TestCreateRefusesObjectsThatExist(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	b, _, sets, _ := created(t, spec)
	_, err := sets.Create(t.Context(), spec)
	var exists *delayset.ExistsError
	if !errors.As(err, &exists) || len(exists.Found.Queues) == 0 {
		t.Fatalf("a second Create = %v, want an ExistsError naming what it found", err)
	}
	if changes := applied(b); len(changes) > 0 {
		t.Errorf("a refused Create applied %d changes", len(changes))
	}
}

func TestDestroy(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	level := spec.CurrentGeneration().Queues(spec.Name)[0]
	tests := []struct {
		name     string
		script   brokertest.Messages
		force    bool
		refused  string // in the error; "" when the set goes
		vhostOff bool
	}{
		{name: "an empty set goes"},
		{name: "a queue holding messages refuses the whole destroy", script: brokertest.Messages{Held: []int64{3}},
			refused: level + " holds 3 message(s)"},
		{name: "a queue the broker cannot count refuses it too", script: brokertest.Messages{Uncounted: "no statistics"},
			refused: "no statistics"},
		{name: "force deletes a queue holding messages", script: brokertest.Messages{Held: []int64{3}}, force: true},
		{name: "a vhost that is gone took the set with it", vhostOff: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _, sets, remembered := created(t, spec)
			b.Script("/", level, tt.script)
			before, _ := b.Topology("/")
			if tt.vhostOff {
				b.DeleteVHost("/")
			}
			err := sets.Destroy(t.Context(), remembered, tt.force)
			after, _ := b.Topology("/")
			if tt.refused != "" {
				var held *delayset.HoldsMessagesError
				if !errors.As(err, &held) || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("Destroy = %v, want a refusal naming %q", err, tt.refused)
				}
				if len(after.Queues) != len(before.Queues) || len(after.Exchanges) != len(before.Exchanges) || len(after.Bindings) != len(before.Bindings) {
					t.Errorf("a refused destroy changed the set: %d/%d/%d objects, was %d/%d/%d", len(after.Exchanges), len(after.Queues),
						len(after.Bindings), len(before.Exchanges), len(before.Queues), len(before.Bindings))
				}
				if changes := applied(b); len(changes) > 0 {
					t.Errorf("a refused destroy applied %d changes", len(changes))
				}
				return
			}
			if err != nil {
				t.Fatalf("Destroy = %v", err)
			}
			if len(after.Queues)+len(after.Exchanges)+len(after.Bindings) > 0 {
				t.Errorf("after Destroy the broker holds %v", after)
			}
			if calls := b.CallsOf(brokertest.MethodHeldMessages); tt.force && len(calls) > 0 {
				t.Errorf("a forced destroy counted messages: %+v", calls)
			}
		})
	}
}

// TestDestroyReadsWhatThePlanDoesNotName: a state whose last refresh showed
// an object its plan does not name (a stray queue bound from the set) is
// read before the destroy, so the stray goes too; a state that shows only
// the plan is not.
func TestDestroyReadsWhatThePlanDoesNotName(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	b, _, sets, remembered := created(t, spec)
	stray := topology.Queue{Name: "delay.level.99", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
	bound := topology.Binding{Source: remembered.Shown.Exchanges[0].Name, Destination: stray.Name,
		DestinationType: topology.DestinationQueue, RoutingKey: "#.stray"}
	b.Declare(topology.Topology{VHost: "/", Queues: []topology.Queue{stray}, Bindings: []topology.Binding{bound}})
	remembered.Shown.Queues = append(remembered.Shown.Queues, stray)
	remembered.Shown.Bindings = append(remembered.Shown.Bindings, bound)
	if err := sets.Destroy(t.Context(), remembered, false); err != nil {
		t.Fatal(err)
	}
	if after, _ := b.Topology("/"); len(after.Queues) > 0 {
		t.Errorf("the destroy left %v", queueNames(after))
	}
	if len(b.CallsOf(brokertest.MethodReadSetNamed)) != 1 {
		t.Errorf("reads: %+v; want one read of the set by name", b.Calls())
	}

	b, _, sets, remembered = created(t, spec)
	if err := sets.Destroy(t.Context(), remembered, false); err != nil {
		t.Fatal(err)
	}
	if reads := len(b.CallsOf(brokertest.MethodReadSetNamed)) + len(b.CallsOf(brokertest.MethodReadSetOf)); reads != 0 {
		t.Errorf("a state showing only its plan was read %d times before its destroy", reads)
	}
}

// switched is an update of spec's set to classic queues: a new generation
// beside the quorum one.
func switched(t *testing.T, spec topology.Spec) topology.Spec {
	t.Helper()
	classic := spec
	classic.QueueType, classic.DeadLetterStrategy = topology.QueueTypeClassic, topology.AtMostOnce
	next, err := topology.NextGeneration(classic, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if next.Generation == spec.Generation {
		t.Fatalf("a change of queue type kept generation %d", next.Generation)
	}
	return next
}

func TestUpdate(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	old := spec.CurrentGeneration()
	level := old.Queues(spec.Name)[0]
	tests := []struct {
		name         string
		script       brokertest.Messages
		wait         time.Duration
		wantDraining bool
		wantWarning  string
	}{
		{name: "the old generation is empty: deleted once its statistics have settled", wait: 30 * time.Second, wantDraining: false},
		{name: "no wait: the generation just switched from is kept until its statistics settle", wantDraining: true},
		{name: "it holds messages past the wait: it drains on",
			script: brokertest.Messages{Counted: []int64{2}, Held: []int64{2}}, wait: 30 * time.Second, wantDraining: true},
		{name: "it empties within the wait: deleted",
			script: brokertest.Messages{Counted: []int64{2, 2, 1, 0}, Held: []int64{0}}, wait: 30 * time.Second, wantDraining: false},
		{name: "the statistics miss a message the exact count finds: kept",
			script: brokertest.Messages{Counted: []int64{0}, Held: []int64{1}}, wait: 30 * time.Second, wantDraining: true},
		{name: "a message arrives between the count and the deletion: kept, with a warning",
			script: brokertest.Messages{Counted: []int64{0}, Held: []int64{0, 0, 1}}, wait: 30 * time.Second, wantDraining: true,
			wantWarning: "A Generation Still Drains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, c, sets, remembered := created(t, spec)
			b.Script("/", level, tt.script)
			start := c.Now()
			next := switched(t, spec)
			result, err := sets.Update(t.Context(), next, remembered, delayset.UpdateOptions{Wait: tt.wait})
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if draining := len(result.Draining) > 0; draining != tt.wantDraining {
				t.Fatalf("after the update the set drains %v, want draining = %v", result.Draining, tt.wantDraining)
			}
			after, _ := b.Topology("/")
			_, holds := slices.BinarySearch(slices.Sorted(slices.Values(queueNames(after))), level)
			if holds != tt.wantDraining {
				t.Errorf("the old generation's queue %s on the broker: %v, want %v", level, holds, tt.wantDraining)
			}
			if tt.wantDraining && (result.Draining[0].Number != old.Number || result.Counts == nil) {
				t.Errorf("draining %+v with counts %v; want generation %d counted", result.Draining, result.Counts, old.Number)
			}
			if !result.SwitchedAt.Equal(start) {
				t.Errorf("SwitchedAt = %v, want the switch's time %v", result.SwitchedAt, start)
			}
			if waited := c.Now().Sub(start); !tt.wantDraining && waited < broker.StatisticsLag {
				t.Errorf("the generation switched from was deleted %s after the switch, before its statistics settled (%s)", waited, broker.StatisticsLag)
			}
			if waited := c.Now().Sub(start); waited > tt.wait+time.Second {
				t.Errorf("the update waited %s on the clock, past its wait (%s)", waited, tt.wait)
			}
			var warned []string
			for _, w := range result.Warnings {
				warned = append(warned, w.Summary)
			}
			if tt.wantWarning != "" != slices.Contains(warned, tt.wantWarning) || (tt.wantWarning == "" && len(warned) > 0) {
				t.Errorf("warnings %v, want %q", warned, tt.wantWarning)
			}
			for _, q := range next.CurrentGeneration().Queues(next.Name) {
				if _, ok := slices.BinarySearch(slices.Sorted(slices.Values(queueNames(after))), q); !ok {
					t.Errorf("the new generation's queue %s is missing", q)
				}
			}
		})
	}
}

// TestUpdateKeepsWhatTheStateLostTrackOf: a generation the broker holds
// and the state does not (an apply cut off) is kept while it holds
// messages, and deleted once it does not.
func TestUpdateKeepsWhatTheStateLostTrackOf(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	next := switched(t, spec)
	b, _, sets, _ := created(t, spec)
	b.Script("/", spec.CurrentGeneration().Queues(spec.Name)[0], brokertest.Messages{Counted: []int64{4}, Held: []int64{4}})
	// The state knows nothing of generation 0's queues draining.
	result, err := sets.Update(t.Context(), next, delayset.Remembered{Spec: next}, delayset.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(result.Draining) != 1 || result.Draining[0].Number != spec.Generation {
		t.Fatalf("draining %+v, want generation %d", result.Draining, spec.Generation)
	}
	b.Script("/", spec.CurrentGeneration().Queues(spec.Name)[0], brokertest.Messages{})
	result, err = sets.Update(t.Context(), next, result.Remembered, delayset.UpdateOptions{})
	if err != nil || len(result.Draining) != 0 {
		t.Fatalf("the next update = %+v, %v; want the emptied generation deleted", result.Draining, err)
	}
}

// TestUpdateRefusesToRedeclareALibraryQueueHoldingMessages: a library's
// queues have the library's names, so a change of their queue type
// deletes and declares each again: refused while one holds messages,
// naming the layout, and nothing changes.
func TestUpdateRefusesToRedeclareALibraryQueueHoldingMessages(t *testing.T) {
	spec, err := topology.Resolve(topology.Spec{Name: "celery", VHost: "/", Layout: topology.LayoutCelery, QueueType: topology.QueueTypeQuorum})
	if err != nil {
		t.Fatal(err)
	}
	b, _, sets, remembered := created(t, spec)
	before, _ := b.Topology("/")
	queue := before.Queues[0].Name
	b.Script("/", queue, brokertest.Messages{Counted: []int64{1}, Held: []int64{1}})
	classic := spec
	classic.QueueType, classic.DeadLetterStrategy = topology.QueueTypeClassic, topology.AtMostOnce
	next, err := topology.NextGeneration(classic, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sets.Update(t.Context(), next, remembered, delayset.UpdateOptions{})
	var held *delayset.HoldsMessagesError
	if !errors.As(err, &held) || held.RedeclaredIn != topology.LayoutCelery || !strings.Contains(err.Error(), queue) {
		t.Fatalf("Update = %v, want a refusal naming %s and the celery layout", err, queue)
	}
	var stage *delayset.StageError
	if !errors.As(err, &stage) || stage.Stage != delayset.Applying {
		t.Errorf("the refusal's stage: %v, want Applying", err)
	}
	after, _ := b.Topology("/")
	if len(after.Queues) != len(before.Queues) || len(applied(b)) > 0 {
		t.Errorf("a refused update changed the set: %d changes applied", len(applied(b)))
	}
}

func TestRefresh(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	t.Run("a set with no object left is gone", func(t *testing.T) {
		b, _, sets, remembered := created(t, spec)
		if err := sets.Destroy(t.Context(), remembered, false); err != nil {
			t.Fatal(err)
		}
		if _, found, err := sets.Refresh(t.Context(), remembered); found || err != nil {
			t.Errorf("Refresh = found %v, %v; want gone", found, err)
		}
		b.DeleteVHost("/")
		if _, found, err := sets.Refresh(t.Context(), remembered); found || err != nil {
			t.Errorf("Refresh of a vhost gone = found %v, %v; want gone", found, err)
		}
	})
	t.Run("an unchanged set reads back as planned, by name", func(t *testing.T) {
		b, _, sets, remembered := created(t, spec)
		result, found, err := sets.Refresh(t.Context(), remembered)
		if err != nil || !found {
			t.Fatalf("Refresh = %v, %v", found, err)
		}
		if got, want := topology.Lines(result.Set.Queues), topology.Lines(remembered.Shown.Queues); got != want {
			t.Errorf("queues read back\n%s\nwant\n%s", got, want)
		}
		if reads := b.CallsOf(brokertest.MethodReadSetNamed); len(reads) != 1 {
			t.Errorf("reads by name: %d, want 1", len(reads))
		}
		if len(result.DriftedHolding) > 0 || len(result.Draining) > 0 {
			t.Errorf("drift %v, draining %v; want none", result.DriftedHolding, result.Draining)
		}
	})
	t.Run("a drifted queue holding messages is noted; an empty one is not", func(t *testing.T) {
		for _, held := range []int64{0, 5} {
			b, _, sets, remembered := created(t, spec)
			level := spec.CurrentGeneration().Queues(spec.Name)[1]
			actual, _ := b.Topology("/")
			drifted := topology.Topology{VHost: "/"}
			for _, q := range actual.Queues {
				if q.Name == level {
					q.Arguments.MessageTTL += 1000
					drifted.Queues = append(drifted.Queues, q)
				}
			}
			if err := b.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &drifted.Queues[0]}}, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
				t.Fatal(err)
			}
			b.Declare(drifted)
			b.Script("/", level, brokertest.Messages{Held: []int64{held}})
			result, _, err := sets.Refresh(t.Context(), remembered)
			if err != nil {
				t.Fatal(err)
			}
			if want := held > 0; (len(result.DriftedHolding) == 1 && result.DriftedHolding[0] == level) != want {
				t.Errorf("with %d messages: drifted and holding %v, want %s noted: %v", held, result.DriftedHolding, level, want)
			}
		}
	})
	t.Run("a generation an apply cut off began is followed", func(t *testing.T) {
		next := switched(t, spec)
		b, _, sets, remembered := created(t, spec)
		// The new generation's objects, declared as a cut-off update left them.
		planned, err := topology.PlanGenerations(next, []topology.Generation{spec.CurrentGeneration()})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Apply(t.Context(), "/", topology.Diff(planned, mustRead(t, b, spec)), broker.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		result, found, err := sets.Refresh(t.Context(), remembered)
		if err != nil || !found {
			t.Fatalf("Refresh = %v, %v", found, err)
		}
		if result.Spec.Generation != next.Generation || len(result.Draining) != 1 || result.Draining[0].Number != spec.Generation {
			t.Errorf("refreshed generation %d draining %+v; want %d with %d draining", result.Spec.Generation, result.Draining, next.Generation, spec.Generation)
		}
	})
}

func mustRead(t *testing.T, b *brokertest.Broker, spec topology.Spec) topology.Topology {
	t.Helper()
	actual, err := b.ReadSetOf(context.Background(), spec.VHost, spec.Name, spec.Layout)
	if err != nil {
		t.Fatal(err)
	}
	return actual
}

func TestImport(t *testing.T) {
	for _, spec := range []topology.Spec{
		resolved(t, topology.QueueTypeQuorum),
		resolved(t, topology.QueueTypeClassic),
	} {
		b, _, sets, _ := created(t, spec)
		_ = b
		for _, layout := range []topology.Layout{"", topology.LayoutDefault} {
			result, found, err := sets.Import(t.Context(), "/", "delay", layout)
			if err != nil || !found {
				t.Fatalf("Import(%q) = %v, %v", layout, found, err)
			}
			if got := result.Spec; got.Levels != spec.Levels || got.QueueType != spec.QueueType || got.Resolution != spec.Resolution ||
				got.Generation != spec.Generation || got.Layout.OrDefault() != spec.Layout.OrDefault() {
				t.Errorf("Import(%q) inferred %+v, want %+v", layout, got, spec)
			}
		}
	}
	t.Run("objects that explain no set", func(t *testing.T) {
		b := brokertest.New("/")
		b.Declare(topology.Topology{VHost: "/", Queues: []topology.Queue{{Name: "delay.level.07"}}})
		_, _, err := (delayset.Sets{Broker: b}).Import(t.Context(), "/", "delay", "")
		var importErr *delayset.ImportError
		if !errors.As(err, &importErr) {
			t.Errorf("Import = %v, want an ImportError", err)
		}
	})
	t.Run("nothing to import", func(t *testing.T) {
		if _, found, err := (delayset.Sets{Broker: brokertest.New("/")}).Import(t.Context(), "/", "delay", ""); found || err != nil {
			t.Errorf("Import = %v, %v; want not found", found, err)
		}
	})
}
