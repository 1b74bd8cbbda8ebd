package provider

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// testNeighbour is one set of a neighbours test: its Terraform resource
// name, set name and levels.
type testNeighbour struct {
	resource string
	name     string
	levels   int
	// force lets the test's destroy delete the messages the test parks in it.
	force bool
}

func (n testNeighbour) address() string { return "rabbitmq_delay_queue_set." + n.resource }

func (n testNeighbour) spec() topology.Spec {
	return topology.Spec{Name: n.name, VHost: "/", Levels: n.levels, Resolution: time.Second}
}

func (n testNeighbour) config() string {
	return fmt.Sprintf("resource \"rabbitmq_delay_queue_set\" %q {\n  name          = %q\n  levels        = %d\n  force_destroy = %t\n}\n",
		n.resource, n.name, n.levels, n.force)
}

func testNeighboursConfig(sets ...testNeighbour) string {
	config := ""
	for _, set := range sets {
		config += set.config()
	}
	return config
}

// testCheckNeighbours asks the broker that each present set is exactly its
// plan and nothing of each absent set remains.
func testCheckNeighbours(client *broker.Client, present, absent []testNeighbour) resource.TestCheckFunc {
	var checks []resource.TestCheckFunc
	for _, set := range present {
		checks = append(checks, testCheckSetMatchesPlan(client, set.spec()))
	}
	for _, set := range absent {
		checks = append(checks, testCheckSetGone(client, set.name))
	}
	return resource.ComposeAggregateTestCheckFunc(checks...)
}

// testOwnObjectsOnly checks that each set's state lists only its own
// exchanges and queues: N+3 and N+1.
func testOwnObjectsOnly(sets ...testNeighbour) []statecheck.StateCheck {
	var checks []statecheck.StateCheck
	for _, set := range sets {
		checks = append(checks,
			statecheck.ExpectKnownValue(set.address(), tfjsonpath.New("exchanges"), knownLineCount(set.levels+3)),
			statecheck.ExpectKnownValue(set.address(), tfjsonpath.New("queues"), knownLineCount(set.levels+1)),
			statecheck.ExpectKnownValue(set.address(), tfjsonpath.New("queues"),
				knownLine(0, knownvalue.StringRegexp(regexp.MustCompile("^"+regexp.QuoteMeta(topology.Names(set.name).Level(0))+": ")))))
	}
	return checks
}

// testCheckParked checks that each set's unroutable queue holds exactly one
// message, the one the test parked there.
func testCheckParked(client *broker.Client, sets ...testNeighbour) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, set := range sets {
			queue := topology.Names(set.name).Unroutable()
			held, err := client.HeldMessages(context.Background(), "/", []string{queue})
			if err != nil {
				return err
			}
			if held[queue] != 1 {
				return fmt.Errorf("%s holds %d messages, want the 1 the test parked", queue, held[queue])
			}
		}
		return nil
	}
}

// TestAccDelayQueueSet_neighbours manages, in one vhost, sets whose names
// extend each other's: X and X.level (X's level queues are X.level.NN), Y
// and Y.out (Y's out exchange is Y.out). None reads, adopts or deletes
// another's objects: each reads back exactly its plan, imports to its own
// spec, and destroying the one leaves the other intact, messages and all.
// The four are created and destroyed in single applies, which Terraform
// runs concurrently.
func TestAccDelayQueueSet_neighbours(t *testing.T) {
	client := testBrokerClient(t)
	base := testSetName(t)
	x := testNeighbour{resource: "x", name: base, levels: 3}
	xLevel := testNeighbour{resource: "x_level", name: base + ".level", levels: 2, force: true}
	y := testNeighbour{resource: "y", name: base + "-a", levels: 2}
	yOut := testNeighbour{resource: "y_out", name: base + "-a.out", levels: 4, force: true}
	all := []testNeighbour{x, xLevel, y, yOut}
	for _, set := range all {
		testCleanupSet(t, "/", set.name)
	}
	longer := testNeighboursConfig(xLevel, yOut)
	shorter := testNeighboursConfig(x, y)
	ctx := context.Background()

	steps := []resource.TestStep{
		{
			Config:            testNeighboursConfig(all...),
			ConfigStateChecks: testOwnObjectsOnly(all...),
			Check: resource.ComposeAggregateTestCheckFunc(
				testCheckNeighbours(client, all, nil),
				func(*terraform.State) error {
					// A message the longer-named sets hold: the shorter ones' destroy must not see it.
					for _, set := range []testNeighbour{xLevel, yOut} {
						if err := testPublish(ctx, topology.Names(set.name).Ingest(), "not-a-delay"); err != nil {
							return err
						}
					}
					return nil
				},
			),
		},
		{Config: testNeighboursConfig(all...), PlanOnly: true},
	}
	for _, set := range all {
		steps = append(steps, resource.TestStep{
			Config:                  testNeighboursConfig(all...),
			ResourceName:            set.address(),
			ImportState:             true,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"force_destroy"}, // not on the broker: imports as false
		})
	}
	steps = append(steps,
		resource.TestStep{
			// X and Y go, although X.level and Y.out each hold a message.
			Config: longer,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(x.address(), plancheck.ResourceActionDestroy),
					plancheck.ExpectResourceAction(y.address(), plancheck.ResourceActionDestroy),
				},
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				testCheckNeighbours(client, []testNeighbour{xLevel, yOut}, []testNeighbour{x, y}),
				testCheckParked(client, xLevel, yOut),
			),
		},
		resource.TestStep{Config: longer, PlanOnly: true},
		resource.TestStep{
			// X and Y come back while X.level and Y.out go, in one apply.
			Config: shorter,
			Check:  testCheckNeighbours(client, []testNeighbour{x, y}, []testNeighbour{xLevel, yOut}),
		},
		resource.TestStep{Config: shorter, PlanOnly: true},
	)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckNeighbours(client, nil, all),
		Steps:                    steps,
	})
}

// testBarrier makes parties meet before each numbered step.
type testBarrier struct {
	parties int
	mu      sync.Mutex
	arrived map[int]int
	open    map[int]chan struct{}
}

func newTestBarrier(parties int) *testBarrier {
	return &testBarrier{parties: parties, arrived: map[int]int{}, open: map[int]chan struct{}{}}
}

// wait returns once every party has reached step, or fails the test after
// testHangSlack: the other party has failed or hung.
func (b *testBarrier) wait(t *testing.T, step int) {
	t.Helper()
	b.mu.Lock()
	if b.open[step] == nil {
		b.open[step] = make(chan struct{})
	}
	open := b.open[step]
	b.arrived[step]++
	if b.arrived[step] == b.parties {
		close(open)
	}
	b.mu.Unlock()
	select {
	case <-open:
	case <-time.After(testHangSlack):
		t.Fatalf("hung: the other apply did not reach step %d within %s", step, testHangSlack)
	}
}

// TestAccDelayQueueSet_parallelApplies runs two terraform applies at once,
// each with its own state and provider process, on neighbouring sets Z and
// Z.level: they create, grow and destroy their sets step by step together,
// and both converge. Two processes are what two pipelines sharing a vhost
// do; one configuration with two sets (TestAccDelayQueueSet_neighbours)
// shares one provider and its client.
func TestAccDelayQueueSet_parallelApplies(t *testing.T) {
	client := testBrokerClient(t)
	base := testSetName(t)
	z := testNeighbour{resource: "test", name: base, levels: 4}
	zLevel := testNeighbour{resource: "test", name: base + ".level", levels: 3}
	barrier := newTestBarrier(2)
	for _, set := range []testNeighbour{z, zLevel} {
		testCleanupSet(t, "/", set.name)
	}

	for _, set := range []testNeighbour{z, zLevel} {
		grown := set
		grown.levels += 2
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			meet := func(step int) func() { return func() { barrier.wait(t, step) } }
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             testCheckSetGone(client, set.name),
				Steps: []resource.TestStep{
					{PreConfig: meet(1), Config: set.config(), Check: testCheckSetMatchesPlan(client, set.spec())},
					{PreConfig: meet(2), Config: grown.config(), Check: testCheckSetMatchesPlan(client, grown.spec())},
					{
						// Both applies are done: each set is still exactly its plan.
						PreConfig: func() {
							barrier.wait(t, 3)
							for _, other := range []testNeighbour{z, zLevel} {
								other.levels += 2
								if err := testCheckSetMatchesPlan(client, other.spec())(nil); err != nil {
									t.Error(err)
								}
							}
						},
						Config:   grown.config(),
						PlanOnly: true,
					},
					{PreConfig: meet(4), Config: grown.config(), Destroy: true},
				},
			})
		})
	}
}
