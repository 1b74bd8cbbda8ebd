package delayset_test

import (
	"errors"
	"slices"
	"testing"

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
