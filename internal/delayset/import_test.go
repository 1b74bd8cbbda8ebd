package delayset_test

import (
	"errors"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

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
