package delayset_test

import (
	"testing"
	"time"

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
