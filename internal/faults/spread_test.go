package faults

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const spreadResource = "rabbitmq_delay_queue_set.test"

// testLeadersSpread runs on a 3-node cluster, through node 1's management
// API: a new set's quorum queues lead on more than one node, and a set made
// before queue_leader_locator existed (its objects declared as the provider
// declared them then: without the argument, so all on node 1) imports and
// plans no change until its owner asks for balanced leaders, which a new
// generation brings.
func testLeadersSpread(t *testing.T, nodes []*node) {
	apiNode := nodes[0]
	client := brokerClient(t, apiNode.ManagementURL)
	provider := plainProvider(apiNode.ManagementURL)
	const levels = 4
	config := func(name, attributes string) string {
		return fmt.Sprintf("%s\nresource \"rabbitmq_delay_queue_set\" \"test\" {\n  name   = %q\n  levels = %d\n%s}\n",
			provider, name, levels, attributes)
	}

	t.Run("new set", func(t *testing.T) {
		name := "faults-spread-" + strings.ToLower(acctest.RandString(6))
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: providerFactories,
			CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
			Steps: []resource.TestStep{
				{
					Config: config(name, ""),
					Check: resource.ComposeTestCheckFunc(
						resource.TestCheckResourceAttr(spreadResource, "queue_leader_locator", "balanced"),
						checkLevelLeaders(client, name, levels, func(leaders map[string]int) error {
							if len(leaders) < 2 {
								return fmt.Errorf("the level queues lead on %d node, want more than one", len(leaders))
							}
							return nil
						}),
					),
				},
				{
					// The refresh shows where the queues are.
					RefreshState: true,
					Check:        checkLeadersShown(client, name),
				},
			},
		})
	})

	t.Run("library layout with a policy", func(t *testing.T) {
		// NServiceBus declares its queues without the argument, so the set
		// must too; the operator's policy spreads them, when it exists
		// before they are declared (a locator acts only then).
		rmq, err := rabbithole.NewClient(apiNode.ManagementURL, "guest", "guest")
		if err != nil {
			t.Fatal(err)
		}
		const policy = "faults-nsb-leaders"
		if _, err := rmq.PutPolicy("/", policy, rabbithole.Policy{Pattern: `^nsb\.v2\.delay-level-`, ApplyTo: "queues",
			Definition: rabbithole.PolicyDefinition{"queue-leader-locator": "balanced"}}); err != nil {
			t.Fatalf("the policy: %v", err)
		}
		t.Cleanup(func() { _, _ = rmq.DeletePolicy("/", policy) })
		spec := topology.Spec{Name: "faults-nsb", VHost: "/", Layout: topology.LayoutNServiceBus}
		libraryConfig := fmt.Sprintf("%s\nresource \"rabbitmq_delay_queue_set\" \"test\" {\n  name   = %q\n  layout = %q\n}\n",
			provider, spec.Name, spec.Layout)
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: providerFactories,
			CheckDestroy: func(*terraform.State) error {
				actual, err := client.ReadSetOf(context.Background(), "/", spec.Name, spec.Layout)
				if err == nil && len(actual.Queues) > 0 {
					err = fmt.Errorf("%d queues of the set remain after destroy", len(actual.Queues))
				}
				return err
			},
			Steps: []resource.TestStep{
				{
					Config: libraryConfig,
					Check: resource.ComposeTestCheckFunc(
						resource.TestCheckNoResourceAttr(spreadResource, "queue_leader_locator"),
						checkLevelLeadersOf(client, spec, func(leaders map[string]int) error {
							if len(leaders) < 2 {
								return fmt.Errorf("under the policy the level queues lead on %d node, want more than one", len(leaders))
							}
							return nil
						}),
					),
				},
				{Config: libraryConfig, PlanOnly: true},
			},
		})
	})

	t.Run("older set", func(t *testing.T) {
		name := "faults-older-" + strings.ToLower(acctest.RandString(6))
		older := topology.Spec{Name: name, VHost: "/", Levels: levels}
		planned, err := topology.Plan(older)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Apply(context.Background(), "/", topology.Diff(planned, topology.Topology{VHost: "/"}), broker.ApplyOptions{}); err != nil {
			t.Fatalf("declaring the set as the provider did before queue_leader_locator: %v", err)
		}
		onOneNode := checkLevelLeaders(client, name, levels, func(leaders map[string]int) error {
			if len(leaders) != 1 {
				return fmt.Errorf("the level queues of a set declared without x-queue-leader-locator lead on %d nodes, want the one that declared them", len(leaders))
			}
			return nil
		})
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: providerFactories,
			CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
			Steps: []resource.TestStep{
				{
					Config:             config(name, ""),
					ResourceName:       spreadResource,
					ImportState:        true,
					ImportStateId:      url.PathEscape("/") + "/" + name,
					ImportStatePersist: true,
				},
				{
					// No change planned, though a new set would spread.
					Config:   config(name, ""),
					PlanOnly: true,
				},
				{
					RefreshState: true,
					Check: resource.ComposeTestCheckFunc(
						resource.TestCheckNoResourceAttr(spreadResource, "queue_leader_locator"),
						resource.TestCheckResourceAttr(spreadResource, "leaders.%", "1"),
						resource.TestCheckResourceAttr(spreadResource, "leaders."+apiNode.Name, strconv.Itoa(len(planned.Queues))),
						checkLeadersShown(client, name),
						onOneNode,
					),
				},
				{
					// Asked for: a new generation, whose queues spread.
					Config: config(name, "  queue_leader_locator = \"balanced\"\n"),
					Check: resource.ComposeTestCheckFunc(
						resource.TestCheckResourceAttr(spreadResource, "generation", "1"),
						resource.TestCheckResourceAttr(spreadResource, "draining.#", "0"),
						checkLevelLeadersOf(client, topology.Spec{Name: name, VHost: "/", Levels: levels, Generation: 1}, func(leaders map[string]int) error {
							if len(leaders) < 2 {
								return fmt.Errorf("the level queues of generation 1 lead on %d node, want more than one", len(leaders))
							}
							return nil
						}),
					),
				},
				{Config: config(name, "  queue_leader_locator = \"balanced\"\n"), PlanOnly: true},
			},
		})
	})
}

// checkLevelLeaders checks, with a fresh read of the broker, the nodes
// that lead the TTL queues of generation 0 of set name: node → queues led.
func checkLevelLeaders(client *broker.Client, name string, levels int, check func(map[string]int) error) resource.TestCheckFunc {
	return checkLevelLeadersOf(client, topology.Spec{Name: name, VHost: "/", Levels: levels}, check)
}

// checkLevelLeadersOf is checkLevelLeaders of the TTL queues of spec's
// generation, in any layout.
func checkLevelLeadersOf(client *broker.Client, spec topology.Spec, check func(map[string]int) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		planned, err := topology.Plan(spec)
		if err != nil {
			return err
		}
		var queues []string
		for _, q := range planned.Queues {
			if q.Arguments.MessageTTL > 0 {
				queues = append(queues, q.Name)
			}
		}
		if _, err := client.ReadSetOf(context.Background(), "/", spec.Name, spec.Layout); err != nil {
			return err
		}
		placements := client.Placements("/", queues)
		leaders := map[string]int{}
		for _, q := range queues {
			p, ok := placements[q]
			if !ok || p.Leader == "" {
				return fmt.Errorf("%s: no leader found (%+v)", q, p)
			}
			if len(p.Members) != 3 || len(p.Online) != 3 {
				return fmt.Errorf("%s: members %v, online %v; want the cluster's 3 nodes", q, p.Members, p.Online)
			}
			leaders[p.Leader]++
		}
		if err := check(leaders); err != nil {
			return fmt.Errorf("%w (leaders: %v)", err, leaders)
		}
		return nil
	}
}

// checkLeadersShown checks that the state's placement and leaders say
// what the broker says.
func checkLeadersShown(client *broker.Client, name string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		actual, err := client.ReadSet(context.Background(), "/", name)
		if err != nil {
			return err
		}
		placements := client.Placements("/", actual.QueueNames())
		want := map[string]int{}
		var lines []string
		for _, q := range slices.Sorted(maps.Keys(placements)) {
			p := placements[q]
			want[p.Leader]++
			lines = append(lines, fmt.Sprintf("%s: leader %s, members %s", q, p.Leader, strings.Join(p.Members, " ")))
		}
		checks := []resource.TestCheckFunc{
			resource.TestCheckResourceAttr(spreadResource, "placement", strings.Join(lines, "\n")),
			resource.TestCheckResourceAttr(spreadResource, "leaders.%", strconv.Itoa(len(want))),
		}
		for node, n := range want {
			checks = append(checks, resource.TestCheckResourceAttr(spreadResource, "leaders."+node, strconv.Itoa(n)))
		}
		return resource.ComposeTestCheckFunc(checks...)(s)
	}
}
