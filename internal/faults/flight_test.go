package faults

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// ledger records the deliveries of one run's messages over every consumer
// and reconnection, so a redelivery after a reconnection counts as the
// duplicate it is.
type ledger struct {
	mu           sync.Mutex
	first        map[string]messaging.Arrival
	duplicates   []messaging.Arrival
	lastRecorded time.Time
}

func newLedger() *ledger {
	return &ledger{first: map[string]messaging.Arrival{}}
}

// record is a consumer's OnArrival; its own duplicate flag knows only that
// consumer's deliveries.
func (l *ledger) record(a messaging.Arrival, _ bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastRecorded = time.Now()
	if _, seen := l.first[a.Message.ID]; seen {
		l.duplicates = append(l.duplicates, a)
		return
	}
	l.first[a.Message.ID] = a
}

func (l *ledger) missing(sent []messaging.Message) []messaging.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []messaging.Message
	for _, m := range sent {
		if _, ok := l.first[m.ID]; !ok {
			out = append(out, m)
		}
	}
	return out
}

// waitForAll waits until every sent message has arrived or ctx ends; it
// reports the missing ones, which the caller may take for lost.
func (l *ledger) waitForAll(ctx context.Context, sent []messaging.Message) error {
	for {
		missing := l.missing(sent)
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d messages did not arrive, such as %s (delay %s): %w",
				len(missing), len(sent), missing[0].ID, missing[0].Delay, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// settle waits until nothing has arrived for quiet, so late duplicates show.
func (l *ledger) settle(ctx context.Context, quiet time.Duration) {
	for {
		l.mu.Lock()
		wait := time.Until(l.lastRecorded.Add(quiet))
		l.mu.Unlock()
		if wait <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// has reports whether the message with id has arrived.
func (l *ledger) has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.first[id]
	return ok
}

// row sums up what became of sent, as a line of the fault table; a message
// that did not arrive but is in parked (the set's unroutable queue) counts
// as parked rather than lost.
func (l *ledger) row(scenario string, sent []messaging.Message, parked *ledger, outage time.Duration) faultRow {
	var inParkingLot map[string]bool
	if parked != nil {
		inParkingLot = map[string]bool{}
		for _, m := range sent {
			if parked.has(m.ID) {
				inParkingLot[m.ID] = true
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	row := faultRow{Scenario: scenario, Messages: len(sent), Duplicated: len(l.duplicates), Outage: outage}
	arrivals := make([]messaging.Arrival, 0, len(l.first))
	for _, m := range sent {
		a, ok := l.first[m.ID]
		switch {
		case ok:
			arrivals = append(arrivals, a)
		case inParkingLot[m.ID]:
			row.Parked++
		default:
			row.Lost++
		}
	}
	for _, d := range l.duplicates {
		if d.Redelivered {
			row.Redelivered++
		}
	}
	summary := messaging.Summarize(arrivals)
	row.Early, row.P99, row.Max = summary.Early, summary.P99, summary.Max
	return row
}

// arrivals returns the first arrival of every message, in no order.
func (l *ledger) arrivals() []messaging.Arrival {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]messaging.Arrival, 0, len(l.first))
	for _, a := range l.first {
		out = append(out, a)
	}
	return out
}

// consume keeps a consumer on queue as an application would: through the
// first of urls that takes a connection, and again whenever the connection
// or its channel is lost, until the returned stop is called. Every delivery
// goes to l.
func consume(t *testing.T, urls []string, queue, idPrefix string, l *ledger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var lost time.Time // when the last connection was lost; zero while connected
		for attempt := 0; ctx.Err() == nil; attempt++ {
			url := urls[attempt%len(urls)]
			err := consumeOnce(ctx, url, queue, idPrefix, l, func() {
				if !lost.IsZero() {
					t.Logf("consumer of %s: connected again via %s after %s", queue, messaging.RedactURL(url), time.Since(lost).Round(time.Millisecond))
					lost = time.Time{}
				}
			})
			if ctx.Err() != nil {
				return
			}
			if lost.IsZero() {
				lost = time.Now()
				t.Logf("consumer of %s via %s: %v; connecting again every 0.5 s", queue, messaging.RedactURL(url), err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// consumeOnce consumes until the connection or channel ends, or ctx does;
// it calls consuming once the consumer is in place.
func consumeOnce(ctx context.Context, url, queue, idPrefix string, l *ledger, consuming func()) error {
	conn, err := messaging.Dial(url, 5*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	consumer, err := messaging.NewConsumer(conn, queue, messaging.ConsumerOptions{IDPrefix: idPrefix, OnArrival: l.record})
	if err != nil {
		return err
	}
	defer func() { _ = consumer.Close() }()
	consuming()
	// No count is ever reached: this returns when the consumer stops or ctx
	// ends, with an error that wraps why.
	err = consumer.WaitFor(ctx, math.MaxInt)
	if reason := errors.Unwrap(err); reason != nil {
		return reason
	}
	return err
}

// redact hides the password of an AMQP URL for the log.
// spreadDelays is n delays spread evenly over [from, to], in random order,
// each a whole number of ticks of resolution: rounding up to ticks adds no
// lateness, so what is measured is what the broker adds.
func spreadDelays(n int, from, to, resolution time.Duration, rng *rand.Rand) []time.Duration {
	delays := make([]time.Duration, n)
	for i := range delays {
		delays[i] = (from + (to-from)*time.Duration(i)/time.Duration(max(n-1, 1))).Truncate(resolution)
	}
	rng.Shuffle(n, func(i, j int) { delays[i], delays[j] = delays[j], delays[i] })
	return delays
}

// publishDelayed publishes one persistent message per delay through conn
// and returns them once the broker has confirmed every one.
func publishDelayed(ctx context.Context, conn *amqp.Connection, set messaging.Set, key, idPrefix string, delays []time.Duration) ([]messaging.Message, error) {
	publisher, err := messaging.NewPublisher(conn, set)
	if err != nil {
		return nil, err
	}
	defer func() { _ = publisher.Close() }()
	batch := make([]messaging.Delayed, len(delays))
	for i, delay := range delays {
		batch[i] = messaging.Delayed{ID: fmt.Sprintf("%s%05d", idPrefix, i), Key: key, Delay: delay}
	}
	sent, err := publisher.PublishBatch(ctx, batch)
	if err != nil {
		return nil, fmt.Errorf("publishing %d messages to %s: %w", len(batch), set.IngestExchange, err)
	}
	return sent, nil
}

// lastDue is when the last of sent may arrive at the earliest.
func lastDue(sent []messaging.Message) time.Time {
	var last time.Time
	for _, m := range sent {
		if due := m.Due(); due.After(last) {
			last = due
		}
	}
	return last
}

// declareQueue declares a route's destination, which the provider does not
// manage, and deletes it with its messages when the test ends. A classic
// queue lives on the node whose management API declared it.
func declareQueue(t *testing.T, client *broker.Client, name string, queueType topology.QueueType) {
	t.Helper()
	queue := topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: queueType}}
	if err := client.Apply(t.Context(), "/", []topology.Change{{Kind: topology.CreateQueue, Queue: &queue}}, broker.ApplyOptions{}); err != nil {
		t.Fatalf("declaring the route's queue %s: %v", name, err)
	}
	t.Cleanup(func() {
		remove := []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}
		if err := client.Apply(context.Background(), "/", remove, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
			t.Errorf("deleting the route's queue %s: %v", name, err)
		}
	})
}

// brokerClient is a management API client for a node, as the test's own
// eyes beside the provider.
func brokerClient(t *testing.T, endpoint string) *broker.Client {
	t.Helper()
	client, err := broker.New(broker.Config{Endpoint: endpoint, Username: "guest", Password: "guest", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// setUpNode starts the script's node index alone, with config, and declares
// the route's queue (a quorum queue) of a set named prefix and a random
// suffix: the preamble of a test that sends messages through one node.
func setUpNode(t *testing.T, index int, config nodeConfig, prefix string) (n *node, client *broker.Client, name, routeQueue string) {
	t.Helper()
	requireFaults(t)
	n = startNodes(t, config, index)[0]
	client = brokerClient(t, n.ManagementURL)
	name = prefix + strings.ToLower(acctest.RandString(6))
	routeQueue = name + ".work"
	declareQueue(t, client, routeQueue, topology.QueueTypeQuorum)
	return n, client, name, routeQueue
}

// checkSetGone asks the broker that nothing of the set is left.
func checkSetGone(client *broker.Client, name string) error {
	actual, err := client.ReadSet(context.Background(), "/", name)
	if err != nil {
		return err
	}
	if n := len(actual.Exchanges) + len(actual.Queues) + len(actual.Bindings); n > 0 {
		return fmt.Errorf("%d objects of the set %q remain after destroy", n, name)
	}
	return nil
}

// route is one route of a set: messages published with key go to queue.
type route struct {
	Queue, Key string
}

// setConfig is a provider block and a quorum set with routes, and
// migration_wait when it is not "" (the provider's default).
func setConfig(providerBlock, name string, levels int, resolution time.Duration, strategy topology.DeadLetterStrategy, migrationWait string,
	routes ...route,
) string {
	var b strings.Builder
	fmt.Fprintf(&b, `%s
resource "rabbitmq_delay_queue_set" "test" {
  name                 = %q
  levels               = %d
  resolution           = %q
  queue_type           = "quorum"
  dead_letter_strategy = %q
  force_destroy        = true # a failed run must not leave messages that block destroy
`, providerBlock, name, levels, resolution, strategy)
	if migrationWait != "" {
		fmt.Fprintf(&b, "  migration_wait       = %q\n", migrationWait)
	}
	for _, r := range routes {
		fmt.Fprintf(&b, `
  route {
    destination = %q
    key         = %q
  }
`, r.Queue, r.Key)
	}
	b.WriteString("}\n")
	return b.String()
}

func plainProvider(endpoint string) string {
	return fmt.Sprintf(`provider "rabbitmq" {
  endpoint = %q
  username = "guest"
  password = "guest"
}`, endpoint)
}

// joinErrors is errors.Join that keeps at most 20 of them readable.
func joinErrors(problems []error) error {
	if len(problems) > 20 {
		problems = append(problems[:20], fmt.Errorf("… and %d more", len(problems)-20))
	}
	return errors.Join(problems...)
}
