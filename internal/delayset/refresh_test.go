package delayset_test

import (
	"context"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

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
