package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The group-size cluster: nodes of its own, apart from the node-loss
// test's (the script's nodes 7–9, which make bench-cluster also uses).
var groupSizeNodes = []int{7, 8, 9}

// The group-size set: radix 16, 2 digits of 100 ms, 0–25.5 s, so its 30
// TTL queues are equally busy.
const (
	groupSizeLevels     = 2
	groupSizeRadix      = 16
	groupSizeResolution = 100 * time.Millisecond
	groupSizeKey        = "orders"
	// Messages published before the change, and after it.
	groupSizeMessages = 300
)

// TestFaultClusterGroupSize applies a set with quorum_initial_group_size =
// 2 to a 3-node cluster through one node's management API: each TTL queue
// has 2 members, spread over the nodes (each node holds about a third of
// the replicas, the member pairs differ, more than one node leads), and
// placement and members show them as the broker does; the set imports
// clean; a change of the size to 3 while messages are in flight is a new
// generation whose queues the plan leaves to the apply, and every message,
// published before and after the change, arrives once, none early.
func TestFaultClusterGroupSize(t *testing.T) {
	requireFaults(t)
	nodes := startNodes(t, nodeConfig{}, groupSizeNodes...)
	client := brokerClient(t, nodes[0].ManagementURL)
	name := "faults-groups-" + strings.ToLower(acctest.RandString(6))
	routeQueue := name + ".work"
	declareQueue(t, client, routeQueue, topology.QueueTypeQuorum)
	// force_destroy: the statistics of a queue may count a message for some
	// seconds after it left, which a destroy right after the last
	// arrival would take for a message held (RabbitMQ 3.10.8).
	configOf := func(size int, forceDestroy bool) string {
		return fmt.Sprintf("%s\nresource \"rabbitmq_delay_queue_set\" \"test\" {\n  name = %q\n  levels = %d\n  radix = %d\n"+
			"  resolution = %q\n  quorum_initial_group_size = %d\n  force_destroy = %t\n  route {\n    destination = %q\n    key = %q\n  }\n}\n",
			plainProvider(nodes[0].ManagementURL), name, groupSizeLevels, groupSizeRadix, groupSizeResolution, size, forceDestroy, routeQueue, groupSizeKey)
	}
	config := func(size int) string { return configOf(size, true) }
	flight := &groupSizeFlight{t: t, nodes: nodes, name: name, arrivals: newLedger(), parked: newLedger()}
	t.Cleanup(flight.stop)
	members := func(queue string) tfjsonpath.Path { return tfjsonpath.New("members").AtMapKey(queue) }
	g1 := topology.Names(name).Generation(1)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
		Steps: []resource.TestStep{
			{
				Config: config(2),
				Check:  resource.ComposeTestCheckFunc(checkReplicas(t, client, name, 0, 2, len(nodes)), checkMembersShown(client, name)),
			},
			{ResourceName: spreadResource, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"force_destroy"}},
			// An import block with the configuration of an imported set plans no change.
			{Config: configOf(2, false), ResourceName: spreadResource, ImportState: true, ImportStateKind: resource.ImportBlockWithID},
			{
				PreConfig: func() { flight.publish("before") },
				Config:    config(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(spreadResource, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(spreadResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
					plancheck.ExpectUnknownValue(spreadResource, members(g1.Queue(groupSizeRadix, 1, 15))),
					plancheck.ExpectKnownValue(spreadResource, members(topology.Names(name).Unroutable()), knownvalue.NotNull()),
				}},
				Check: resource.ComposeTestCheckFunc(checkReplicas(t, client, name, 1, 3, len(nodes)), checkMembersShown(client, name),
					func(*terraform.State) error { flight.publish("after"); return flight.arrived() }),
				// By then the old generation is empty, and the next apply deletes it.
				ExpectNonEmptyPlan: true,
			},
			{
				// The old generation, empty now, goes with the next apply.
				Config:            config(3),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(spreadResource, tfjsonpath.New("draining"), knownvalue.ListSizeExact(0))},
			},
			{Config: config(3), PlanOnly: true},
		},
	})
}

// checkReplicas checks, with a fresh read of the broker, the members of
// the TTL queues of generation of set name: size of the cluster's nodes
// each, all online; and, when size is fewer than nodes, spread: each node
// holds from three to five quarters of its share of the replicas, not every
// queue has the same members, and more than one node leads. Through one
// node alone, that node would hold a replica of every queue.
func checkReplicas(t *testing.T, client *broker.Client, name string, generation, size, nodes int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		queues := (topology.Generation{Number: generation, Levels: groupSizeLevels, Radix: groupSizeRadix}).Queues(name)
		placements, err := client.ReadPlacements(context.Background(), "/", queues)
		if err != nil {
			return err
		}
		perNode, leaders, pairs := map[string]int{}, map[string]int{}, map[string]bool{}
		for _, q := range queues {
			p, ok := placements[q]
			if !ok || len(p.Members) != size || len(p.Online) != size || p.Leader == "" {
				return fmt.Errorf("%s: leader %q, members %v, online %v; want %d members, all online", q, p.Leader, p.Members, p.Online, size)
			}
			for _, n := range p.Members {
				perNode[n]++
			}
			leaders[p.Leader]++
			pairs[strings.Join(p.Members, " ")] = true
		}
		t.Logf("generation %d, %d members each: replicas per node %v, leaders %v, %d member sets", generation, size, perNode, leaders, len(pairs))
		if size >= nodes {
			return nil
		}
		share := len(queues) * size / nodes
		for _, count := range perNode {
			if len(perNode) != nodes || count < share*3/4 || count > share*5/4 {
				return fmt.Errorf("replicas per node %v: want each of the %d nodes to hold about %d", perNode, nodes, share)
			}
		}
		if len(pairs) < 2 || len(leaders) < 2 {
			return fmt.Errorf("%d member sets and leaders %v: want the queues spread", len(pairs), leaders)
		}
		return nil
	}
}

// checkMembersShown checks that the state's members and placement say
// what the broker says of every queue of the set.
func checkMembersShown(client *broker.Client, name string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		actual, err := client.ReadSet(context.Background(), "/", name)
		if err != nil {
			return err
		}
		placements := client.Placements("/", actual.QueueNames())
		attributes := s.RootModule().Resources[spreadResource].Primary.Attributes
		// members has the queues of queues; a draining generation's are in
		// placement only.
		for line := range strings.Lines(attributes["queues"]) {
			queue := topology.LineName(strings.TrimSuffix(line, "\n"))
			p, ok := placements[queue]
			if !ok {
				return fmt.Errorf("the broker has no queue %s", queue)
			}
			if got, want := attributes["members."+queue], strings.Join(p.Members, " "); got != want {
				return fmt.Errorf("members of %s: %q, the broker says %q", queue, got, want)
			}
			if line := queue + ": leader " + p.Leader + ", members " + strings.Join(p.Members, " "); !strings.Contains(attributes["placement"], line) {
				return fmt.Errorf("placement lacks %q:\n%s", line, attributes["placement"])
			}
		}
		return nil
	}
}

// groupSizeFlight is the messages sent through the set while its size
// changes, and the consumers of its route's queue and parking lot, on
// every node.
type groupSizeFlight struct {
	t                *testing.T
	nodes            []*node
	name             string
	arrivals, parked *ledger
	sent             []messaging.Message
	stops            []func()
}

// publish starts the consumers the first time, then sends
// groupSizeMessages messages of delays over the whole range, through the
// nodes in turn, and returns once each is confirmed.
func (f *groupSizeFlight) publish(batch string) {
	var urls []string
	for _, n := range f.nodes {
		urls = append(urls, n.AMQPURL)
	}
	if f.stops == nil {
		f.stops = append(f.stops, consume(f.t, urls, f.name+".work", f.name+"-", f.arrivals),
			consume(f.t, urls, topology.Names(f.name).Unroutable(), f.name+"-", f.parked))
	}
	set := messaging.Set{IngestExchange: topology.Names(f.name).Ingest(), Levels: groupSizeLevels, Radix: groupSizeRadix, Resolution: groupSizeResolution}
	maxDelay := time.Duration(groupSizeRadix*groupSizeRadix-1) * groupSizeResolution
	delays := spreadDelays(groupSizeMessages, groupSizeResolution, maxDelay, groupSizeResolution, rand.New(rand.NewPCG(uint64(len(f.sent)), 38)))
	ctx, cancel := context.WithTimeout(f.t.Context(), time.Minute)
	defer cancel()
	for i, url := range urls {
		conn, err := messaging.Dial(url, 10*time.Second)
		if err != nil {
			f.t.Fatal(err)
		}
		part := delays[i*len(delays)/len(urls) : (i+1)*len(delays)/len(urls)]
		sent, err := publishDelayed(ctx, conn, set, groupSizeKey, fmt.Sprintf("%s-%s-%d-", f.name, batch, i), part)
		_ = conn.Close()
		if err != nil {
			f.t.Fatal(err)
		}
		f.sent = append(f.sent, sent...)
	}
	f.t.Logf("published %d messages %s the change, delays up to %s", len(delays), batch, maxDelay)
}

// arrived waits for every message sent (calling one lost lossWindow after
// the last was due) and says what went wrong: one lost, parked, early or
// delivered twice.
func (f *groupSizeFlight) arrived() error {
	ctx, cancel := context.WithDeadline(f.t.Context(), lastDue(f.sent).Add(lossWindow))
	defer cancel()
	_ = f.arrivals.waitForAll(ctx, f.sent) // what is missing counts below
	f.arrivals.settle(f.t.Context(), 2*time.Second)
	row := f.arrivals.row("quorum_initial_group_size 2 → 3", f.sent, f.parked, 0)
	f.t.Logf("%d messages: %d lost, %d parked, %d duplicated, %d early; lateness p99 %s, max %s",
		row.Messages, row.Lost, row.Parked, row.Duplicated, row.Early, row.P99, row.Max)
	if row.Lost+row.Parked+row.Duplicated+row.Early > 0 || row.Messages != 2*groupSizeMessages {
		return fmt.Errorf("of %d messages %d lost, %d parked, %d duplicated, %d early; want %d, all arrived once, none early",
			row.Messages, row.Lost, row.Parked, row.Duplicated, row.Early, 2*groupSizeMessages)
	}
	return nil
}

func (f *groupSizeFlight) stop() {
	for _, stop := range f.stops {
		stop()
	}
}
