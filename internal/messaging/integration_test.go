package messaging

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// These tests run against a real broker when TF_ACC=1 (make testacc), at
// $RABBITMQ_AMQP_URL or the local one. They declare a set's topology from
// topology.Plan straight over AMQP, so they need neither the provider nor
// the management API.

func brokerConn(t *testing.T) *amqp.Connection {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run against a real broker")
	}
	conn, err := Dial(URLFromEnv(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// declareSet declares every object of a planned set over AMQP and deletes
// them, and the route queue, when the test ends.
func declareSet(t *testing.T, conn *amqp.Connection, spec topology.Spec) topology.Topology {
	t.Helper()
	planned, err := topology.Plan(spec)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ch.Close() }()
	t.Cleanup(func() {
		cleanup, err := conn.Channel()
		if err != nil {
			t.Errorf("cleanup channel: %v", err)
			return
		}
		defer func() { _ = cleanup.Close() }()
		for _, q := range planned.Queues {
			if _, err := cleanup.QueueDelete(q.Name, false, false, false); err != nil {
				t.Errorf("delete queue %s: %v", q.Name, err)
			}
		}
		for _, e := range planned.Exchanges {
			if err := cleanup.ExchangeDelete(e.Name, false, false); err != nil {
				t.Errorf("delete exchange %s: %v", e.Name, err)
			}
		}
	})
	for _, e := range planned.Exchanges {
		args := amqp.Table{}
		if e.Arguments.AlternateExchange != "" {
			args["alternate-exchange"] = e.Arguments.AlternateExchange
		}
		if err := ch.ExchangeDeclare(e.Name, e.Type, true, false, false, false, args); err != nil {
			t.Fatalf("declare exchange %s: %v", e.Name, err)
		}
	}
	for _, q := range planned.Queues {
		args := amqp.Table{"x-queue-type": string(q.Arguments.QueueType)}
		if q.Arguments.MessageTTL != 0 {
			args["x-message-ttl"] = q.Arguments.MessageTTL
		}
		if q.Arguments.DeadLetterExchange != "" {
			args["x-dead-letter-exchange"] = q.Arguments.DeadLetterExchange
		}
		if q.Arguments.DeadLetterStrategy != "" {
			args["x-dead-letter-strategy"] = string(q.Arguments.DeadLetterStrategy)
		}
		if q.Arguments.Overflow != "" {
			args["x-overflow"] = q.Arguments.Overflow
		}
		if _, err := ch.QueueDeclare(q.Name, true, false, false, false, args); err != nil {
			t.Fatalf("declare queue %s: %v", q.Name, err)
		}
	}
	for _, b := range planned.Bindings {
		var err error
		if b.DestinationType == topology.DestinationExchange {
			err = ch.ExchangeBind(b.Destination, b.RoutingKey, b.Source, false, nil)
		} else {
			err = ch.QueueBind(b.Destination, b.RoutingKey, b.Source, false, nil)
		}
		if err != nil {
			t.Fatalf("bind %s → %s (%q): %v", b.Source, b.Destination, b.RoutingKey, err)
		}
	}
	return planned
}

// errHung is the cause of a test's deadline against a broker that stopped
// answering: generous, so that it never bounds how late a message may be.
var errHung = errors.New("hung: the broker made no progress within the test's generous deadline")

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%04x", prefix, time.Now().UnixNano(), rand.Uint32()&0xffff)
}

// TestPublishConsumeThroughSet sends every delay of a small set through its
// real topology, shuffled, and checks that each message arrives once, not
// early, with the routing key it was sent with, and logs the lateness:
// a binary set, and a radix-16 set whose keys the publisher writes in hex
// digits.
func TestPublishConsumeThroughSet(t *testing.T) {
	conn := brokerConn(t)
	for name, format := range map[string]topology.KeyFormat{
		"radix 2":  {Levels: 3, Resolution: 100 * time.Millisecond},
		"radix 16": {Levels: 2, Radix: 16, Resolution: 20 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) { testPublishConsumeThroughSet(t, conn, format) })
	}
}

func testPublishConsumeThroughSet(t *testing.T, conn *amqp.Connection, format topology.KeyFormat) {
	levels, radix, resolution := format.Levels, format.Radix, format.Resolution
	name := uniqueName("messaging-test")
	route := name + ".work"
	if err := DeclareQueue(conn, route); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := DeleteQueue(conn, route); err != nil {
			t.Error(err)
		}
	})
	declareSet(t, conn, topology.Spec{
		Name: name, VHost: "/", Levels: levels, Radix: radix, Resolution: resolution, QueueType: topology.QueueTypeClassic,
		Routes: []topology.Route{{Destination: route, Key: "job"}},
	})

	consumer, err := NewConsumer(conn, route, ConsumerOptions{IDPrefix: name})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = consumer.Close() }()
	publisher, err := NewPublisher(conn, Set{IngestExchange: topology.Names(name).Ingest(), Levels: levels, Radix: radix, Resolution: resolution})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = publisher.Close() }()

	var batch []Delayed
	for ticks := range int64(format.MaxDelay()/resolution) + 1 {
		// A delay just over a whole number of ticks rounds up to the next one.
		for _, extra := range []time.Duration{0, time.Millisecond} {
			delay := time.Duration(ticks)*resolution + extra
			if delay > format.MaxDelay() {
				continue
			}
			batch = append(batch, Delayed{ID: fmt.Sprintf("%s-%02d-%d", name, ticks, extra.Milliseconds()), Key: "job", Delay: delay})
		}
	}
	rand.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })

	// A guard against a hung broker, not a bound on lateness: that is the benchmarks' figure.
	ctx, cancel := context.WithTimeoutCause(context.Background(), format.MaxDelay()+2*time.Minute, errHung)
	defer cancel()
	sent, err := publisher.PublishBatch(ctx, batch)
	if err != nil {
		t.Fatalf("PublishBatch: %v", err)
	}
	if len(sent) != len(batch) {
		t.Fatalf("PublishBatch returned %d messages, want %d", len(sent), len(batch))
	}
	ids := make([]string, len(sent))
	for i, m := range sent {
		ids[i] = m.ID
	}
	if err := consumer.WaitForIDs(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if err := consumer.Settle(ctx, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}

	for _, a := range consumer.Arrivals() {
		key, delay, err := format.Decode(a.RoutingKey)
		if err != nil {
			t.Errorf("%s arrived with routing key %q: %v", a.Message.ID, a.RoutingKey, err)
			continue
		}
		// The key says the delay rounded up to ticks; the lateness is measured against the delay asked for.
		if key != "job" || delay < a.Message.Delay || delay-a.Message.Delay >= resolution {
			t.Errorf("%s (delay %s) arrived with routing key %q, which says key %q and delay %s", a.Message.ID, a.Message.Delay, a.RoutingKey, key, delay)
		}
		if a.Early() {
			t.Errorf("%s arrived %s early", a.Message.ID, -a.Lateness)
		}
	}
	if d := consumer.Duplicates(); len(d) > 0 {
		t.Errorf("%d duplicates, first %s", len(d), d[0].Message.ID)
	}
	if f := consumer.Foreign(); len(f) > 0 {
		t.Errorf("%d foreign deliveries on a fresh queue, first: %s", len(f), f[0].Reason)
	}
	t.Logf("%d messages: %s", len(sent), Summarize(consumer.Arrivals()))

	// A malformed key matches no binding: the alternate exchange parks it.
	malformed, err := publisher.PublishWithRoutingKey(ctx, "job.1.x", Message{ID: name + "-malformed"})
	if err != nil {
		t.Fatal(err)
	}
	getCtx, cancelGet := context.WithTimeout(ctx, 5*time.Second)
	defer cancelGet()
	parked, err := Get(getCtx, conn, topology.Names(name).Unroutable())
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMessage(parked.Body)
	if err != nil || got.ID != malformed.ID || parked.RoutingKey != "job.1.x" {
		t.Errorf("unroutable queue held %q with key %q (%v), want message %s with key job.1.x", parked.Body, parked.RoutingKey, err, malformed.ID)
	}
}

// TestPublishToMissingExchange checks that a publish the broker refuses
// returns an error naming the broker's reason instead of hanging.
func TestPublishToMissingExchange(t *testing.T) {
	conn := brokerConn(t)
	publisher, err := NewPublisher(conn, Set{IngestExchange: uniqueName("no-such-exchange"), Levels: 2, Resolution: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = publisher.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = publisher.Publish(ctx, Delayed{ID: "lost", Delay: time.Second})
	if err == nil || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Fatalf("Publish to a missing exchange: %v; want an error with NOT_FOUND", err)
	}
	// The channel is gone: later publishes fail at once too.
	if _, err := publisher.Publish(ctx, Delayed{ID: "later", Delay: 0}); err == nil {
		t.Fatal("Publish on the closed channel succeeded")
	}
}

// TestPublishRefusesBadDelay checks that keys are checked before anything is sent.
func TestPublishRefusesBadDelay(t *testing.T) {
	conn := brokerConn(t)
	publisher, err := NewPublisher(conn, Set{IngestExchange: "amq.topic", Levels: 2, Resolution: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = publisher.Close() }()
	sent, err := publisher.PublishBatch(context.Background(), []Delayed{{ID: "ok", Delay: time.Second}, {ID: "too-long", Delay: 4 * time.Second}})
	if err == nil || !strings.Contains(err.Error(), "too-long") || len(sent) != 0 {
		t.Fatalf("PublishBatch with a delay beyond 3s = %v, %v; want no message sent and an error naming too-long", sent, err)
	}
}

// TestConsumerCountsDuplicatesAndForeign publishes straight to a queue
// (default exchange) the same id twice and a body from elsewhere.
func TestConsumerCountsDuplicatesAndForeign(t *testing.T) {
	conn := brokerConn(t)
	queue := uniqueName("messaging-dup")
	if err := DeclareQueue(conn, queue); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := DeleteQueue(conn, queue); err != nil {
			t.Error(err)
		}
	})
	publisher, err := NewPublisher(conn, Set{IngestExchange: "", Levels: 1, Resolution: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = publisher.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range []string{"run-a", "run-a", "other-b", "run-c"} {
		if _, err := publisher.PublishWithRoutingKey(ctx, queue, Message{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	consumer, err := NewConsumer(conn, queue, ConsumerOptions{IDPrefix: "run-", OnArrival: func(a Arrival, duplicate bool) {
		seen = append(seen, fmt.Sprintf("%s %v", a.Message.ID, duplicate))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := consumer.WaitFor(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := consumer.Settle(ctx, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := consumer.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(consumer.Arrivals()); got != 2 {
		t.Errorf("%d arrivals, want 2 (run-a, run-c)", got)
	}
	if d := consumer.Duplicates(); len(d) != 1 || d[0].Message.ID != "run-a" {
		t.Errorf("duplicates %+v, want run-a once", d)
	}
	if f := consumer.Foreign(); len(f) != 1 || !strings.Contains(f[0].Reason, `"other-b"`) {
		t.Errorf("foreign %+v, want other-b", f)
	}
	if want := "run-a false,run-a true,run-c false"; strings.Join(seen, ",") != want {
		t.Errorf("OnArrival saw %q, want %q", strings.Join(seen, ","), want)
	}
	// After Close, waiting fails with the reason instead of blocking.
	if err := consumer.WaitFor(ctx, 3); err == nil || !strings.Contains(err.Error(), "2 of 3") {
		t.Errorf("WaitFor after Close = %v, want an error saying 2 of 3", err)
	}
}

// TestQuorumQueueExpiryClock measures the bound the layout's punctuality
// rests on: a message leaves a TTL queue never more than [BrokerClock]
// before its TTL has passed since the publisher read the publish time. A
// quorum queue stamps a message's expiry from a clock of whole
// milliseconds, so it may be up to that much early (a few messages in a
// thousand at a 3 ms TTL, here); the test logs how many were, and by how
// much.
func TestQuorumQueueExpiryClock(t *testing.T) {
	conn := brokerConn(t)
	const messages, ttl = 1000, 3 * time.Millisecond
	for _, queueType := range topology.QueueTypes {
		t.Run(string(queueType), func(t *testing.T) {
			waiting, out := uniqueName("messaging-clock-"+string(queueType)), uniqueName("messaging-clock-out")
			ch, err := conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = ch.Close() }()
			if err := DeclareQueue(conn, out); err != nil {
				t.Fatal(err)
			}
			_, err = ch.QueueDeclare(waiting, true, false, false, false, amqp.Table{"x-queue-type": string(queueType),
				"x-message-ttl": ttl.Milliseconds(), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": out})
			t.Cleanup(func() {
				for _, q := range []string{waiting, out} {
					if err := DeleteQueue(conn, q); err != nil {
						t.Error(err)
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			consumer, err := NewConsumer(conn, out, ConsumerOptions{IDPrefix: waiting})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = consumer.Close() }()
			publisher, err := NewPublisher(conn, Set{IngestExchange: "", Levels: 1, Resolution: ttl})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = publisher.Close() }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i := range messages {
				if _, err := publisher.PublishWithRoutingKey(ctx, waiting, Message{ID: fmt.Sprintf("%s-%04d", waiting, i), Delay: ttl}); err != nil {
					t.Fatal(err)
				}
			}
			if err := consumer.WaitFor(ctx, messages); err != nil {
				t.Fatal(err)
			}
			summary := Summarize(consumer.Arrivals())
			if summary.Early > 0 {
				t.Errorf("%s queue: %s: a message left its queue more than %s before its TTL had passed", queueType, summary, BrokerClock)
			}
			t.Logf("%s queue, TTL %s: %s", queueType, ttl, summary)
		})
	}
}
