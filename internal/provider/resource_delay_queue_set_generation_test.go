package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

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

// The set of the generation test: 6 levels of 1 s hold delays of 0 to 63 s.
const (
	generationLevels   = 6
	generationHeld     = 1000             // messages waiting when the change starts
	generationRate     = 100              // messages per second published through the change
	generationLongest  = 60 * time.Second // the longest delay asked
	generationLateness = time.Second      // the most a message may arrive after its delay, while a switch loads the 2 cores
)

// TestAccDelayQueueSet_changeUnderLoad changes a set that holds 1,000
// messages with delays up to 60 s while a publisher goes on at 100 msg/s
// (to the ingest exchange and in the key format it started with): from
// classic to quorum queues, from at-most-once to at-least-once, and from a
// resolution of 1 s to 100 ms. Each apply starts a new generation in place,
// the old one drains through its own queues, every message arrives, none
// early, the next apply after the old generation has emptied deletes it,
// and the plan after that is empty. After a change of key format, the old
// ingest exchange delays old-format messages right while its generation
// drains, and is gone with it: a publisher still using it then fails.
func TestAccDelayQueueSet_changeUnderLoad(t *testing.T) {
	tests := map[string]struct {
		from, to          string // the attribute that changes, as configured
		parkingLot        topology.QueueType
		drainingQueueType string
		final             topology.Spec // without name and routes
	}{
		"classic to quorum": {
			from: `queue_type = "classic"`, to: `queue_type = "quorum"`, parkingLot: topology.QueueTypeClassic,
			drainingQueueType: "classic", final: topology.Spec{Generation: 1, FormatGeneration: 0},
		},
		"at-most-once to at-least-once": {
			from: `dead_letter_strategy = "at-most-once"`, to: `dead_letter_strategy = "at-least-once"`, parkingLot: topology.QueueTypeQuorum,
			drainingQueueType: "quorum", final: topology.Spec{Generation: 1, FormatGeneration: 0},
		},
		"resolution 1s to 100ms": {
			from: `resolution = "1s"`, to: `resolution = "100ms"`, parkingLot: topology.QueueTypeQuorum,
			drainingQueueType: "quorum", final: topology.Spec{Resolution: 100 * time.Millisecond, Generation: 1, FormatGeneration: 1},
		},
	}
	for caseName, tc := range tests {
		t.Run(caseName, func(t *testing.T) {
			conn, name, routeQueue, seed := dataPathSetUp(t)
			client := testBrokerClient(t)
			names := topology.Names(name)
			config := func(attribute string) string {
				return fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "test" {
  name           = %q
  levels         = %d
  %s
  migration_wait = "0s" # leave the old generation draining, for the next apply
  force_destroy  = true # a failed run must not leave messages that block destroy

  route {
    destination = %q
    key         = %q
  }
}
`, name, generationLevels, attribute, routeQueue, dataPathKey)
			}
			load := &generationLoad{t: t, conn: conn, client: client, name: name, routeQueue: routeQueue, seed: seed}
			t.Cleanup(load.stop)
			final := tc.final
			final.Name, final.VHost, final.Levels = name, "/", generationLevels
			final.Routes = []topology.Route{{Destination: routeQueue, Key: dataPathKey}}
			ingest := names.Generation(final.FormatGeneration).Ingest()

			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             testCheckSetGone(client, name),
				Steps: []resource.TestStep{
					{Config: config(tc.from)},
					{
						PreConfig: load.start,
						Config:    config(tc.to),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
							plancheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
							plancheck.ExpectKnownValue(testResource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact(ingest)),
						}},
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("exchange_generation"), knownvalue.Int64Exact(int64(final.FormatGeneration))),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining").AtSliceIndex(0).AtMapKey("generation"), knownvalue.Int64Exact(0)),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining").AtSliceIndex(0).AtMapKey("queue_type"),
								knownvalue.StringExact(tc.drainingQueueType)),
						},
					},
					{
						// Every message arrives, the old generation empties, and the
						// next apply deletes it.
						PreConfig: load.finish,
						Config:    config(tc.to),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
							plancheck.ExpectUnknownValue(testResource, tfjsonpath.New("draining")),
						}},
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
						},
						Check: resource.ComposeTestCheckFunc(load.check, func(*terraform.State) error {
							// Only the new generation is left; the parking lot keeps its type.
							desired, err := topology.Plan(final)
							if err != nil {
								return err
							}
							desired = topology.KeepParkingLot(name, desired, tc.parkingLot)
							actual, err := client.ReadSet(context.Background(), "/", name)
							if err != nil {
								return err
							}
							if changes := topology.Diff(desired, actual); len(changes) > 0 {
								return fmt.Errorf("the broker differs from the new generation by %d changes, the first: %s %s",
									len(changes), changes[0].Kind, changes[0].Reason)
							}
							if ingest == names.Ingest() {
								return nil
							}
							// The old format's exchange went with its generation.
							err = testPublish(context.Background(), names.Ingest(), dataPathKey+".0.0.0.0.0.1")
							if err == nil || !strings.Contains(err.Error(), "NOT_FOUND") {
								return fmt.Errorf("publishing to %s after its generation was deleted: %v, want NOT_FOUND", names.Ingest(), err)
							}
							return nil
						}),
					},
					{Config: config(tc.to), PlanOnly: true},
				},
			})
		})
	}
}

// generationLoad publishes the generation test's messages: generationHeld
// at once with delays up to generationLongest, then generationRate a second
// until finish, and consumes them from the route's queue.
type generationLoad struct {
	t                *testing.T
	conn             *amqp.Connection
	client           *broker.Client
	name, routeQueue string
	seed             uint64

	consumer  *messaging.Consumer
	publisher *messaging.Publisher
	cancel    context.CancelFunc
	done      sync.WaitGroup

	mu   sync.Mutex
	sent []messaging.Message
	err  error
	// The change's apply ran between the end of start and the beginning of
	// finish: a message published then may be routed to both generations.
	window [2]time.Time
}

func (l *generationLoad) start() {
	var err error
	l.consumer, err = messaging.NewConsumer(l.conn, l.routeQueue, messaging.ConsumerOptions{IDPrefix: "gen-"})
	if err != nil {
		l.t.Fatal(err)
	}
	set := messaging.Set{IngestExchange: topology.Names(l.name).Ingest(), Levels: generationLevels, Resolution: time.Second}
	l.publisher, err = messaging.NewPublisher(l.conn, set)
	if err != nil {
		l.t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(l.seed, 1))
	// Whole ticks of 1 s, so that lateness is the broker's alone.
	delay := func() time.Duration {
		return time.Duration(rng.Int64N(int64(generationLongest/time.Second))+1) * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	l.cancel = cancel
	batch := make([]messaging.Delayed, generationHeld)
	for i := range batch {
		batch[i] = messaging.Delayed{ID: fmt.Sprintf("gen-held-%04d", i), Key: dataPathKey, Delay: delay()}
	}
	sent, err := l.publisher.PublishBatch(ctx, batch)
	if err != nil {
		l.t.Fatal(err)
	}
	l.sent = sent
	l.window[0] = time.Now()
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		ticker := time.NewTicker(time.Second / generationRate)
		defer ticker.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			m, err := l.publisher.Publish(ctx, messaging.Delayed{ID: fmt.Sprintf("gen-live-%06d", i), Key: dataPathKey, Delay: delay()})
			l.mu.Lock()
			if err != nil {
				if ctx.Err() == nil {
					l.err = err
				}
				l.mu.Unlock()
				return
			}
			l.sent = append(l.sent, m)
			l.mu.Unlock()
		}
	}()
}

// finish stops publishing a few seconds after the change's apply and
// waits until every message has arrived or is overdue.
func (l *generationLoad) finish() {
	l.window[1] = time.Now()
	time.Sleep(5 * time.Second) // messages published after the switch take the new generation
	l.stop()
	ctx, cancel := context.WithTimeout(context.Background(), generationLongest+30*time.Second)
	defer cancel()
	ids := make([]string, len(l.sent))
	for i, m := range l.sent {
		ids[i] = m.ID
	}
	if err := l.consumer.WaitForIDs(ctx, ids); err != nil {
		l.err = errors.Join(l.err, fmt.Errorf("lost messages: %w", err))
	}
	_ = l.consumer.Settle(ctx, time.Second)
	// The broker's statistics lag by up to an interval (5 s): the old
	// generation is empty for the next refresh once they say so too.
	old := topology.Generation{Levels: generationLevels, Radix: topology.DefaultRadix}.Queues(l.name)
	for {
		held, err := l.client.HeldMessages(ctx, "/", old)
		if err != nil || len(held) == 0 {
			l.err = errors.Join(l.err, err)
			return
		}
		select {
		case <-ctx.Done():
			l.err = errors.Join(l.err, fmt.Errorf("the old generation still holds %v", held))
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (l *generationLoad) stop() {
	if l.cancel != nil {
		l.cancel()
		l.done.Wait()
	}
}

// check says whether every message arrived, none early, none later than
// generationLateness after its delay, and once — but for those published
// while the change's apply moved the ingest bindings, which may reach both
// generations for the time of one request (see DESIGN.md).
func (l *generationLoad) check(*terraform.State) error {
	defer func() { _ = l.consumer.Close() }()
	problems := []error{l.err}
	for _, a := range l.consumer.Arrivals() {
		if a.Early() {
			problems = append(problems, fmt.Errorf("%s (delay %s) arrived %s early", a.Message.ID, a.Message.Delay, -a.Lateness))
		}
		if a.Lateness > generationLateness {
			problems = append(problems, fmt.Errorf("%s (delay %s) arrived %s late", a.Message.ID, a.Message.Delay, a.Lateness))
		}
	}
	for _, d := range l.consumer.Duplicates() {
		if published := d.Message.PublishedAt; published.Before(l.window[0]) || published.After(l.window[1]) {
			problems = append(problems, fmt.Errorf("%s arrived twice, although published outside the change", d.Message.ID))
		}
	}
	summary := messaging.Summarize(l.consumer.Arrivals())
	l.t.Logf("%d messages sent, %d published through the change, %d delivered twice: %s",
		len(l.sent), len(l.sent)-generationHeld, len(l.consumer.Duplicates()), summary)
	if len(problems) > 20 {
		problems = append(problems[:20], fmt.Errorf("… and %d more problems", len(problems)-20))
	}
	return errors.Join(problems...)
}
