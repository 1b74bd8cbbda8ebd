package main

import (
	"fmt"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// unrelatedExchanges is how many topic exchanges the unrelated bindings
// come from.
const unrelatedExchanges = 50

// unrelatedObjects is the busy vhost: queues bound from a few topic exchanges,
// some named like a set's queues but for case or a suffix, the hardest neighbours.
func unrelatedObjects(vhost string, queues, bindings int) topology.Topology {
	t := topology.Topology{VHost: vhost}
	for i := range unrelatedExchanges {
		t.Exchanges = append(t.Exchanges, topology.Exchange{Name: fmt.Sprintf("noise.x.%02d", i), Type: topology.ExchangeTopic})
	}
	sizes := []int{8, 16, 32}
	for i := range queues {
		k := i / 50
		set, level := sizes[k%len(sizes)], k/len(sizes)%100
		var name string
		switch i % 50 {
		case 0:
			name = fmt.Sprintf("BENCH-N%d.LEVEL.%02d", set, level)
		case 1:
			name = fmt.Sprintf("bench-n%d.level.%02d.noise", set, level)
		default:
			name = fmt.Sprintf("noise.q.%05d", i)
		}
		t.Queues = append(t.Queues, topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}})
	}
	for j := range bindings {
		queue := t.Queues[j%queues]
		t.Bindings = append(t.Bindings, topology.Binding{
			Source:          t.Exchanges[(j/queues+j)%unrelatedExchanges].Name,
			Destination:     queue.Name,
			DestinationType: topology.DestinationQueue,
			RoutingKey:      fmt.Sprintf("noise.%d", j),
		})
	}
	return t
}
