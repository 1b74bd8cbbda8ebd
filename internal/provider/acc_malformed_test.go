package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The malformed-key sets: 4 levels of 100 ms hold delays of 0 to 1.5 s.
const (
	malformedLevels     = 4
	malformedResolution = 100 * time.Millisecond
	malformedKey        = "dp"
)

// malformedCase is one routing key that EncodeKey would never write for a
// set of malformedLevels levels, published as is.
type malformedCase struct {
	id         string
	routingKey string
	// overHTTP publishes through the management API, which takes routing
	// keys over AMQP's 255 bytes; AMQP 0-9-1 clients cannot send them.
	overHTTP bool
	// misread, for a key the layout cannot tell from a well-formed one, is
	// the delay the layout gives it: the set delivers it to a route that
	// matches what it reads as the key, at the wrong time.
	misread time.Duration
}

// The layout reads a routing key's last N words as the delay and the rest as
// the key. The keys below break that in each way a publisher can.
var (
	oversizeKey = strings.Repeat("k", 300)
	// Caught by the layout: each ends in the unroutable queue, with every route keyed.
	malformedCaught = []malformedCase{
		{id: "too-few-digits", routingKey: malformedKey + ".1.0"},
		{id: "too-many-digits", routingKey: malformedKey + ".1.0.0.1.1"},
		{id: "non-digit-top", routingKey: malformedKey + ".x.0.0.1"},
		{id: "non-digit-bottom", routingKey: malformedKey + ".0.0.1.2"},
		{id: "digit-two", routingKey: malformedKey + ".0.2.0.1"},
		{id: "empty", routingKey: ""},
	}
	// Not caught by the layout when a route takes every message: the same
	// kinds of keys then read as another key and a shorter delay.
	malformedMisread = []malformedCase{
		// Meant as 5 digits, 10011 = 19 ticks; read as key "dp.1" and 0011.
		{id: "too-many-digits", routingKey: malformedKey + ".1.0.0.1.1", misread: 3 * malformedResolution},
		// Meant as key "v.1" with 3 digits, 101 = 5 ticks; read as key "v" and 1101.
		{id: "too-few-digits-key-ends-in-digit", routingKey: "v.1.1.0.1", misread: 13 * malformedResolution},
	}
	// A routing key over AMQP's 255 bytes, with well-formed digits (3 ticks).
	// Only the management API's publish endpoint sends it: the broker routes
	// it, but cannot hand it to an AMQP 0-9-1 client, whose connection it
	// closes instead. It is published after the others, and looked for over HTTP.
	malformedOversize = malformedCase{id: "oversize", routingKey: oversizeKey + ".0.0.1.1", overHTTP: true, misread: 3 * malformedResolution}
)

// TestAccDelayQueueSet_malformedKeys publishes routing keys that break the
// layout's format into real sets. With every route keyed, each ends in the
// set's unroutable queue and none reaches the route, while a well-formed
// message does; an oversize key cannot even be sent over AMQP. With a route
// that takes every message, keys with too many digits, or too few after a
// key ending in a digit word, read as another key and delay and are
// delivered at the wrong time, and so is an oversize key: only the encoder
// prevents those, and it refuses to write them.
func TestAccDelayQueueSet_malformedKeys(t *testing.T) {
	client := testBrokerClient(t)
	testAccPreCheck(t)
	conn := malformedDial(t)
	keyed, catchAll := testSetName(t), testSetName(t)
	keyedQueue, catchAllQueue := keyed+"-work", catchAll+"-work"
	for _, queue := range []string{keyedQueue, catchAllQueue} {
		if err := messaging.DeclareQueue(conn, queue); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := messaging.DeleteQueue(conn, queue); err != nil {
				t.Errorf("deleting the route's queue: %v", err)
			}
		})
	}
	for _, name := range []string{keyed, catchAll} {
		testCleanupSet(t, "/", name)
	}
	set := func(resourceName, name, route string) string {
		return fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" %q {
  name          = %q
  levels        = %d
  resolution    = %q
  force_destroy = true
  route {
%s
  }
}
`, resourceName, name, malformedLevels, malformedResolution, route)
	}
	config := set("keyed", keyed, fmt.Sprintf("    destination = %q\n    key = %q", keyedQueue, malformedKey)) +
		set("catch_all", catchAll, fmt.Sprintf("    destination = %q", catchAllQueue))

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			testCheckSetGone(client, keyed), testCheckSetGone(client, catchAll)),
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeAggregateTestCheckFunc(
				malformedCheckCaught(t, client, keyed, keyedQueue),
				malformedCheckAMQPRefusesOversize(t, keyed),
				malformedCheckMisread(t, client, catchAll, catchAllQueue),
			),
		}},
	})
}

// malformedDial opens an AMQP connection of its own, closed when the test
// ends: the broker closes a connection it cannot deliver an oversize key to.
func malformedDial(t *testing.T) *amqp.Connection {
	t.Helper()
	conn, err := messaging.Dial(messaging.URLFromEnv(), 10*time.Second)
	if err != nil {
		t.Fatalf("the data path needs AMQP (%s): %v", messaging.URLEnv, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// malformedPublish publishes each case with the message's id in its body.
func malformedPublish(ctx context.Context, conn *amqp.Connection, ingest, runID string, cases ...malformedCase) error {
	publisher, err := messaging.NewPublisher(conn, messaging.Set{IngestExchange: ingest, Levels: malformedLevels, Resolution: malformedResolution})
	if err != nil {
		return err
	}
	defer func() { _ = publisher.Close() }()
	admin, err := testAdmin()
	if err != nil {
		return err
	}
	for _, c := range cases {
		m := messaging.Message{ID: runID + c.id, Delay: c.misread}
		if !c.overHTTP {
			if _, err := publisher.PublishWithRoutingKey(ctx, c.routingKey, m); err != nil {
				return fmt.Errorf("publishing %s with routing key %q: %w", c.id, c.routingKey, err)
			}
			continue
		}
		m.PublishedAt = time.Now()
		body, err := m.Encode()
		if err != nil {
			return err
		}
		result, err := admin.PublishToExchange("/", ingest, rabbithole.PublishOptions{
			RoutingKey: c.routingKey, Payload: string(body), PayloadEncoding: "string",
			Properties: map[string]any{"delivery_mode": 2, "content_type": messaging.ContentType},
		})
		if err != nil {
			return fmt.Errorf("publishing %s over HTTP: %w", c.id, err)
		}
		if !result.Routed {
			return fmt.Errorf("the broker routed %s nowhere, not even to the alternate exchange", c.id)
		}
	}
	return nil
}

// malformedWaitHeld waits until queue holds exactly want messages, by the
// management API's exact peek: an AMQP client could not read an oversize key.
func malformedWaitHeld(ctx context.Context, client *broker.Client, queue string, want int64) error {
	for {
		held, err := client.HeldMessages(ctx, "/", []string{queue})
		if err != nil {
			return err
		}
		if held[queue] == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s holds %d messages, want %d: %w", queue, held[queue], want, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// malformedCheckCaught publishes the keys the layout catches, and a
// well-formed one, into the set whose only route is keyed: every malformed
// one must be parked in the unroutable queue, only the well-formed one must
// reach the route.
func malformedCheckCaught(t *testing.T, client *broker.Client, name, routeQueue string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := testHangContext(topology.MaxDelayFor(malformedLevels, malformedResolution))
		defer cancel()
		conn := malformedDial(t)
		names := topology.Names(name)
		runID := fmt.Sprintf("mf-%08x-", rand.Uint32())
		consumer, err := messaging.NewConsumer(conn, routeQueue, messaging.ConsumerOptions{})
		if err != nil {
			return err
		}
		defer func() { _ = consumer.Close() }()

		publisher, err := messaging.NewPublisher(conn, messaging.Set{IngestExchange: names.Ingest(), Levels: malformedLevels, Resolution: malformedResolution})
		if err != nil {
			return err
		}
		defer func() { _ = publisher.Close() }()
		wellFormed, err := publisher.Publish(ctx, messaging.Delayed{ID: runID + "well-formed", Key: malformedKey, Delay: 3 * malformedResolution})
		if err != nil {
			return err
		}
		if err := malformedPublish(ctx, conn, names.Ingest(), runID, malformedCaught...); err != nil {
			return err
		}

		// Every malformed key is parked, some at once, some after part of the delay.
		want := map[string]string{}
		for _, c := range malformedCaught {
			want[runID+c.id] = c.routingKey
		}
		var problems []error
		for len(want) > 0 {
			delivery, err := messaging.Get(ctx, conn, names.Unroutable())
			if err != nil {
				problems = append(problems, fmt.Errorf("%d malformed keys never reached %s: %w", len(want), names.Unroutable(), err))
				break
			}
			message, err := messaging.DecodeMessage(delivery.Body)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s held a message the test did not send: %w", names.Unroutable(), err))
				continue
			}
			routingKey, ok := want[message.ID]
			if !ok || routingKey != delivery.RoutingKey {
				problems = append(problems, fmt.Errorf("%s held %s with routing key %q", names.Unroutable(), message.ID, delivery.RoutingKey))
				continue
			}
			delete(want, message.ID)
			t.Logf("%-32s %-16q parked in %s after %s", strings.TrimPrefix(message.ID, runID), routingKey, names.Unroutable(),
				time.Since(message.PublishedAt).Round(time.Millisecond))
		}
		// The oversize key last, once the queue is empty: it is parked too.
		if err := malformedPublish(ctx, conn, names.Ingest(), runID, malformedOversize); err != nil {
			return err
		}
		if err := malformedWaitHeld(ctx, client, names.Unroutable(), 1); err != nil {
			problems = append(problems, fmt.Errorf("the %d-byte routing key was not parked: %w", len(malformedOversize.routingKey), err))
		} else {
			t.Logf("%-32s %d bytes          parked in %s", malformedOversize.id, len(malformedOversize.routingKey), names.Unroutable())
		}

		// The well-formed message arrives; nothing else does, even once the longest delay is over.
		if err := consumer.WaitForIDs(ctx, []string{wellFormed.ID}); err != nil {
			problems = append(problems, fmt.Errorf("the well-formed message did not reach %s: %w", routeQueue, err))
		}
		longest := topology.MaxDelayFor(malformedLevels, malformedResolution)
		if wait := time.Until(wellFormed.PublishedAt.Add(longest + time.Second)); wait > 0 {
			time.Sleep(wait)
		}
		if err := consumer.Settle(ctx, time.Second); err != nil {
			problems = append(problems, err)
		}
		for _, a := range consumer.Arrivals() {
			if a.Message.ID != wellFormed.ID {
				problems = append(problems, fmt.Errorf("%s reached the route's queue with routing key %.40q", a.Message.ID, a.RoutingKey))
			} else if a.Early() {
				problems = append(problems, fmt.Errorf("the well-formed message arrived %s early", -a.Lateness))
			}
		}
		for _, f := range consumer.Foreign() {
			problems = append(problems, fmt.Errorf("a foreign message reached %s with routing key %.40q: %s", routeQueue, f.RoutingKey, f.Reason))
		}
		return errors.Join(problems...)
	}
}

// malformedCheckAMQPRefusesOversize checks that an AMQP 0-9-1 client cannot
// send a routing key over 255 bytes: the format has no room for it.
func malformedCheckAMQPRefusesOversize(t *testing.T, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		publisher, err := messaging.NewPublisher(malformedDial(t), messaging.Set{IngestExchange: topology.Names(name).Ingest(),
			Levels: malformedLevels, Resolution: malformedResolution})
		if err != nil {
			return err
		}
		defer func() { _ = publisher.Close() }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = publisher.PublishWithRoutingKey(ctx, malformedOversize.routingKey, messaging.Message{ID: "oversize-over-amqp"})
		if err == nil || !strings.Contains(err.Error(), "exceeds 255 bytes") {
			return fmt.Errorf("publishing a %d-byte routing key over AMQP: got %v, want a refusal", len(malformedOversize.routingKey), err)
		}
		return nil
	}
}

// malformedCheckMisread publishes the keys the layout cannot tell from
// well-formed ones into the set whose route takes every message: each is
// delivered, at the delay the layout reads, not the one meant. An oversize
// key is delivered too, and then no AMQP consumer can take it. The encoder
// refuses to write keys of these kinds.
func malformedCheckMisread(t *testing.T, client *broker.Client, name, routeQueue string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := testHangContext(topology.MaxDelayFor(malformedLevels, malformedResolution))
		defer cancel()
		conn := malformedDial(t)
		ingest := topology.Names(name).Ingest()
		runID := fmt.Sprintf("mr-%08x-", rand.Uint32())
		consumer, err := messaging.NewConsumer(conn, routeQueue, messaging.ConsumerOptions{IDPrefix: runID})
		if err != nil {
			return err
		}
		if err := malformedPublish(ctx, conn, ingest, runID, malformedMisread...); err != nil {
			return err
		}
		ids := make([]string, len(malformedMisread))
		for i, c := range malformedMisread {
			ids[i] = runID + c.id
		}
		var problems []error
		if err := consumer.WaitForIDs(ctx, ids); err != nil {
			problems = append(problems, fmt.Errorf("the catch-all route did not deliver what the layout misreads: %w", err))
		}
		for _, a := range consumer.Arrivals() {
			// The body's delay is the misread one: even that is never shortened.
			if a.Early() {
				problems = append(problems, fmt.Errorf("%s arrived %s before even the misread delay", a.Message.ID, -a.Lateness))
			}
			t.Logf("%-32s %-16q delivered by the catch-all route after %s, the delay its last %d words say",
				strings.TrimPrefix(a.Message.ID, runID), a.RoutingKey, (a.Message.Delay + a.Lateness).Round(time.Millisecond), malformedLevels)
		}
		if err := consumer.Close(); err != nil {
			problems = append(problems, err)
		}

		// The oversize key reaches the route's queue, where an AMQP client cannot take it.
		if err := malformedPublish(ctx, conn, ingest, runID, malformedOversize); err != nil {
			return err
		}
		if err := malformedWaitHeld(ctx, client, routeQueue, 1); err != nil {
			problems = append(problems, fmt.Errorf("the catch-all route did not deliver the %d-byte routing key: %w", len(malformedOversize.routingKey), err))
		} else {
			_, err := messaging.Get(ctx, malformedDial(t), routeQueue)
			var amqpErr *amqp.Error
			if !errors.As(err, &amqpErr) || amqpErr.Code != amqp.InternalError {
				problems = append(problems, fmt.Errorf("taking the %d-byte routing key over AMQP: got %v, want the broker to close the connection with %d", len(malformedOversize.routingKey), err, amqp.InternalError))
			} else {
				t.Logf("%-32s %d bytes          delivered by the catch-all route; taking it over AMQP: %v", malformedOversize.id, len(malformedOversize.routingKey), err)
			}
		}

		// What the encoder says when asked for these messages.
		for intent, err := range map[string]error{
			"a delay that needs 5 digits": encodeErr(malformedKey, 19*malformedResolution),
			"a 300-byte key":              encodeErr(oversizeKey, 3*malformedResolution),
		} {
			var problem *topology.FieldError
			if !errors.As(err, &problem) {
				problems = append(problems, fmt.Errorf("EncodeKey wrote %s with %d levels: %v", intent, malformedLevels, err))
			}
		}
		// A key ending in a digit word is encoded with all N digits, and reads back whole.
		routingKey, err := topology.EncodeKey("v.1", 5*malformedResolution, malformedLevels, malformedResolution)
		if key, delay, decodeErr := topology.DecodeKey(routingKey, malformedLevels, malformedResolution); err != nil || decodeErr != nil ||
			key != "v.1" || delay != 5*malformedResolution {
			problems = append(problems, fmt.Errorf("EncodeKey(\"v.1\", 500ms) = %q (%v) reads back as %q, %s (%v)", routingKey, err, key, delay, decodeErr))
		}
		return errors.Join(problems...)
	}
}

func encodeErr(key string, delay time.Duration) error {
	_, err := topology.EncodeKey(key, delay, malformedLevels, malformedResolution)
	return err
}
