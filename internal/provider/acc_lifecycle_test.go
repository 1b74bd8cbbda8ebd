package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
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

const testResource = "rabbitmq_delay_queue_set.test"

// testSetName is a fresh set name, so tests never see each other's objects.
func testSetName(t *testing.T) string {
	t.Helper()
	return "acc-" + strings.ToLower(acctest.RandString(8))
}

// testQueue declares a plain classic queue for routes to deliver to and
// deletes it when the test ends.
func testQueue(t *testing.T, client *broker.Client, name string) {
	t.Helper()
	ctx := context.Background()
	queue := topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}}
	create := []topology.Change{{Kind: topology.CreateQueue, Queue: &queue}}
	if err := client.Apply(ctx, "/", create, broker.ApplyOptions{}); err != nil {
		t.Fatalf("declaring the route's queue %s: %v", name, err)
	}
	t.Cleanup(func() {
		remove := []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}
		if err := client.Apply(ctx, "/", remove, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
			t.Errorf("deleting the route's queue %s: %v", name, err)
		}
	})
}

// testCheckSetGone asks the broker that nothing of the set remains in vhost "/".
func testCheckSetGone(client *broker.Client, name string) resource.TestCheckFunc {
	return testCheckSetGoneIn(client, "/", name)
}

// testCheckSetGoneIn asks the broker that nothing of the set remains in vhost.
func testCheckSetGoneIn(client *broker.Client, vhost, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		actual, err := client.ReadSet(context.Background(), vhost, name)
		if err != nil {
			return err
		}
		if n := len(actual.Exchanges) + len(actual.Queues) + len(actual.Bindings); n > 0 {
			return fmt.Errorf("%d objects of the set %q remain after destroy: %+v", n, name, actual)
		}
		return nil
	}
}

// testCheckSetMatchesPlan asks the broker that the set is exactly its plan.
func testCheckSetMatchesPlan(client *broker.Client, spec topology.Spec) resource.TestCheckFunc {
	return func(*terraform.State) error {
		desired, err := testPlan(spec)
		if err != nil {
			return err
		}
		actual, err := client.ReadSet(context.Background(), spec.VHost, spec.Name)
		if err != nil {
			return err
		}
		if changes := topology.Diff(desired, actual); len(changes) > 0 {
			return fmt.Errorf("the broker differs from the plan of %q by %d changes, the first: %s", spec.Name, len(changes), changes[0].Reason)
		}
		return nil
	}
}

func testSetConfig(name, attributes string) string {
	return fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "test" {
  name = %q
%s
}
`, name, attributes)
}

func TestAccDelayQueueSet_lifecycle(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testQueue(t, client, name+"-work")
	route := fmt.Sprintf(`
  route {
    destination = %q
    key         = "orders"
  }`, name+"-work")

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config: testSetConfig(name, `  max_delay = "5s"`+route),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionCreate),
						// The plan shows every binding before apply: 3+1 + 3·4/2 delay bindings, unroutable, route.
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("levels"), knownvalue.Int64Exact(3)),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLineCount(12)),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLine(0,
							knownvalue.StringExact(name+`.ingest -> queue `+name+`.level.02, key "#.1.*.*"`))),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("id"), knownvalue.StringExact("%2F/"+name)),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("max_delay_effective"), knownvalue.StringExact("7s")),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact(name+".ingest")),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("dead_letter_strategy"), knownvalue.StringExact("at-least-once")),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("queues"), knownLineCount(4)),
				},
				Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 3, Resolution: time.Second,
					Routes: []topology.Route{{Destination: name + "-work", Key: "orders"}}}),
			},
			{
				// The same set written with levels instead of max_delay: nothing to do.
				Config: testSetConfig(name, `  levels = 3`+route),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
			},
			{
				Config: testSetConfig(name, `  levels = 5`+route),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLineCount(23)),
					},
				},
				Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 5, Resolution: time.Second,
					Routes: []topology.Route{{Destination: name + "-work", Key: "orders"}}}),
			},
			{
				// Fewer levels and no route, in place: the empty level queues go.
				Config: testSetConfig(name, `  levels = 2`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 2, Resolution: time.Second}),
			},
			{
				// Another resolution, in place: a new generation with exchanges of
				// its own (the key format changes); the old one, empty, goes.
				Config: testSetConfig(name, "  levels = 2\n  resolution = \"500ms\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact(name+".ingest.g1")),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
				},
				Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 2, Resolution: 500 * time.Millisecond,
					Generation: 1, FormatGeneration: 1}),
			},
			{
				// The same resolution spelled otherwise changes nothing on the broker.
				Config: testSetConfig(name, "  levels = 2\n  resolution = \"0.5s\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
			},
		},
	})
}

func TestAccDelayQueueSet_drift(t *testing.T) {
	t.Parallel()
	client := testBrokerClient(t)
	name := testSetName(t)
	config := testSetConfig(name, `  levels = 3`)
	spec := topology.Spec{Name: name, VHost: "/", Levels: 3, Resolution: time.Second}
	names := topology.Names(name)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					// Behind Terraform's back: a binding and a queue go, a foreign binding comes.
					changes := []topology.Change{
						{Kind: topology.DeleteBinding, Binding: &topology.Binding{Source: names.Ingest(), Destination: names.Level(1),
							DestinationType: topology.DestinationQueue, RoutingKey: "#.0.1.*"}},
						{Kind: topology.DeleteQueue, Queue: &topology.Queue{Name: names.Level(0)}},
						{Kind: topology.CreateBinding, Binding: &topology.Binding{Source: names.Out(), Destination: names.Unroutable(),
							DestinationType: topology.DestinationQueue, RoutingKey: "stray"}},
					}
					if err := client.Apply(context.Background(), "/", changes, broker.ApplyOptions{}); err != nil {
						t.Fatalf("making drift: %v", err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				Check: testCheckSetMatchesPlan(client, spec),
			},
			{
				// A queue argument changed behind Terraform's back: the empty queue is re-created.
				PreConfig: func() {
					level := topology.Queue{Name: names.Level(2), Arguments: topology.QueueArguments{
						QueueType: topology.QueueTypeQuorum, MessageTTL: 1234}}
					changes := []topology.Change{
						{Kind: topology.DeleteQueue, Queue: &level},
						{Kind: topology.CreateQueue, Queue: &level},
					}
					if err := client.Apply(context.Background(), "/", changes, broker.ApplyOptions{}); err != nil {
						t.Fatalf("making drift: %v", err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				Check: testCheckSetMatchesPlan(client, spec),
			},
		},
	})
}

func TestAccDelayQueueSet_importProviderCreated(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testQueue(t, client, name+"-work")
	config := testSetConfig(name, fmt.Sprintf(`
  levels     = 4
  resolution = "250ms"
  queue_type = "quorum"
  dead_letter_strategy = "at-most-once"
  route {
    destination = %q
  }`, name+"-work"))

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: config},
			{
				ResourceName:      testResource,
				ImportState:       true,
				ImportStateVerify: true,
			},
		},
	})
}

// testHandMadeSet declares a classic set through the management API, as an
// operator would have before adopting Terraform, less the bindings in omit.
func testHandMadeSet(t *testing.T, client *broker.Client, name string, omit int) (topology.Spec, string) {
	t.Helper()
	testQueue(t, client, name+"-work")
	spec := topology.Spec{Name: name, VHost: "/", Levels: 3, Resolution: 2 * time.Second,
		QueueType: topology.QueueTypeClassic,
		Routes:    []topology.Route{{Destination: name + "-work", Key: "billing.eu"}}}
	desired, err := testPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	desired.Bindings = desired.Bindings[omit:]
	if err := client.Apply(context.Background(), "/", topology.Diff(desired, topology.Topology{VHost: "/"}), broker.ApplyOptions{}); err != nil {
		t.Fatalf("declaring the set by hand: %v", err)
	}
	config := testSetConfig(name, fmt.Sprintf(`
  levels     = 3
  resolution = "2s"
  queue_type = "classic"
  route {
    destination = %q
    key         = "billing.eu"
  }`, name+"-work"))
	return spec, config
}

// testCheckImportedSpec checks the spec Infer found for testHandMadeSet's set.
func testCheckImportedSpec(name string) resource.ImportStateCheckFunc {
	return func(states []*terraform.InstanceState) error {
		if len(states) != 1 {
			return fmt.Errorf("imported %d resources, want 1", len(states))
		}
		for attribute, want := range map[string]string{
			"levels": "3", "resolution": "2s", "queue_type": "classic", "dead_letter_strategy": "at-most-once",
			"route.0.key": "billing.eu", "route.0.destination": name + "-work", "ingest_exchange": name + ".ingest",
		} {
			if got := states[0].Attributes[attribute]; got != want {
				return fmt.Errorf("imported %s = %q, want %q", attribute, got, want)
			}
		}
		return nil
	}
}

// testImportHandMadeStep imports testHandMadeSet's set and keeps it in state.
func testImportHandMadeStep(name, config string) resource.TestStep {
	return resource.TestStep{
		Config:             config,
		ResourceName:       testResource,
		ImportState:        true,
		ImportStateId:      "%2F/" + name,
		ImportStatePersist: true,
		ImportStateCheck:   testCheckImportedSpec(name),
	}
}

func TestAccDelayQueueSet_importHandMade(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	spec, config := testHandMadeSet(t, client, name, 0)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			testImportHandMadeStep(name, config),
			{
				// The matching configuration plans no change at all.
				Config:   config,
				PlanOnly: true,
				Check:    testCheckSetMatchesPlan(client, spec),
			},
		},
	})
}

func TestAccDelayQueueSet_importPartial(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	spec, config := testHandMadeSet(t, client, name, 1) // without ingest → level 02
	missing := name + `.ingest -> queue ` + name + `.level.02, key "#.1.*.*"`

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			testImportHandMadeStep(name, config),
			{
				// The plan shows exactly what is missing, one binding, and apply adds it.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLine(0,
							knownvalue.StringExact(missing))),
					},
				},
				Check: testCheckSetMatchesPlan(client, spec),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

func TestAccDelayQueueSet_importBlock(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	config := testSetConfig(name, `  levels = 2`)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: config},
			{
				Config:          config,
				ResourceName:    testResource,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
			},
		},
	})
}

func TestAccDelayQueueSet_destroyKeepsMessages(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	names := topology.Names(name)
	ctx := context.Background()

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config: testSetConfig(name, `  levels = 4`),
				Check: func(*terraform.State) error {
					// Three messages park in the unroutable queue: nothing matches "not-a-delay".
					for range 3 {
						if err := testPublish(ctx, names.Ingest(), "not-a-delay"); err != nil {
							return err
						}
					}
					return testWaitForMessages(ctx, client, names.Unroutable(), 3)
				},
			},
			{
				Config:      testSetConfig(name, `  levels = 4`),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Delay Queues Hold Messages.*holds 3\s+message`),
			},
			{
				Config: testSetConfig(name, `  levels = 4`),
				Check: func(*terraform.State) error {
					// Waits: the first statistics of a new queue on RabbitMQ 4.3 may count
					// none of what a peek found, until their next sample.
					if err := testWaitForMessages(ctx, client, names.Unroutable(), 3); err != nil {
						return fmt.Errorf("after the refused destroy: %w", err)
					}
					return nil
				},
			},
			{
				Config: testSetConfig(name, "  levels = 4\n  force_destroy = true"),
			},
		},
	})
}

// A stray level the refresh found (declared behind Terraform's back, bound
// from the ingest exchange) holds a message: destroy, which deletes by name
// what the state plans, must see it too and refuse, not delete the
// exchanges around it. (A destroy with -refresh=false knows only the state.)
func TestAccDelayQueueSet_destroyKeepsStrayQueueMessages(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	names := topology.Names(name)
	ctx := context.Background()
	stray := topology.Queue{Name: names.Level(5), Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}}

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config: testSetConfig(name, `  levels = 3`),
				Check: func(*terraform.State) error {
					changes := []topology.Change{
						{Kind: topology.CreateQueue, Queue: &stray},
						{Kind: topology.CreateBinding, Binding: &topology.Binding{Source: names.Ingest(), Destination: stray.Name,
							DestinationType: topology.DestinationQueue, RoutingKey: "#.stray"}},
					}
					if err := client.Apply(ctx, "/", changes, broker.ApplyOptions{}); err != nil {
						return err
					}
					if err := testPublish(ctx, names.Ingest(), "orders.stray"); err != nil {
						return err
					}
					return testWaitForMessages(ctx, client, stray.Name, 1)
				},
				ExpectNonEmptyPlan: true, // the stray level is drift
			},
			{
				// terraform destroy refreshes first (the test framework's destroy does not).
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config:      testSetConfig(name, `  levels = 3`),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Delay Queues Hold Messages.*` + regexp.QuoteMeta(stray.Name) + `\s+holds\s+1\s+message`),
			},
			{
				PreConfig: func() {
					if err := testWaitForMessages(ctx, client, stray.Name, 1); err != nil {
						t.Fatalf("after the refused destroy: %v", err)
					}
					// Refused before anything changed: every planned object is still there.
					desired, err := testPlan(topology.Spec{Name: name, VHost: "/", Levels: 3, Resolution: time.Second})
					if err != nil {
						t.Fatal(err)
					}
					actual, err := client.ReadSet(ctx, "/", name)
					if err != nil {
						t.Fatal(err)
					}
					for _, change := range topology.Diff(desired, actual) {
						if change.Kind == topology.CreateExchange || change.Kind == topology.CreateQueue || change.Kind == topology.CreateBinding {
							t.Fatalf("after the refused destroy the set lacks what it planned: %s", change.Reason)
						}
					}
				},
				Config: testSetConfig(name, "  levels = 3\n  force_destroy = true"),
			},
		},
	})
}

// testWaitForMessages waits until CountedMessages counts want messages in
// the queue of vhost "/" (testWaitForCount).
func testWaitForMessages(ctx context.Context, client *broker.Client, queue string, want int64) error {
	return testWaitForCount(ctx, client, "/", queue, want)
}

// testWaitForCount waits until CountedMessages counts want messages in the
// queue: the statistics it reads are sampled, so they lag behind a publish,
// and it peeks only a queue they do not count yet, where a peek is no
// delivery; elsewhere (RabbitMQ 4.0–4.2) such a queue is uncounted until
// its first statistics come.
func testWaitForCount(ctx context.Context, client *broker.Client, vhost, queue string, want int64) error {
	deadline := time.Now().Add(testHangSlack)
	for {
		counts, err := client.CountedMessages(ctx, vhost, []string{queue})
		switch {
		case broker.IsUncounted(err):
		case err != nil:
			return err
		case counts[queue] == want:
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("hung: %s holds %d messages after %s, want %d (%v)", queue, counts[queue], testHangSlack, want, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// testWaitForStatistics waits until the statistics count want messages in
// the queue after a change to it: the statistics' lag first, then their
// count (testWaitForCount). Before the lag has passed, they may still show
// the queue as it was, or as it was a moment before the change, after a
// count that showed the change already (a peek's).
func testWaitForStatistics(client *broker.Client, vhost, queue string, want int64) error {
	time.Sleep(broker.StatisticsLag + 2*time.Second)
	return testWaitForCount(context.Background(), client, vhost, queue, want)
}

// testPublish publishes one persistent message with a literal routing key
// through the local broker's AMQP listener and waits for its confirm.
func testPublish(ctx context.Context, exchange, routingKey string) error {
	conn, err := messaging.Dial(messaging.URLFromEnv(), 10*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	// Levels and resolution only matter to keys the publisher encodes; this key is given as is.
	publisher, err := messaging.NewPublisher(conn, messaging.Set{IngestExchange: exchange, Levels: 1, Resolution: time.Second})
	if err != nil {
		return err
	}
	defer func() { _ = publisher.Close() }()
	_, err = publisher.PublishWithRoutingKey(ctx, routingKey, messaging.Message{ID: "kept"})
	return err
}

func TestAccDelayQueueSet_levelRemovalKeepsMessages(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	names := topology.Names(name)
	ctx := context.Background()
	levels5 := "  levels = 5\n  resolution = \"1m\""
	levels4 := "  levels = 4\n  resolution = \"1m\""

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config: testSetConfig(name, levels5),
				Check: func(*terraform.State) error {
					// 16 ticks: the message waits 16 min in level 04, the level the next step removes,
					// longer than the test takes on any machine however busy.
					key, err := topology.EncodeKey("", 16*time.Minute, 5, time.Minute)
					if err != nil {
						return err
					}
					return testPublish(ctx, names.Ingest(), key)
				},
			},
			{
				// Refused before anything changes, although the statistics have not seen the message yet.
				Config:      testSetConfig(name, levels4),
				ExpectError: regexp.MustCompile(`(?s)Delay Queues Hold Messages.*` + regexp.QuoteMeta(names.Level(4)) + `\s+holds\s+1\s+message`),
			},
			{
				Config: testSetConfig(name, levels5),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					held, err := client.HeldMessages(ctx, "/", []string{names.Level(4)})
					if err != nil {
						return err
					}
					if held[names.Level(4)] != 1 {
						return fmt.Errorf("after the refused update %s holds %d messages, want 1", names.Level(4), held[names.Level(4)])
					}
					return nil
				},
			},
			{
				Config: testSetConfig(name, levels4+"\n  force_destroy = true"),
				Check:  testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 4, Resolution: time.Minute}),
			},
		},
	})
}

// testPlan is topology.Plan of spec as the resource plans a new set of
// it, or a change that declares new queues (topology.NewSet).
func testPlan(spec topology.Spec) (topology.Topology, error) {
	resolved, err := topology.NewSet(spec)
	if err != nil {
		return topology.Topology{}, err
	}
	return topology.Plan(resolved)
}

// testModelOf is the model a plan or a refresh writes for a set of spec
// whose broker holds its plan, without the bindings of the routes gone:
// every argument resolved, nothing draining, no leaders read.
func testModelOf(t *testing.T, spec topology.Spec, gone ...topology.Route) delayQueueSetModel {
	t.Helper()
	resolved, err := topology.Resolve(spec)
	if err != nil {
		t.Fatal(err)
	}
	planned, err := topology.Plan(resolved)
	if err != nil {
		t.Fatal(err)
	}
	onBroker, err := topology.Plan(withRoutes(resolved, slices.DeleteFunc(slices.Clone(resolved.Routes), func(r topology.Route) bool { return slices.Contains(gone, r) })...))
	if err != nil {
		t.Fatal(err)
	}
	m := delayQueueSetModel{MigrationWait: types.StringValue("10s"), Draining: types.ListValueMust(drainingObjectType, nil),
		Leaders: types.MapNull(types.Int64Type), Members: types.MapNull(types.StringType)}
	m.Name, m.VHost = types.StringValue(spec.Name), types.StringValue(spec.VHost)
	setSpec(&m, resolved)
	setPlanned(&m, resolved, topology.Align(onBroker, planned))
	return m
}

// withRoutes is spec with routes instead of its own.
func withRoutes(spec topology.Spec, routes ...topology.Route) topology.Spec {
	spec.Routes = routes
	return spec
}
