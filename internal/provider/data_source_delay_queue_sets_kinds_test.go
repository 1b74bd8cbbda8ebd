package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// everyKindSets are the sets of TestAccDelayQueueSets_adoptEveryKind, by
// resource name, each a resource block's attributes: between them every
// kind of set a broker holds, grouped into few sets to keep the test short.
// Classic queues get no leader locator: RabbitMQ 3.10 refuses one.
var everyKindSets = map[string]string{
	// radix 2, quorum, at-least-once, client-local, group size 1, three routes:
	// to a queue by key, to an exchange by key, to a queue for every message.
	"binary": `levels = 3
  resolution = "500ms"
  quorum_initial_group_size = 1
  queue_leader_locator = "client-local"
  route {
    destination = "kinds.work"
    key         = "orders"
  }
  route {
    destination      = "kinds.fanout"
    destination_type = "exchange"
    key              = "audit"
  }
  route {
    destination = "kinds.all"
  }`,
	// radix 16, quorum, at-most-once, balanced, group size 3 (more than the nodes: the broker takes them all).
	"hex": `levels = 2
  radix = 16
  dead_letter_strategy = "at-most-once"
  quorum_initial_group_size = 3
  queue_leader_locator = "balanced"
  route {
    destination = "kinds.work"
    key         = "hex"
  }`,
	// radix 256, classic (at-most-once: the only strategy classic queues have).
	"bytes": `levels = 1
  radix = 256
  queue_type = "classic"
  route {
    destination = "kinds.work"
    key         = "bytes"
  }`,
}

// everyKindSwitching is the set caught mid-switch: classic at first, then
// quorum, a new generation beside the old one, which holds a message.
func everyKindSwitching(queueType string) string {
	return fmt.Sprintf(`levels = 2
  resolution = "1h"
  queue_type = %q
  migration_wait = "0s"
  route {
    destination = "kinds.work"
    key         = "held"
  }`, queueType)
}

// everyKindConfig is the configuration that creates the sets in vhost: the
// default layout's above, the mid-switch set with queueType, and a set of
// each library's layout.
func everyKindConfig(vhost, queueType string) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(everyKindSets)) {
		fmt.Fprintf(&b, "resource \"rabbitmq_delay_queue_set\" %q {\n  name  = %q\n  vhost = %q\n  %s\n}\n", name, name, vhost, everyKindSets[name])
	}
	fmt.Fprintf(&b, "resource \"rabbitmq_delay_queue_set\" \"switching\" {\n  name  = \"switching\"\n  vhost = %q\n  %s\n}\n", vhost, everyKindSwitching(queueType))
	for _, library := range []string{"nservicebus", "celery"} {
		b.WriteString(strings.Replace(libraryConfig(libraryCases[library], vhost, ""), `"test"`, fmt.Sprintf("%q", library), 1))
	}
	return b.String()
}

// everyKindForgotten forgets every set of everyKindConfig without
// destroying it (a removed block, Terraform 1.7), as a lost state would.
func everyKindForgotten() string {
	var b strings.Builder
	for _, name := range append(slices.Sorted(maps.Keys(everyKindSets)), "switching", "nservicebus", "celery") {
		fmt.Fprintf(&b, "removed {\n  from = rabbitmq_delay_queue_set.%s\n  lifecycle {\n    destroy = false\n  }\n}\n", name)
	}
	return b.String()
}

// everyKindDestinations declares the routes' destinations in vhost over
// conn: two queues, a fanout exchange, and each library's destination.
func everyKindDestinations(conn *amqp.Connection) func(ch *amqp.Channel) error {
	return func(ch *amqp.Channel) error {
		for _, queue := range []string{"kinds.work", "kinds.all"} {
			if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
				return err
			}
		}
		if err := ch.ExchangeDeclare("kinds.fanout", "fanout", true, false, false, false, nil); err != nil {
			return err
		}
		for _, library := range []string{"nservicebus", "celery"} {
			if err := onChannel(conn, libraryCases[library].declareDestination); err != nil {
				return err
			}
		}
		return nil
	}
}

// everyKindHoldMessage publishes one message with a delay of 2 h into the
// mid-switch set's generation 0 and waits until its queue holds it.
func everyKindHoldMessage(t *testing.T, conn *amqp.Connection, vhost string) {
	t.Helper()
	key, err := topology.KeyFormat{Levels: 2, Radix: 2, Resolution: time.Hour}.Encode("held", 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	err = onChannel(conn, func(ch *amqp.Channel) error {
		return ch.PublishWithContext(context.Background(), "switching.ingest", key, true, false,
			amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte("held through the switch")})
	})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(testHangSlack); ; time.Sleep(200 * time.Millisecond) {
		q, err := admin.GetQueue(vhost, "switching.level.01")
		if err == nil && q.Messages == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("hung: switching.level.01 does not hold the message after %s (%v)", testHangSlack, err)
		}
	}
}

// everyKindPurge empties every queue of the mid-switch set, so that the
// adopted sets can be destroyed, and waits until the broker counts them empty.
func everyKindPurge(t *testing.T, vhost string) {
	t.Helper()
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	queues, err := admin.ListQueuesIn(vhost)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queues {
		if !strings.HasPrefix(q.Name, "switching.") {
			continue
		}
		if _, err := admin.PurgeQueue(vhost, q.Name); err != nil {
			t.Fatalf("purging %s: %v", q.Name, err)
		}
		// The count the deletion guard reads lags behind the purge.
		for deadline := time.Now().Add(testHangSlack); ; time.Sleep(500 * time.Millisecond) {
			q, err := admin.GetQueue(vhost, q.Name)
			if err == nil && q.Messages == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("hung: %s still counts messages %s after its purge (%v)", q.Name, testHangSlack, err)
			}
		}
	}
}

// TestAccDelayQueueSets_adoptEveryKind creates with Terraform, in a vhost
// of its own, every kind of set a broker holds: both library layouts;
// radix 2, 16 and 256; classic and quorum; at-most-once and at-least-once;
// each leader locator and group size (none, 1, 3); several routes, to
// queues and an exchange, with and without a key; and a set caught
// mid-switch, whose older generation holds a message. Terraform forgets
// them (removed blocks), and the example's recipe adopts them all in one
// apply: nothing changes on the broker (GET /api/definitions), and the
// next plan is empty. A set that exists only in part is in unreadable, with
// the reason, and the apply leaves it as it is.
func TestAccDelayQueueSets_adoptEveryKind(t *testing.T) {
	client := testBrokerClient(t)
	vhost := testVhost(t)
	conn := libraryVhostConn(t, vhost)
	if err := onChannel(conn, everyKindDestinations(conn)); err != nil {
		t.Fatal(err)
	}
	testDeclareSet(t, client, topology.Spec{Name: "partial", VHost: vhost, Levels: 2})
	admin, err := testAdmin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.DeleteQueue(vhost, "partial.level.01"); err != nil {
		t.Fatal(err)
	}

	var want []string
	for _, name := range append(slices.Collect(maps.Keys(everyKindSets)), "switching") {
		want = append(want, vhost+"/"+name)
	}
	want = append(want, vhost+"/nservicebus/nservicebus", vhost+"/celery/celery")
	slices.Sort(want)
	dataSource := fmt.Sprintf("data \"rabbitmq_delay_queue_sets\" \"existing\" {\n  vhost = %q\n}\n", vhost)
	recipe := adoptionRecipe(t, "")
	recipe = strings.Replace(recipe, "variable \"vhost\" {\n  type    = string\n  default = null\n}\n",
		fmt.Sprintf("variable \"vhost\" {\n  type    = string\n  default = %q\n}\n", vhost), 1)
	var before []string
	switching := "rabbitmq_delay_queue_set.switching"

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_7_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeTestCheckFunc(
			testCheckSetGoneIn(client, vhost, "binary"), testCheckSetGoneIn(client, vhost, "hex"),
			testCheckSetGoneIn(client, vhost, "bytes"), testCheckSetGoneIn(client, vhost, "switching"),
			libraryCheckGone(client, libraryCases["nservicebus"], vhost), libraryCheckGone(client, libraryCases["celery"], vhost)),
		Steps: []resource.TestStep{
			{
				Config: everyKindConfig(vhost, "classic"),
			},
			{
				// The switch: generation 1 of quorum queues, generation 0 draining with the message.
				PreConfig: func() { everyKindHoldMessage(t, conn, vhost) },
				Config:    everyKindConfig(vhost, "quorum"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(switching, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(switching, tfjsonpath.New("draining"), knownvalue.ListSizeExact(1)),
				},
			},
			{
				// Forgotten, not destroyed; the data source finds them all, and the part of a set.
				Config: everyKindForgotten() + dataSource,
				Check: testCheckFound("data.rabbitmq_delay_queue_sets.existing", want, []string{
					`^\S+ partial: the objects describe a set of 2 levels .*queue partial.level.01 is missing`,
				}),
			},
			{
				PreConfig: func() { before = testDefinitions(t, vhost) },
				Config:    recipe,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             expectAdopted(want, plancheck.ResourceActionNoop),
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					testDefinitionsUnchanged(t, &before, vhost),
					statecheck.ExpectKnownValue(fmt.Sprintf("rabbitmq_delay_queue_set.adopted[%q]", vhost+"/switching"),
						tfjsonpath.New("draining"), knownvalue.ListSizeExact(1)),
					statecheck.ExpectKnownValue(fmt.Sprintf("rabbitmq_delay_queue_set.adopted[%q]", vhost+"/binary"),
						tfjsonpath.New(groupSizeAttribute), knownvalue.Int64Exact(1)),
				},
			},
			{
				Config:   recipe,
				PlanOnly: true,
			},
			{
				// The adopted sets leave the configuration and are destroyed, the
				// held message purged first; the part of a set stays.
				PreConfig:        func() { everyKindPurge(t, vhost) },
				Config:           dataSource,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: expectAdopted(want, plancheck.ResourceActionDestroy)},
			},
		},
	})
}
