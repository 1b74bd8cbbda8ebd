package delayset_test

import (
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
		// wantSettled: the generation switched from is deleted only once
		// its statistics have settled, as where it cannot be counted exactly
		// at once.
		wantSettled bool
		wantWarning []delayset.Reason
	}{
		{name: "the old generation is empty by the exact count: deleted at once", wait: 30 * time.Second, wantDraining: false},
		{name: "no wait: the old generation, empty by the exact count, is deleted all the same", wantDraining: false},
		{name: "the old generation is empty, and not counted exactly at once: deleted once its statistics have settled",
			script: brokertest.Messages{Inexact: "only statistics to come count it"}, wait: 30 * time.Second, wantDraining: false, wantSettled: true},
		{name: "no wait, not counted exactly at once: the generation just switched from is kept until its statistics settle",
			script: brokertest.Messages{Inexact: "only statistics to come count it"}, wantDraining: true},
		{name: "it holds messages past the wait: it drains on",
			script: brokertest.Messages{Counted: []int64{2}, Held: []int64{2}}, wait: 30 * time.Second, wantDraining: true},
		{name: "it holds a message, then empties within the wait: deleted once its statistics have settled",
			script: brokertest.Messages{Counted: []int64{2, 2, 1, 0}, Held: []int64{2, 0}}, wait: 30 * time.Second, wantDraining: false, wantSettled: true},
		{name: "the statistics miss a message the exact count finds: kept",
			script: brokertest.Messages{Counted: []int64{0}, Held: []int64{1}}, wait: 30 * time.Second, wantDraining: true},
		{name: "a message arrives between the count and the deletion: kept, with a warning",
			script: brokertest.Messages{Counted: []int64{0}, Held: []int64{0, 0, 1}}, wait: 30 * time.Second, wantDraining: true,
			wantWarning: []delayset.Reason{delayset.GenerationStillDrains}},
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
			if settled := c.Now().Sub(start) >= broker.StatisticsLag; !tt.wantDraining && settled != tt.wantSettled {
				t.Errorf("the generation switched from was deleted %s after the switch; want deleted once its statistics settled (%s): %v",
					c.Now().Sub(start), broker.StatisticsLag, tt.wantSettled)
			}
			if waited := c.Now().Sub(start); waited > tt.wait+time.Second {
				t.Errorf("the update waited %s on the clock, past its wait (%s)", waited, tt.wait)
			}
			var warned []delayset.Reason
			for _, w := range result.Warnings {
				warned = append(warned, w.Reason)
			}
			if !slices.Equal(warned, tt.wantWarning) {
				t.Errorf("warnings %v, want %v", warned, tt.wantWarning)
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
