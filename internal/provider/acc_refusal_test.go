package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
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

// TestAccDelayQueueSet_destroyKeepsWhatAConsumerHolds: an application
// consumes the parking lot, and holds a message of it, delivered and not
// acknowledged. The broker's own if-empty would call the queue empty; the
// destroy must be refused with the set whole, and succeed once the message
// is acknowledged.
func TestAccDelayQueueSet_destroyKeepsWhatAConsumerHolds(t *testing.T) {
	t.Parallel()
	client := testBrokerClient(t)
	name := testSetName(t)
	for _, queueType := range []topology.QueueType{topology.QueueTypeClassic, topology.QueueTypeQuorum} {
		t.Run(string(queueType), func(t *testing.T) {
			setName := name + "-" + string(queueType)[:1]
			names := topology.Names(setName)
			spec := topology.Spec{Name: setName, VHost: "/", Levels: 4, Resolution: time.Second, QueueType: queueType}
			config := testSetConfig(setName, fmt.Sprintf("  levels = 4\n  queue_type = %q", queueType))
			var held *amqp.Delivery
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             testCheckSetGone(client, setName),
				Steps: []resource.TestStep{
					{Config: config},
					{
						PreConfig: func() {
							// A key of no digits: the set parks it at once.
							if err := testPublish(context.Background(), names.Ingest(), "malformed"); err != nil {
								t.Fatal(err)
							}
							held = testConsumeWithoutAck(t, names.Unroutable())
						},
						Config:      config,
						Destroy:     true,
						ExpectError: regexp.MustCompile(`(?s)Delay Queues (May )?Hold Messages.*` + regexp.QuoteMeta(names.Unroutable())),
					},
					{
						Config: config,
						Check: resource.ComposeAggregateTestCheckFunc(
							testCheckSetMatchesPlan(client, spec),
							// The destroy that ends the test counts by them.
							func(*terraform.State) error { return testStatisticsCountNone(client, names.Unroutable()) },
						),
						PreConfig: func() {
							if err := held.Ack(false); err != nil {
								t.Fatal(err)
							}
						},
					},
				},
			})
		})
	}
}

// testConsumeWithoutAck consumes queue on a connection of its own, open
// until the test ends, and returns its first delivery, not acknowledged.
func testConsumeWithoutAck(t *testing.T, queue string) *amqp.Delivery {
	t.Helper()
	conn, err := messaging.Dial(messaging.URLFromEnv(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-deliveries:
		return &d
	case <-time.After(testHangSlack):
		t.Fatalf("hung: nothing reached %s", queue)
	}
	return nil
}

// testStatisticsCountNone waits until the statistics of queue count no
// message, as they do a statistics interval after it emptied.
func testStatisticsCountNone(client *broker.Client, queue string) error {
	for deadline := time.Now().Add(testHangSlack); ; time.Sleep(time.Second) {
		messages, known, err := client.CountedByStatistics(context.Background(), "/", queue)
		switch {
		case err != nil:
			return err
		case known && messages == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("hung: the statistics of %s still count %d message(s)", queue, messages)
		}
	}
}
