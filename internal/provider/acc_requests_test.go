package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// requestCounter sums the management API requests of every client the
// provider under test builds: each terraform command configures its own.
type requestCounter struct {
	mu      sync.Mutex
	clients []*broker.Client
	mark    int64
}

func (c *requestCounter) add(client *broker.Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clients = append(c.clients, client)
}

func (c *requestCounter) total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum int64
	for _, client := range c.clients {
		sum += client.Requests()
	}
	return sum
}

// reset starts a new count; sinceReset is the requests made after it.
func (c *requestCounter) reset()            { c.mark = c.total() }
func (c *requestCounter) sinceReset() int64 { return c.total() - c.mark }

func (c *requestCounter) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"rabbitmq": providerserver.NewProtocol6WithError(&RabbitMQProvider{version: "test", clock: delayset.SystemClock{}, clientBuilt: c.add}),
	}
}

// TestAccDelayQueueSet_refreshRequests counts, through the provider's own
// clients, the requests of `terraform refresh` for a set of the most levels:
// 3N + 7, each object of the state read by name and each exchange's
// bindings listed (broker.Client.ReadSetNamed), and no more when the vhost
// fills with other objects, including ones whose names extend the set's or
// match it ignoring case.
func TestAccDelayQueueSet_refreshRequests(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	const levels = topology.MaxLevels
	counter := &requestCounter{}
	config := testSetConfig(name, fmt.Sprintf("  levels     = %d\n  resolution = \"100ms\"", levels))
	var alone int64

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: counter.factories(),
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig:    counter.reset,
				RefreshState: true,
				Check: func(*terraform.State) error {
					alone = counter.sinceReset()
					t.Logf("refresh of a set of %d levels: %d requests", levels, alone)
					if want := int64(3*levels + 7); alone != want {
						return fmt.Errorf("refresh made %d requests, want %d", alone, want)
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					testUnrelatedObjects(t, client, "/", name, 300)
					counter.reset()
				},
				RefreshState: true,
				Check: func(*terraform.State) error {
					crowded := counter.sinceReset()
					t.Logf("refresh among 300 unrelated queues and their bindings: %d requests", crowded)
					if crowded != alone {
						return fmt.Errorf("refresh made %d requests among unrelated objects, %d without; want the same", crowded, alone)
					}
					return nil
				},
			},
		},
	})
}

// TestAccDelayQueueSet_refreshRequestsLibraryLayout counts the requests of
// `terraform refresh` for a set of the nservicebus layout: 86, its 29
// exchanges read by name with their binding listings and its 28 queues by
// name, and no more when the vhost fills with objects whose names extend
// the library's or match them but for case.
func TestAccDelayQueueSet_refreshRequestsLibraryLayout(t *testing.T) {
	client, vhost, lc, _ := librarySetUp(t, "nservicebus")
	const want = 2*29 + 28
	counter := &requestCounter{}
	var alone int64
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: counter.factories(),
		CheckDestroy:             libraryCheckGone(client, lc, vhost),
		Steps: []resource.TestStep{
			{Config: libraryConfig(lc, vhost, "")},
			{
				PreConfig:    counter.reset,
				RefreshState: true,
				Check: func(*terraform.State) error {
					alone = counter.sinceReset()
					t.Logf("refresh of a set of the %s layout: %d requests", lc.layout, alone)
					if alone != want {
						return fmt.Errorf("refresh made %d requests, want %d", alone, want)
					}
					return nil
				},
			},
			{
				PreConfig: func() {
					testUnrelatedObjects(t, client, vhost, libraryLevel(lc.layout, 5), 120)
					counter.reset()
				},
				RefreshState: true,
				Check: func(*terraform.State) error {
					if crowded := counter.sinceReset(); crowded != alone {
						return fmt.Errorf("refresh made %d requests among unrelated objects, %d without; want the same", crowded, alone)
					}
					return nil
				},
			},
		},
	})
}

// testUnrelatedObjects declares in vhost n classic queues, each bound from
// amq.topic, and an exchange per four queues bound to one of them, all
// deleted when the test ends. Their names extend set, or match the names of
// its objects but for case (the management API's name filter ignores case).
func testUnrelatedObjects(t *testing.T, client *broker.Client, vhost, set string, n int) {
	t.Helper()
	var (
		create  []topology.Change
		queues  []topology.Queue
		exchs   []topology.Exchange
		binds   []topology.Binding
		classic = topology.QueueArguments{QueueType: topology.QueueTypeClassic}
	)
	for i := range n {
		var name string
		switch i % 3 {
		case 0:
			name = fmt.Sprintf("%s.level.%02d.other", set, i%topology.MaxLevels)
		case 1:
			name = fmt.Sprintf("%s.LEVEL.%02d", strings.ToUpper(set), i%topology.MaxLevels)
		case 2:
			name = fmt.Sprintf("other%s.ingest.%03d", set, i)
		}
		queues = append(queues, topology.Queue{Name: fmt.Sprintf("%s.q%03d", name, i), Arguments: classic})
		binds = append(binds, topology.Binding{Source: "amq.topic", Destination: queues[i].Name,
			DestinationType: topology.DestinationQueue, RoutingKey: "#"})
		if i%4 == 0 {
			exchs = append(exchs, topology.Exchange{Name: fmt.Sprintf("%s.OUT.%03d", strings.ToUpper(set), i), Type: topology.ExchangeTopic})
			binds = append(binds, topology.Binding{Source: exchs[len(exchs)-1].Name, Destination: queues[i].Name,
				DestinationType: topology.DestinationQueue, RoutingKey: "#"})
		}
	}
	for i := range exchs {
		create = append(create, topology.Change{Kind: topology.CreateExchange, Exchange: &exchs[i]})
	}
	for i := range queues {
		create = append(create, topology.Change{Kind: topology.CreateQueue, Queue: &queues[i]})
	}
	for i := range binds {
		create = append(create, topology.Change{Kind: topology.CreateBinding, Binding: &binds[i]})
	}
	remove := make([]topology.Change, 0, len(queues)+len(exchs))
	for i := range queues {
		remove = append(remove, topology.Change{Kind: topology.DeleteQueue, Queue: &queues[i]})
	}
	for i := range exchs {
		remove = append(remove, topology.Change{Kind: topology.DeleteExchange, Exchange: &exchs[i]})
	}
	t.Cleanup(func() {
		if err := client.Apply(context.Background(), vhost, remove, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
			t.Errorf("deleting the unrelated objects: %v", err)
		}
	})
	if err := client.Apply(context.Background(), vhost, create, broker.ApplyOptions{}); err != nil {
		t.Fatalf("declaring the unrelated objects: %v", err)
	}
}
