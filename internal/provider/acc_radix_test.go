package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestDelayQueueSet_modifyPlanRadix calls ModifyPlan with a prior state and
// a plan that differ only in radix: a change replaces nothing but starts a
// new generation with exchanges of its own (the key format changes), whose
// draining predecessor is known after apply; and a state written before
// radix existed (null) is a binary set, so that upgrading the provider
// changes nothing.
func TestDelayQueueSet_modifyPlanRadix(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		state          types.Int64
		plan           int64
		wantGeneration int64
	}{
		"unchanged binary":             {state: types.Int64Value(2), plan: 2},
		"unchanged radix 16":           {state: types.Int64Value(16), plan: 16},
		"state from before radix":      {state: types.Int64Null(), plan: 2},
		"binary to radix 16":           {state: types.Int64Value(2), plan: 16, wantGeneration: 1},
		"radix 16 to binary":           {state: types.Int64Value(16), plan: 2, wantGeneration: 1},
		"state from before radix to 4": {state: types.Int64Null(), plan: 4, wantGeneration: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			schema := delayQueueSetSchema()
			model := func(radix types.Int64) tfsdk.Plan {
				m := testModelOf(t, topology.Spec{Name: "delay", VHost: "/", Levels: 2, Radix: int(radix.ValueInt64())})
				m.Radix = radix
				plan := tfsdk.Plan{Schema: schema}
				if diags := plan.Set(ctx, &m); diags.HasError() {
					t.Fatal(diags)
				}
				return plan
			}
			plan, prior := model(types.Int64Value(tc.plan)), model(tc.state)
			req := fwresource.ModifyPlanRequest{
				Config: tfsdk.Config{Schema: schema, Raw: plan.Raw},
				Plan:   plan,
				State:  tfsdk.State{Schema: schema, Raw: prior.Raw},
			}
			resp := fwresource.ModifyPlanResponse{Plan: plan}
			(&DelayQueueSetResource{data: &providerData{clock: delayset.SystemClock{}}}).ModifyPlan(ctx, req, &resp) // configured, as the framework calls it
			if resp.Diagnostics.HasError() {
				t.Fatal(resp.Diagnostics)
			}
			if len(resp.RequiresReplace) > 0 {
				t.Errorf("ModifyPlan replaces the set for %v", resp.RequiresReplace)
			}
			var got delayQueueSetModel
			if diags := resp.Plan.Get(ctx, &got); diags.HasError() {
				t.Fatal(diags)
			}
			if got.Radix.ValueInt64() != tc.plan || got.Levels.ValueInt64() != 2 {
				t.Errorf("the plan says radix %s and %s levels, want radix %d and 2 levels", got.Radix, got.Levels, tc.plan)
			}
			changed := tc.wantGeneration > 0
			if got.Generation.ValueInt64() != tc.wantGeneration || got.ExchangeGeneration.ValueInt64() != tc.wantGeneration ||
				got.Draining.IsUnknown() != changed {
				t.Errorf("the plan says generation %s with the exchanges of %s, draining %s; want generation %d with its own, draining known: %t",
					got.Generation, got.ExchangeGeneration, got.Draining, tc.wantGeneration, !changed)
			}
			if want := topology.Names("delay").Generation(int(tc.wantGeneration)).Ingest(); got.IngestExchange.ValueString() != want {
				t.Errorf("the plan's ingest exchange is %s, want %s", got.IngestExchange, want)
			}
		})
	}
}

// The radix-16 sets of the acceptance tests: 2 hex digits hold 0 to 255 ticks.
const (
	radix16Levels = 2
	radix16       = 16
)

// testRadix16Spec is the planner's spec of the radix-16 set with a route.
func testRadix16Spec(name string) topology.Spec {
	return topology.Spec{Name: name, VHost: "/", Levels: radix16Levels, Radix: radix16, Resolution: time.Second,
		Routes: []topology.Route{{Destination: name + "-work", Key: "orders"}}}
}

func testRadix16Config(name string) string {
	return testSetConfig(name, fmt.Sprintf(`
  levels     = %d
  radix      = %d
  resolution = "1s"
  route {
    destination = %q
    key         = "orders"
  }`, radix16Levels, radix16, name+"-work"))
}

// testCheckRadix16Queue asks the broker for one TTL queue of a radix-16
// set, digit 15 at level 01: 15·16 ticks of 1 s, dead-lettering into level
// 01's done exchange, which must exist.
func testCheckRadix16Queue(client *broker.Client, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		actual, err := client.ReadSet(context.Background(), "/", name)
		if err != nil {
			return err
		}
		queueName, done := name+".r16.01.15", name+".r16.01.done"
		var queue *topology.Queue
		for i := range actual.Queues {
			if actual.Queues[i].Name == queueName {
				queue = &actual.Queues[i]
			}
		}
		if queue == nil {
			return fmt.Errorf("the broker has no queue %s; it has %d queues of the set", queueName, len(actual.Queues))
		}
		if queue.Arguments.MessageTTL != 240_000 || queue.Arguments.DeadLetterExchange != done {
			return fmt.Errorf("%s has TTL %d ms and dead-letter exchange %q, want 240000 ms and %q",
				queueName, queue.Arguments.MessageTTL, queue.Arguments.DeadLetterExchange, done)
		}
		if !slices.ContainsFunc(actual.Exchanges, func(x topology.Exchange) bool { return x.Name == done }) {
			return fmt.Errorf("the broker has no exchange %s", done)
		}
		// 15 queues per level and the unroutable queue.
		if len(actual.Queues) != 15*radix16Levels+1 {
			return fmt.Errorf("the broker has %d queues of the set, want %d", len(actual.Queues), 15*radix16Levels+1)
		}
		return nil
	}
}

// TestAccDelayQueueSet_radix16 applies a radix-16 set, checks its objects on
// the broker, imports it back unchanged, and adopts it through an import
// block with no change planned.
func TestAccDelayQueueSet_radix16(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testQueue(t, client, name+"-work")
	config := testRadix16Config(name)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionCreate),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("radix"), knownvalue.Int64Exact(radix16)),
						// 15·2·3/2 + 2 + 1 delay bindings, the unroutable binding and the route.
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLineCount(50)),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLine(0,
							knownvalue.StringExact(name+`.ingest -> queue `+name+`.r16.01.1, key "#.1.*"`))),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					// 255 ticks of 1 s.
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("max_delay_effective"), knownvalue.StringExact("4m15s")),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("queues"), knownLineCount(31)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					testCheckRadix16Queue(client, name),
					testCheckSetMatchesPlan(client, testRadix16Spec(name)),
				),
			},
			{
				ResourceName:      testResource,
				ImportState:       true,
				ImportStateVerify: true,
			},
			{
				// An import block with the same configuration plans no change.
				Config:          config,
				ResourceName:    testResource,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
			},
		},
	})
}

// TestAccDelayQueueSet_importHandMadeRadix16 adopts a radix-16 set declared
// through the management API: import infers the radix, and the matching
// configuration then plans no change.
func TestAccDelayQueueSet_importHandMadeRadix16(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	testQueue(t, client, name+"-work")
	testCleanupSet(t, "/", name)
	spec := testRadix16Spec(name)
	desired, err := testPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Apply(context.Background(), "/", topology.Diff(desired, topology.Topology{VHost: "/"}), broker.ApplyOptions{}); err != nil {
		t.Fatalf("declaring the set by hand: %v", err)
	}
	config := testRadix16Config(name)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config:             config,
				ResourceName:       testResource,
				ImportState:        true,
				ImportStateId:      "%2F/" + name,
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("imported %d resources, want 1", len(states))
					}
					for attribute, want := range map[string]string{
						"radix": "16", "levels": "2", "resolution": "1s", "max_delay_effective": "4m15s",
						"route.0.key": "orders",
					} {
						if got := states[0].Attributes[attribute]; got != want {
							return fmt.Errorf("imported %s = %q, want %q", attribute, got, want)
						}
					}
					return knownLineCount(50).CheckValue(states[0].Attributes["bindings"])
				},
			},
			{
				Config:   config,
				PlanOnly: true,
				Check:    testCheckSetMatchesPlan(client, spec),
			},
		},
	})
}

// TestAccDelayQueueSet_radixChangeNewGeneration changes a binary set whose
// parking lot holds a message to radix 16: the plan updates it in place, a
// new generation with exchanges of its own (the key format changes) takes
// over, the old generation, empty, is deleted within the same apply with
// its exchanges, and the parked message stays.
func TestAccDelayQueueSet_radixChangeNewGeneration(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	names := topology.Names(name)
	ctx := context.Background()
	binary := testSetConfig(name, `  levels = 4`)
	hex := testSetConfig(name, "  levels = 1\n  radix = 16")
	hexSpec := topology.Spec{Name: name, VHost: "/", Levels: 1, Radix: radix16, Resolution: time.Second, Generation: 1, FormatGeneration: 1}

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				Config: binary,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("radix"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(0)),
				},
				Check: func(*terraform.State) error {
					// One message parks in the unroutable queue: nothing matches "not-a-delay".
					if err := testPublish(ctx, names.Ingest(), "not-a-delay"); err != nil {
						return err
					}
					return testWaitForMessages(ctx, client, names.Unroutable(), 1)
				},
			},
			{
				Config: hex,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
					plancheck.ExpectKnownValue(testResource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact(names.Generation(1).Ingest())),
					plancheck.ExpectUnknownValue(testResource, tfjsonpath.New("draining")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("exchange_generation"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
				},
				Check: resource.ComposeTestCheckFunc(
					testCheckSetMatchesPlan(client, hexSpec),
					func(*terraform.State) error { return testWaitForMessages(ctx, client, names.Unroutable(), 1) },
				),
			},
			{
				Config:           hex,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// The parked message would be lost: destroy needs force_destroy.
				Config: testSetConfig(name, "  levels = 1\n  radix = 16\n  force_destroy = true"),
			},
		},
	})
}

// TestAccDelayQueueSet_dataPathRadix16 sends real messages through a
// radix-16 set, with keys the publisher writes in hex digits: each arrives
// once, never early, through the queues of its nonzero digits in order (its
// x-death header), and keys with a digit of 16 or more, too few digits or
// a padded digit are parked in the unroutable queue.
func TestAccDelayQueueSet_dataPathRadix16(t *testing.T) {
	t.Parallel()
	testDataPathSet(t, fmt.Sprintf("  levels        = %d\n  radix         = %d\n  resolution    = \"100ms\"", radix16Levels, radix16),
		// Every delay 0…255 ticks twice: 512 messages over 25.5 s.
		2, map[string]string{
			"dp16-digit-16-top":    dataPathKey + ".16.0",
			"dp16-digit-16-bottom": dataPathKey + ".0.16",
			"dp16-too-few-digits":  dataPathKey + ".7",
			"dp16-padded-digit":    dataPathKey + ".01.3",
			"dp16-not-digits":      dataPathKey + ".a.f",
		},
		func(topology.Names) []resource.TestCheckFunc {
			return []resource.TestCheckFunc{
				resource.TestCheckResourceAttr(testResource, "radix", "16"),
				resource.TestCheckResourceAttr(testResource, "levels", "2"),
				resource.TestCheckResourceAttr(testResource, "max_delay_effective", "25.5s"),
			}
		})
}

// TestAccDelayQueueSet_dataPathRadix256 sends real messages through a
// radix-256 set of one digit, whose every delay but 0 passes one TTL queue:
// each arrives once, never early, through its digit's queue alone (its
// x-death header), and keys with a digit of 256, a padded digit or no
// digit are parked in the unroutable queue.
func TestAccDelayQueueSet_dataPathRadix256(t *testing.T) {
	t.Parallel()
	testDataPathSet(t, "  levels        = 1\n  radix         = 256\n  resolution    = \"100ms\"",
		// Every delay 0…255 ticks twice: 512 messages over 25.5 s.
		2, map[string]string{
			"dp256-digit-256":  dataPathKey + ".256",
			"dp256-padded":     dataPathKey + ".007",
			"dp256-no-digit":   dataPathKey,
			"dp256-not-digits": dataPathKey + ".ff",
		},
		func(topology.Names) []resource.TestCheckFunc {
			return []resource.TestCheckFunc{
				resource.TestCheckResourceAttr(testResource, "radix", "256"),
				resource.TestCheckResourceAttr(testResource, "max_delay_effective", "25.5s"),
				// 255 TTL queues and the unroutable queue.
				resource.TestCheckResourceAttrWith(testResource, "queues", func(queues string) error {
					if n := len(strings.Split(queues, "\n")); n != 256 {
						return fmt.Errorf("queues has %d lines, want 256", n)
					}
					return nil
				}),
			}
		})
}
