package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccDelayQueueSet_destroyRightAfterPublish publishes a message with a
// 15 s delay into a quorum set and destroys it at once, before the broker's
// statistics count the message (on RabbitMQ 4.0–4.2 at their default 5 s,
// they take seconds). The check before any change must see it as the
// deletion's own check would: the destroy is refused with the set whole,
// and the message leaves the set on time, not early and not through a
// half-deleted chain.
func TestAccDelayQueueSet_destroyRightAfterPublish(t *testing.T) {
	client := testBrokerClient(t)
	name := testSetName(t)
	names := topology.Names(name)
	spec := topology.Spec{Name: name, VHost: "/", Levels: 4, Resolution: time.Second, QueueType: topology.QueueTypeQuorum}
	config := testSetConfig(name, "  levels = 4\n  queue_type = \"quorum\"")
	ctx := context.Background()
	var published time.Time

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					published = time.Now()
					if err := testPublish(ctx, names.Ingest(), "1.1.1.1"); err != nil { // 15 ticks: every level
						t.Fatal(err)
					}
				},
				Config:      config,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Delay Queues Hold Messages.*holds 1\s+message`),
			},
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					testCheckSetMatchesPlan(client, spec),
					func(*terraform.State) error {
						return testArrivesOnTime(t, names.Unroutable(), published, 15*time.Second)
					},
				),
			},
			{Config: testSetConfig(name, "  levels = 4\n  queue_type = \"quorum\"\n  force_destroy = true")},
		},
	})
}

// testArrivesOnTime waits for the one message published at published to
// reach queue (a set without routes parks what leaves it), and fails if it
// came before delay, or not at all (testHangSlack after it, the broker hung).
func testArrivesOnTime(t *testing.T, queue string, published time.Time, delay time.Duration) error {
	conn, err := messaging.Dial(messaging.URLFromEnv(), 10*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer func() { _ = ch.Close() }()
	for deadline := published.Add(delay + testHangSlack); ; time.Sleep(50 * time.Millisecond) {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		arrived := time.Since(published)
		switch {
		case err != nil:
			return err
		case q.Messages > 0 && arrived < delay:
			return fmt.Errorf("the message reached %s %s after it was published, before its delay of %s", queue, arrived, delay)
		case q.Messages > 0:
			t.Logf("the message reached %s %s after it was published, its delay %s", queue, arrived.Round(time.Millisecond), delay)
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("hung: the message did not reach %s within %s of its delay of %s", queue, testHangSlack, delay)
		}
	}
}
