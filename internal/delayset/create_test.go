package delayset_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

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

// TestDeclaredMarksOutliveTheRun: the log marks of the quorum queues that
// Create declared are remembered, kept by a refresh, and handed to the
// broker of a later run before its deletions count.
func TestDeclaredMarksOutliveTheRun(t *testing.T) {
	spec := resolved(t, topology.QueueTypeQuorum)
	b, _, _, remembered := created(t, spec)
	actual, _ := b.Topology("/")
	quorum := 0
	for _, q := range actual.Queues {
		if q.Arguments.QueueType == topology.QueueTypeQuorum {
			quorum++
		}
	}
	if quorum == 0 || len(remembered.Declared) != quorum {
		t.Fatalf("Create remembers %d marks, want one for each of the %d quorum queues", len(remembered.Declared), quorum)
	}
	later := brokertest.New("/")
	later.Declare(actual)
	refreshed, found, err := delayset.Sets{Broker: later, Clock: newClock()}.Refresh(t.Context(), remembered)
	if err != nil || !found || !maps.Equal(refreshed.Declared, remembered.Declared) {
		t.Fatalf("Refresh() kept marks %v, found %v, %v; want %v", refreshed.Declared, found, err, remembered.Declared)
	}
	last := brokertest.New("/")
	last.Declare(actual)
	if err := (delayset.Sets{Broker: last, Clock: newClock()}).Destroy(t.Context(), refreshed.Remembered, false); err != nil {
		t.Fatal(err)
	}
	if got := last.DeclaredMarks("/", actual.QueueNames()); !maps.Equal(got, remembered.Declared) {
		t.Errorf("the destroying broker knew marks %v, want %v", got, remembered.Declared)
	}
}
