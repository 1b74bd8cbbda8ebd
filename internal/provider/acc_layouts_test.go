package provider

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The libraries' layouts have fixed names, so every test of them runs in a
// vhost of its own (testVhost): two tests, or a test and a real NServiceBus
// or Celery on the shared broker, never meet.

// libraryCase is how one library declares its delay infrastructure at
// start-up, binds its destination and publishes, as its own sources do
// (the NServiceBus RabbitMQ transport's DelayInfrastructure.Build, v2, and
// kombu's declare_native_delayed_delivery_exchanges_and_queues and
// bind_queue_to_native_delayed_delivery_exchange).
type libraryCase struct {
	layout topology.Layout
	// setName names the resource's set; the objects have the library's names.
	setName string
	// destination is the exchange the delivery exchange routes to: an
	// NServiceBus endpoint's fanout exchange, a Celery task queue's topic
	// exchange; queue is the queue behind it.
	destination, queue string
	// routeKey is the route's key, bound from the delivery exchange as
	// "#.<routeKey>"; publishKey is what a message carries after its bits.
	routeKey, publishKey string
	// declareDestination declares the destination exchange and queue, as
	// the library declares them for an endpoint or task queue.
	declareDestination func(ch *amqp.Channel) error
	// replay makes the library's own declarations of the delay
	// infrastructure and of its destination's binding.
	replay func(ch *amqp.Channel) error
	// promised is the delay the library delivers a message after for a
	// requested delay: NServiceBus rounds up to seconds, Celery truncates.
	promised func(time.Duration) time.Duration
	// delays are requested delays, as the library accepts them (Celery
	// refuses a countdown under a second), spanning bits 0 to 5.
	delays []time.Duration
}

func seconds(values ...float64) []time.Duration {
	delays := make([]time.Duration, len(values))
	for i, v := range values {
		delays[i] = time.Duration(v * float64(time.Second))
	}
	return delays
}

var libraryCases = map[string]libraryCase{
	"nservicebus": {
		layout: topology.LayoutNServiceBus, setName: "nsb", destination: "Sales", queue: "Sales",
		routeKey: "Sales", publishKey: "Sales",
		declareDestination: func(ch *amqp.Channel) error {
			// The conventional routing topology: an endpoint's fanout exchange and queue of its name.
			return declareBoundQueue(ch, "Sales", "fanout", "Sales", "")
		},
		replay:   replayNServiceBus("Sales"),
		promised: func(d time.Duration) time.Duration { return (d + time.Second - 1).Truncate(time.Second) },
		delays:   seconds(0, 0.4, 1, 1.6, 2, 3, 4.5, 5, 7, 8, 9.3, 12, 16, 17.5, 23, 31, 32, 33.2, 40),
	},
	"celery": {
		layout: topology.LayoutCelery, setName: "celery", destination: "tasks", queue: "tasks",
		routeKey: "tasks.#", publishKey: "tasks.add",
		declareDestination: func(ch *amqp.Channel) error {
			// A task queue bound to its topic exchange on tasks.#, and, as the
			// worker's delayed-delivery bootstep binds it, on #.tasks.#.
			if err := declareBoundQueue(ch, "tasks", "topic", "tasks", "tasks.#"); err != nil {
				return err
			}
			return ch.QueueBind("tasks", "#.tasks.#", "tasks", false, nil)
		},
		replay:   replayCelery("quorum", "tasks", "tasks.#"),
		promised: func(d time.Duration) time.Duration { return d.Truncate(time.Second) },
		delays:   seconds(1, 1.6, 2, 3, 4.5, 5, 7, 8, 9.3, 12, 16, 17.5, 23, 31, 32, 33.2, 40),
	},
}

// declareBoundQueue declares a durable exchange and a classic queue bound to it.
func declareBoundQueue(ch *amqp.Channel, exchange, kind, queue, key string) error {
	if err := ch.ExchangeDeclare(exchange, kind, true, false, false, false, nil); err != nil {
		return fmt.Errorf("declaring exchange %s: %w", exchange, err)
	}
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		return fmt.Errorf("declaring queue %s: %w", queue, err)
	}
	return ch.QueueBind(queue, key, exchange, false, nil)
}

// levelBindingKey is "*." repeated 27 − level times, then bit and ".#".
func levelBindingKey(level int, bit string) string {
	return strings.Repeat("*.", 27-level) + bit + ".#"
}

// libraryStartUp is what a library declares at start-up. Both make the
// same calls in the same order: for each level from 27 down, its exchange,
// its queue and the queue's binding; the exchange-to-exchange bindings from
// 27 down; the delivery exchange and level 0's binding to it; then the
// binding of a destination from the delivery exchange.
type libraryStartUp struct {
	layout   topology.Layout
	delivery string
	// ttl is level k's x-message-ttl with the library's integer type.
	ttl func(k int) any
	// queueArguments are the arguments of a level queue, but its TTL and
	// dead-letter exchange.
	queueArguments amqp.Table
	// destination is bound from the delivery exchange on destinationKey.
	destination, destinationKey string
}

func (s libraryStartUp) replay(ch *amqp.Channel) error {
	level := func(k int) string { return libraryLevel(s.layout, k) }
	for k := 27; k >= 0; k-- {
		next := s.delivery
		if k > 0 {
			next = level(k - 1)
		}
		if err := ch.ExchangeDeclare(level(k), "topic", true, false, false, false, nil); err != nil {
			return fmt.Errorf("declaring exchange %s: %w", level(k), err)
		}
		arguments := amqp.Table{"x-message-ttl": s.ttl(k), "x-dead-letter-exchange": next}
		for name, value := range s.queueArguments {
			arguments[name] = value
		}
		if _, err := ch.QueueDeclare(level(k), true, false, false, false, arguments); err != nil {
			return fmt.Errorf("declaring queue %s: %w", level(k), err)
		}
		if err := ch.QueueBind(level(k), levelBindingKey(k, "1"), level(k), false, nil); err != nil {
			return fmt.Errorf("binding queue %s: %w", level(k), err)
		}
	}
	for k := 27; k >= 1; k-- {
		if err := ch.ExchangeBind(level(k-1), levelBindingKey(k, "0"), level(k), false, nil); err != nil {
			return fmt.Errorf("binding exchange %s to %s: %w", level(k), level(k-1), err)
		}
	}
	if err := ch.ExchangeDeclare(s.delivery, "topic", true, false, false, false, nil); err != nil {
		return fmt.Errorf("declaring exchange %s: %w", s.delivery, err)
	}
	if err := ch.ExchangeBind(s.delivery, levelBindingKey(0, "0"), level(0), false, nil); err != nil {
		return fmt.Errorf("binding exchange %s to %s: %w", level(0), s.delivery, err)
	}
	if err := ch.ExchangeBind(s.destination, "#."+s.destinationKey, s.delivery, false, nil); err != nil {
		return fmt.Errorf("binding exchange %s to %s: %w", s.delivery, s.destination, err)
	}
	return nil
}

// replayNServiceBus makes the declarations of NServiceBus's
// DelayInfrastructure.Build (v2): x-message-ttl is a .NET long
// (Convert.ToInt64), an AMQP long-long; then the binding of an endpoint's
// exchange to the delivery exchange that the transport's queue setup makes.
func replayNServiceBus(endpoint string) func(ch *amqp.Channel) error {
	return libraryStartUp{
		layout: topology.LayoutNServiceBus, delivery: "nsb.v2.delay-delivery",
		ttl: func(k int) any { return int64(1<<k) * 1000 },
		queueArguments: amqp.Table{
			"x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish",
		},
		destination: endpoint, destinationKey: endpoint,
	}.replay
}

// replayCelery makes kombu's declarations of native delayed delivery for
// queueType, then the binding of a task queue's exchange that the worker's
// bootstep makes. A Python int goes on the wire (py-amqp) as a signed 32-bit
// integer when it fits and as a 64-bit one otherwise; so does x-message-ttl
// here (amqp091-go writes the 64-bit one as 'l' where py-amqp writes 'L';
// both are integers to the broker's equivalence check).
func replayCelery(queueType, exchange, routingKey string) func(ch *amqp.Channel) error {
	arguments := amqp.Table{"x-queue-type": queueType, "x-overflow": "reject-publish"}
	if queueType == "quorum" {
		arguments["x-dead-letter-strategy"] = "at-least-once"
	}
	return libraryStartUp{
		layout: topology.LayoutCelery, delivery: "celery_delayed_delivery",
		ttl: func(k int) any {
			if ms := int64(1<<k) * 1000; ms > math.MaxInt32 {
				return ms
			}
			return int32(1<<k) * 1000
		},
		queueArguments: arguments,
		destination:    exchange, destinationKey: routingKey,
	}.replay
}

// librarySetUp gives a test of the library case name a broker client, a
// vhost of its own, an AMQP connection to it, and the library's destination
// declared in it.
func librarySetUp(t *testing.T, name string) (client *broker.Client, vhost string, lc libraryCase, conn *amqp.Connection) {
	t.Helper()
	client = testBrokerClient(t)
	vhost = testVhost(t)
	lc = libraryCases[name]
	conn = libraryVhostConn(t, vhost)
	if err := onChannel(conn, lc.declareDestination); err != nil {
		t.Fatal(err)
	}
	return client, vhost, lc, conn
}

// libraryVhostConn is an AMQP connection to vhost, closed when the test ends.
func libraryVhostConn(t *testing.T, vhost string) *amqp.Connection {
	t.Helper()
	uri, err := amqp.ParseURI(messaging.URLFromEnv())
	if err != nil {
		t.Fatalf("%s: %v", messaging.URLEnv, err)
	}
	uri.Vhost = vhost
	conn, err := messaging.Dial(uri.String(), 10*time.Second)
	if err != nil {
		t.Fatalf("connecting to vhost %s over AMQP: %v", vhost, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// onChannel runs f on a channel of its own: a refused declaration closes
// the channel, and the error names it and the broker's reason
// (PRECONDITION_FAILED for arguments that differ).
func onChannel(conn *amqp.Connection, f func(*amqp.Channel) error) error {
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	defer func() { _ = ch.Close() }()
	return f(ch)
}

// libraryConfig is the configuration of lc's set in vhost, with extra
// attribute lines.
func libraryConfig(lc libraryCase, vhost, extra string) string {
	return fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "test" {
  name   = %q
  vhost  = %q
  layout = %q
%s
  route {
    destination      = %q
    destination_type = "exchange"
    key              = %q
  }
}
`, lc.setName, vhost, lc.layout, extra, lc.destination, lc.routeKey)
}

// libraryCheckGone asks the broker that nothing of lc's layout remains in vhost.
func libraryCheckGone(client *broker.Client, lc libraryCase, vhost string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		actual, err := client.ReadSetOf(context.Background(), vhost, lc.setName, lc.layout)
		if err != nil {
			return err
		}
		if n := len(actual.Exchanges) + len(actual.Queues) + len(actual.Bindings); n > 0 {
			return fmt.Errorf("%d objects of the %s layout remain after destroy", n, lc.layout)
		}
		return nil
	}
}

// libraryCheckMatchesPlan asks the broker that lc's set is exactly its plan.
func libraryCheckMatchesPlan(client *broker.Client, lc libraryCase, vhost string) resource.TestCheckFunc {
	return libraryCheckHolds(client, vhost, topology.Spec{Name: lc.setName, VHost: vhost, Layout: lc.layout, Routes: []topology.Route{
		{Destination: lc.destination, DestinationType: topology.DestinationExchange, Key: lc.routeKey}}})
}

// libraryCheckHolds asks the broker that the set of spec is exactly its
// plan and the given bindings a library made: nothing missing, nothing else.
func libraryCheckHolds(client *broker.Client, vhost string, spec topology.Spec, library ...topology.Binding) resource.TestCheckFunc {
	return func(*terraform.State) error {
		desired, err := testPlan(spec)
		if err != nil {
			return err
		}
		desired.Bindings = append(desired.Bindings, library...)
		actual, err := client.ReadSetOf(context.Background(), vhost, spec.Name, spec.Layout)
		if err != nil {
			return err
		}
		if changes := topology.Diff(desired, actual); len(changes) > 0 {
			return fmt.Errorf("the broker differs from the %s plan and the library's %d bindings by %d changes, the first: %s %s: %s",
				spec.Layout, len(library), len(changes), changes[0].Kind, changeObject(changes[0]), changes[0].Reason)
		}
		return nil
	}
}

// changeObject names what a change is about.
func changeObject(c topology.Change) string {
	switch {
	case c.Binding != nil:
		return c.Binding.String()
	case c.Queue != nil:
		return c.Queue.Name
	case c.Exchange != nil:
		return c.Exchange.Name
	}
	return ""
}

// TestAccDelayQueueSet_libraryLayouts applies each library's layout with a
// route to the library's destination, then: replays over AMQP every
// declaration the library makes at start-up, with its argument types, which
// must all succeed (no PRECONDITION_FAILED), and the plan after it is
// empty; publishes the way the library publishes (entry exchange, key
// format, rounding) delays spanning six bits, each arriving once, never
// before the library's delay, through the level queues of its bits; refuses
// to destroy while a queue holds a message; destroys with force_destroy.
func TestAccDelayQueueSet_libraryLayouts(t *testing.T) {
	for name := range libraryCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, vhost, lc, conn := librarySetUp(t, name)
			config := libraryConfig(lc, vhost, "")
			resolved, err := topology.Resolve(topology.Spec{Name: lc.setName, VHost: vhost, Layout: lc.layout})
			if err != nil {
				t.Fatal(err)
			}
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             libraryCheckGone(client, lc, vhost),
				Steps: []resource.TestStep{
					{
						Config: config,
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("levels"), knownvalue.Int64Exact(28)),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("resolution"), knownvalue.StringExact("1s")),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("radix"), knownvalue.Int64Exact(2)),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("queue_type"), knownvalue.StringExact("quorum")),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact(resolved.IngestExchange())),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("out_exchange"), knownvalue.StringExact(resolved.OutExchange())),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("unroutable_queue"), knownvalue.Null()),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("queues"), knownLineCount(28)),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("exchanges"), knownLineCount(29)),
						},
						Check: resource.ComposeAggregateTestCheckFunc(
							libraryCheckMatchesPlan(client, lc, vhost),
							func(*terraform.State) error {
								if err := onChannel(conn, lc.replay); err != nil {
									return fmt.Errorf("the %s start-up declarations against the applied set: %w", lc.layout, err)
								}
								return nil
							},
						),
					},
					{
						// After the library's own declarations, nothing to change.
						Config:   config,
						PlanOnly: true,
					},
					{
						Config: config,
						Check:  libraryCheckDataPath(t, conn, lc),
					},
					{
						// A message waits an hour: destroy refuses, and keeps it.
						PreConfig: func() {
							publisher, err := messaging.NewPublisher(conn, messaging.Set{Layout: lc.layout})
							if err == nil {
								defer func() { _ = publisher.Close() }()
								_, err = publisher.Publish(context.Background(), messaging.Delayed{ID: "kept", Key: lc.publishKey, Delay: time.Hour})
							}
							if err != nil {
								t.Fatalf("publishing the kept message: %v", err)
							}
						},
						Config:      config,
						Destroy:     true,
						ExpectError: regexp.MustCompile(`Delay Queues Hold Messages`),
					},
					{
						Config: config,
						Check: func(*terraform.State) error {
							// 3600 s = bits 11, 10, 9 and 4: the message waits in level 11's queue.
							// Where a peek would count as a delivery (4.0–4.2) HeldMessages
							// reads the statistics, which lag: first wait until they count it.
							if err := testWaitCounted(context.Background(), client, vhost, libraryLevel(lc.layout, 11)); err != nil {
								return fmt.Errorf("after the refused destroy: %w", err)
							}
							held, err := client.HeldMessages(context.Background(), vhost, []string{libraryLevel(lc.layout, 11)})
							if err != nil {
								return err
							}
							if held[libraryLevel(lc.layout, 11)] != 1 {
								return fmt.Errorf("after the refused destroy level 11 holds %v, want the one message", held)
							}
							return nil
						},
					},
					{
						Config: libraryConfig(lc, vhost, "  force_destroy = true"),
					},
				},
			})
		})
	}
}

// libraryLevel is the name of level k's queue and exchange in layout.
func libraryLevel(layout topology.Layout, k int) string {
	if layout == topology.LayoutNServiceBus {
		return fmt.Sprintf("nsb.v2.delay-level-%02d", k)
	}
	return fmt.Sprintf("celery_delayed_%d", k)
}

// libraryWantQueues is the level queues a message the library delays by
// promised passes: those of the set bits of its seconds, sorted. A delay
// counted a second wrong (a rounding, a bit) passes others, whatever the
// machine's load.
func libraryWantQueues(layout topology.Layout, promised time.Duration) []string {
	var queues []string
	for k, rest := 0, uint64(promised/time.Second); rest > 0; k, rest = k+1, rest>>1 {
		if rest&1 == 1 {
			queues = append(queues, libraryLevel(layout, k))
		}
	}
	slices.Sort(queues)
	return queues
}

// libraryPassedQueues is the queues a's x-death header names, sorted, and
// whether each names it once, expired.
func libraryPassedQueues(a messaging.Arrival) ([]string, bool) {
	var queues []string
	once := true
	for _, d := range a.Deaths {
		queues = append(queues, d.Queue)
		once = once && d.Count == 1 && d.Reason == "expired"
	}
	slices.Sort(queues)
	return queues, once
}

// libraryCheckDataPath publishes each of lc's delays twice, as the library
// publishes it, and checks every arrival at the destination's queue.
func libraryCheckDataPath(t *testing.T, conn *amqp.Connection, lc libraryCase) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := testHangContext(lc.promised(slices.Max(lc.delays)))
		defer cancel()
		runID := fmt.Sprintf("%s-%d-", lc.layout, time.Now().UnixNano())
		consumer, err := messaging.NewConsumer(conn, lc.queue, messaging.ConsumerOptions{IDPrefix: runID})
		if err != nil {
			return err
		}
		defer func() { _ = consumer.Close() }()
		publisher, err := messaging.NewPublisher(conn, messaging.Set{Layout: lc.layout})
		if err != nil {
			return err
		}
		defer func() { _ = publisher.Close() }()
		var batch []messaging.Delayed
		for copyNumber := range 2 {
			for i, delay := range lc.delays {
				batch = append(batch, messaging.Delayed{ID: fmt.Sprintf("%s%d-%d", runID, i, copyNumber), Key: lc.publishKey, Delay: delay})
			}
		}
		started := time.Now()
		if _, err := publisher.PublishBatch(ctx, batch); err != nil {
			return err
		}
		if err := consumer.WaitFor(ctx, len(batch)); err != nil {
			return fmt.Errorf("%d of %d messages arrived: %w", len(consumer.Arrivals()), len(batch), err)
		}
		var problems []string
		worst := time.Duration(math.MinInt64)
		for _, a := range consumer.Arrivals() {
			promised := lc.promised(a.Message.Delay)
			lateness := a.ArrivedAt.Sub(a.Message.PublishedAt.Add(promised))
			worst = max(worst, lateness)
			if lateness <= -messaging.BrokerClock {
				problems = append(problems, fmt.Sprintf("%s (delay %s, the library's %s) arrived %s early", a.Message.ID, a.Message.Delay, promised, -lateness))
			}
			want := libraryWantQueues(lc.layout, promised)
			if passed, once := libraryPassedQueues(a); !slices.Equal(passed, want) || !once {
				problems = append(problems, fmt.Sprintf("%s (delay %s, the library's %s) passed %v (x-death %+v), want each of %v once, expired",
					a.Message.ID, a.Message.Delay, promised, passed, a.Deaths, want))
			}
		}
		if d := consumer.Duplicates(); len(d) > 0 {
			problems = append(problems, fmt.Sprintf("%d duplicates, the first %s", len(d), d[0].Message.ID))
		}
		if f := consumer.Foreign(); len(f) > 0 {
			problems = append(problems, fmt.Sprintf("%d foreign deliveries, the first: %s", len(f), f[0].Reason))
		}
		t.Logf("%s: %d messages of %s to %s arrived in %s, the latest %s after the library's delay",
			lc.layout, len(batch), lc.delays[0], lc.delays[len(lc.delays)-1], time.Since(started).Round(time.Millisecond), worst.Round(time.Millisecond))
		if len(problems) > 0 {
			return fmt.Errorf("%s data path:\n%s", lc.layout, strings.Join(problems, "\n"))
		}
		return nil
	}
}

// TestAccDelayQueueSet_importLibraryLayouts imports each library's delay
// infrastructure declared by the library's own start-up declarations (the
// AMQP replay, not the provider): an import block with
// -generate-config-out writes a configuration that plans no change, and
// `terraform import` followed by the library's configuration plans clean.
func TestAccDelayQueueSet_importLibraryLayouts(t *testing.T) {
	for name := range libraryCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, vhost, lc, conn := librarySetUp(t, name)
			if err := onChannel(conn, lc.replay); err != nil {
				t.Fatal(err)
			}
			id := url.PathEscape(vhost) + "/" + lc.setName
			config := libraryConfig(lc, vhost, "")
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				TerraformVersionChecks:   testTerraform1_8,
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             libraryCheckGone(client, lc, vhost),
				Steps: []resource.TestStep{
					{
						Config:          `provider "rabbitmq" {}`,
						ResourceName:    testResource,
						ImportState:     true,
						ImportStateKind: resource.ImportBlockWithID,
						ImportStateId:   id,
						GenerateConfig:  true,
						ImportPlanChecks: resource.ImportPlanChecks{
							PreApply: []plancheck.PlanCheck{
								plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionNoop),
								plancheck.ExpectKnownValue(testResource, tfjsonpath.New("layout"), knownvalue.StringExact(string(lc.layout))),
								plancheck.ExpectKnownValue(testResource, tfjsonpath.New("levels"), knownvalue.Int64Exact(28)),
								plancheck.ExpectKnownValue(testResource, tfjsonpath.New("route").AtSliceIndex(0).AtMapKey("key"),
									knownvalue.StringExact(lc.routeKey)),
							},
						},
					},
					{
						Config:             config,
						ResourceName:       testResource,
						ImportState:        true,
						ImportStateId:      id,
						ImportStatePersist: true,
					},
					{
						Config:   config,
						PlanOnly: true,
						Check:    libraryCheckMatchesPlan(client, lc, vhost),
					},
				},
			})
		})
	}
}

// TestAccDelayQueueSet_importLibraryLayoutDrift imports an NServiceBus
// delay infrastructure whose level 03 queue was declared with another TTL
// and whose level 05 → 04 exchange binding is missing: the plan shows
// exactly those two differences, the apply repairs them (the queue is
// empty), and the plan after it is empty. The layout is named in the ID.
func TestAccDelayQueueSet_importLibraryLayoutDrift(t *testing.T) {
	client, vhost, lc, conn := librarySetUp(t, "nservicebus")
	if err := onChannel(conn, lc.replay); err != nil {
		t.Fatal(err)
	}
	drifted := func(ch *amqp.Channel) error {
		level3, level4, level5 := libraryLevel(lc.layout, 3), libraryLevel(lc.layout, 4), libraryLevel(lc.layout, 5)
		if _, err := ch.QueueDelete(level3, false, false, false); err != nil {
			return err
		}
		arguments := amqp.Table{"x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish",
			"x-message-ttl": int64(9000), "x-dead-letter-exchange": libraryLevel(lc.layout, 2)}
		if _, err := ch.QueueDeclare(level3, true, false, false, false, arguments); err != nil {
			return err
		}
		if err := ch.QueueBind(level3, levelBindingKey(3, "1"), level3, false, nil); err != nil {
			return err
		}
		return ch.ExchangeUnbind(level4, levelBindingKey(5, "0"), level5, false, nil)
	}
	if err := onChannel(conn, drifted); err != nil {
		t.Fatalf("declaring the drift: %v", err)
	}
	missing := fmt.Sprintf(`%s -> exchange %s, key %q`, libraryLevel(lc.layout, 5), libraryLevel(lc.layout, 4), levelBindingKey(5, "0"))
	config := libraryConfig(lc, vhost, "")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             libraryCheckGone(client, lc, vhost),
		Steps: []resource.TestStep{
			{
				Config:             config,
				ResourceName:       testResource,
				ImportState:        true,
				ImportStateId:      url.PathEscape(vhost) + "/" + lc.setName + "/" + string(lc.layout),
				ImportStatePersist: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("queues"),
							knownLine(3, knownvalue.StringRegexp(regexp.MustCompile(`, x-message-ttl 8000(,|$)`)))),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLine(11, knownvalue.StringExact(missing))),
					},
				},
				Check: libraryCheckMatchesPlan(client, lc, vhost),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

// TestAccDelayQueueSet_layoutChangeReplaces changes a set's layout from the
// default one to celery and back: each change replaces the set (the
// layouts' objects have other names), and nothing of the old layout stays.
func TestAccDelayQueueSet_layoutChangeReplaces(t *testing.T) {
	client, vhost, lc, _ := librarySetUp(t, "celery")
	defaultLayout := fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "test" {
  name   = %q
  vhost  = %q
  levels = 2
}
`, lc.setName, vhost)
	replaced := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionDestroyBeforeCreate),
	}}
	defaultGone := func(*terraform.State) error {
		actual, err := client.ReadSet(context.Background(), vhost, lc.setName)
		if err != nil {
			return err
		}
		if n := len(actual.Exchanges) + len(actual.Queues); n > 0 {
			return fmt.Errorf("%d objects of the default layout remain", n)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeAggregateTestCheckFunc(defaultGone, libraryCheckGone(client, lc, vhost)),
		Steps: []resource.TestStep{
			{
				Config:            defaultLayout,
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(testResource, tfjsonpath.New("layout"), knownvalue.StringExact("default"))},
			},
			{
				Config:           libraryConfig(lc, vhost, ""),
				ConfigPlanChecks: replaced,
				Check:            resource.ComposeAggregateTestCheckFunc(defaultGone, libraryCheckMatchesPlan(client, lc, vhost)),
			},
			{
				Config:           defaultLayout,
				ConfigPlanChecks: replaced,
				Check:            libraryCheckGone(client, lc, vhost),
			},
		},
	})
}

// TestAccDelayQueueSet_oneLibrarySetPerVhost declares a second set of the
// nservicebus layout in a vhost that has one: its names are the first's, so
// its create fails, pointing to the import, and the first set is untouched.
func TestAccDelayQueueSet_oneLibrarySetPerVhost(t *testing.T) {
	client, vhost, lc, _ := librarySetUp(t, "nservicebus")
	first := libraryConfig(lc, vhost, "")
	second := first + fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "second" {
  name       = "nsb-again"
  vhost      = %q
  layout     = "nservicebus"
  depends_on = [rabbitmq_delay_queue_set.test]
}
`, vhost)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             libraryCheckGone(client, lc, vhost),
		Steps: []resource.TestStep{
			{Config: first},
			{
				Config:      second,
				ExpectError: regexp.MustCompile(`(?s)Delay Queue Set Already Exists.*Objects of the nservicebus layout already exist`),
			},
			{
				Config: first,
				Check:  libraryCheckMatchesPlan(client, lc, vhost),
			},
		},
	})
}

// TestAccDelayQueueSet_celeryQueueTypeChange changes a Celery set's queue
// type from quorum to classic: refused, changing nothing, while a level
// queue holds a task; once the queue is empty the queues are declared again
// as classic, kombu's declarations for broker_native_delayed_delivery_queue_type
// = "classic" then succeed, and the plan after them is empty.
func TestAccDelayQueueSet_celeryQueueTypeChange(t *testing.T) {
	client, vhost, lc, conn := librarySetUp(t, "celery")
	classic := libraryConfig(lc, vhost, `  queue_type = "classic"`)
	holding := libraryLevel(lc.layout, 11) // 3600 s = bits 11, 10, 9 and 4
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             libraryCheckGone(client, lc, vhost),
		Steps: []resource.TestStep{
			{
				Config: libraryConfig(lc, vhost, ""),
				Check: func(*terraform.State) error {
					publisher, err := messaging.NewPublisher(conn, messaging.Set{Layout: lc.layout})
					if err != nil {
						return err
					}
					defer func() { _ = publisher.Close() }()
					if _, err = publisher.Publish(context.Background(), messaging.Delayed{ID: "kept", Key: lc.publishKey, Delay: time.Hour}); err != nil {
						return err
					}
					// Where a peek would count as a delivery (4.0–4.2) the check
					// before the change reads the statistics alone: once they
					// count the task, it refuses before changing anything.
					return testWaitForStatistics(client, vhost, holding, 1)
				},
			},
			{
				Config: classic,
				ExpectError: regexp.MustCompile(`(?s)Delay Queues Hold Messages.*` + regexp.QuoteMeta(holding) + `\s+holds\s+1\s+message` +
					`.*` + testPhrase("In the celery layout the queues have the library's names") + `.*` + testPhrase("declared again")),
			},
			{
				PreConfig: func() {
					if err := onChannel(conn, func(ch *amqp.Channel) error {
						_, err := ch.QueuePurge(holding, false)
						return err
					}); err != nil {
						t.Fatalf("purging %s: %v", holding, err)
					}
					// Until they count the purge, the statistics hold the queue:
					// a deletion is refused meanwhile.
					if err := testWaitForStatistics(client, vhost, holding, 0); err != nil {
						t.Fatal(err)
					}
				},
				Config: classic,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("queues"),
						knownLine(0, knownvalue.StringRegexp(regexp.MustCompile(`: x-queue-type "classic"`)))),
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("dead_letter_strategy"), knownvalue.StringExact("at-most-once")),
				},
				Check: func(*terraform.State) error {
					return onChannel(conn, replayCelery("classic", lc.destination, lc.routeKey))
				},
			},
			{
				Config:   classic,
				PlanOnly: true,
			},
		},
	})
}

// TestAccDelayQueueSet_importNamesTheLayout imports from a vhost that holds
// both libraries' infrastructure, each declared by its own replay: an ID
// without a layout is refused, saying to name it; with "/celery" the set
// imports as Celery's alone, and its configuration plans clean.
func TestAccDelayQueueSet_importNamesTheLayout(t *testing.T) {
	client, vhost, lc, conn := librarySetUp(t, "celery")
	nservicebus := libraryCases["nservicebus"]
	for _, declare := range []func(*amqp.Channel) error{lc.replay, nservicebus.declareDestination, nservicebus.replay} {
		if err := onChannel(conn, declare); err != nil {
			t.Fatal(err)
		}
	}
	config := libraryConfig(lc, vhost, "")
	id := url.PathEscape(vhost) + "/" + lc.setName
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             libraryCheckGone(client, lc, vhost),
		Steps: []resource.TestStep{
			{
				Config:        config,
				ResourceName:  testResource,
				ImportState:   true,
				ImportStateId: id,
				ExpectError:   regexp.MustCompile(`(?s)` + testPhrase("those of two layouts") + `.*` + testPhrase("at the end of the import ID")),
			},
			{
				Config:             config,
				ResourceName:       testResource,
				ImportState:        true,
				ImportStateId:      id + "/celery",
				ImportStatePersist: true,
			},
			{
				Config:   config,
				PlanOnly: true,
				Check: func(*terraform.State) error {
					// NServiceBus's infrastructure is no part of the set: still all there.
					actual, err := client.ReadSetOf(context.Background(), vhost, "any", nservicebus.layout)
					if err != nil {
						return err
					}
					if len(actual.Exchanges) != 29 || len(actual.Queues) != 28 {
						return fmt.Errorf("NServiceBus's infrastructure has %d exchanges and %d queues, want 29 and 28", len(actual.Exchanges), len(actual.Queues))
					}
					return nil
				},
			},
		},
	})
}

// TestAccDelayQueueSet_libraryBindingWithoutRoute: the binding an
// NServiceBus sender makes before a delayed send to an endpoint that has no
// route is the library's: the next plan is empty; an apply that repairs
// drift leaves it; removing the route of another endpoint leaves that
// route's binding too (the sender binds it as well); delayed messages sent
// as the transport sends them reach both endpoints; and destroy takes both
// bindings along with the delivery exchange.
func TestAccDelayQueueSet_libraryBindingWithoutRoute(t *testing.T) {
	client, vhost, lc, conn := librarySetUp(t, "nservicebus")
	config := libraryConfig(lc, vhost, "")
	withoutRoutes := fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "test" {
  name   = %q
  vhost  = %q
  layout = %q
}
`, lc.setName, vhost, lc.layout)
	spec := topology.Spec{Name: lc.setName, VHost: vhost, Layout: lc.layout}
	routed := spec
	routed.Routes = []topology.Route{{Destination: lc.destination, DestinationType: topology.DestinationExchange, Key: lc.routeKey}}
	billing := topology.Binding{Source: "nsb.v2.delay-delivery", Destination: "Billing", DestinationType: topology.DestinationExchange, RoutingKey: "#.Billing"}
	sales := topology.Binding{Source: "nsb.v2.delay-delivery", Destination: lc.destination, DestinationType: topology.DestinationExchange, RoutingKey: "#." + lc.routeKey}
	level5, level4 := libraryLevel(lc.layout, 5), libraryLevel(lc.layout, 4)
	// Each endpoint receives delays of one to three seconds, as the
	// transport sends them (rounded up, entering at the highest set bit).
	endpoint := func(name string) libraryCase {
		c := lc
		c.destination, c.queue, c.publishKey = name, name, name
		c.delays = seconds(0.4, 1, 2.5)
		return c
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			libraryCheckGone(client, lc, vhost),
			libraryCheckNoBindingFrom(vhost, billing.Source),
		),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// What the transport's dispatcher does before a delayed send to Billing.
				PreConfig: func() {
					if err := onChannel(conn, func(ch *amqp.Channel) error {
						if err := declareBoundQueue(ch, "Billing", "fanout", "Billing", ""); err != nil {
							return err
						}
						return ch.ExchangeBind(billing.Destination, billing.RoutingKey, billing.Source, false, nil)
					}); err != nil {
						t.Fatalf("binding Billing as a sender does: %v", err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: libraryCheckHolds(client, vhost, routed, billing),
			},
			{
				// Drift: a level-to-level binding goes; the apply repairs it
				// and leaves the sender's binding.
				PreConfig: func() {
					if err := onChannel(conn, func(ch *amqp.Channel) error {
						return ch.ExchangeUnbind(level4, levelBindingKey(5, "0"), level5, false, nil)
					}); err != nil {
						t.Fatalf("unbinding %s from %s: %v", level4, level5, err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				Check: libraryCheckHolds(client, vhost, routed, billing),
			},
			{
				// The route to Sales is removed: an update, which leaves its
				// binding to the library.
				Config: withoutRoutes,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLineCount(56)),
				},
				Check: libraryCheckHolds(client, vhost, spec, billing, sales),
			},
			{
				Config:   withoutRoutes,
				PlanOnly: true,
			},
			{
				Config: withoutRoutes,
				Check: resource.ComposeAggregateTestCheckFunc(
					libraryCheckDataPath(t, conn, endpoint("Billing")),
					libraryCheckDataPath(t, conn, endpoint(lc.destination)),
					// For destroy, which counts a queue's messages by the
					// statistics too: until they catch up, they still see the
					// messages that just passed.
					func(*terraform.State) error {
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						defer cancel()
						return testWaitEmpty(ctx, client, vhost, []string{libraryLevel(lc.layout, 0), libraryLevel(lc.layout, 1)})
					},
				),
			},
		},
	})
}

// TestAccDelayQueueSet_importLibraryBindingsWithoutRoute imports an
// NServiceBus infrastructure whose delivery exchange, besides the replayed
// binding of Sales, binds Billing as a sender does and Audit on a key no
// route can have: the generated configuration routes Sales and Billing and
// plans no change, Audit's binding showing nowhere; imported under a
// configuration that routes Sales alone, the update leaves Billing's
// binding, and the plan after it is empty.
func TestAccDelayQueueSet_importLibraryBindingsWithoutRoute(t *testing.T) {
	client, vhost, lc, conn := librarySetUp(t, "nservicebus")
	billing := topology.Binding{Source: "nsb.v2.delay-delivery", Destination: "Billing", DestinationType: topology.DestinationExchange, RoutingKey: "#.Billing"}
	audit := topology.Binding{Source: "nsb.v2.delay-delivery", Destination: "Audit", DestinationType: topology.DestinationExchange, RoutingKey: "Audit.#"}
	if err := onChannel(conn, func(ch *amqp.Channel) error {
		if err := lc.replay(ch); err != nil {
			return err
		}
		for _, b := range []topology.Binding{billing, audit} {
			if err := declareBoundQueue(ch, b.Destination, "fanout", b.Destination, ""); err != nil {
				return err
			}
			if err := ch.ExchangeBind(b.Destination, b.RoutingKey, b.Source, false, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	id := url.PathEscape(vhost) + "/" + lc.setName
	config := libraryConfig(lc, vhost, "")
	routed := topology.Spec{Name: lc.setName, VHost: vhost, Layout: lc.layout, Routes: []topology.Route{
		{Destination: lc.destination, DestinationType: topology.DestinationExchange, Key: lc.routeKey}}}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		TerraformVersionChecks:   testTerraform1_8,
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			libraryCheckGone(client, lc, vhost),
			libraryCheckNoBindingFrom(vhost, billing.Source),
		),
		Steps: []resource.TestStep{
			{
				Config:          `provider "rabbitmq" {}`,
				ResourceName:    testResource,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   id,
				GenerateConfig:  true,
				ImportPlanChecks: resource.ImportPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionNoop),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("route"), knownvalue.ListExact([]knownvalue.Check{
							knownvalue.ObjectExact(map[string]knownvalue.Check{"destination": knownvalue.StringExact("Billing"),
								"destination_type": knownvalue.StringExact("exchange"), "key": knownvalue.StringExact("Billing")}),
							knownvalue.ObjectExact(map[string]knownvalue.Check{"destination": knownvalue.StringExact(lc.destination),
								"destination_type": knownvalue.StringExact("exchange"), "key": knownvalue.StringExact(lc.routeKey)}),
						})),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("bindings"), knownLineCount(58)),
					},
				},
			},
			{
				Config:             config,
				ResourceName:       testResource,
				ImportState:        true,
				ImportStateId:      id,
				ImportStatePersist: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				Check: libraryCheckHolds(client, vhost, routed, billing, audit),
			},
			{
				Config:   config,
				PlanOnly: true,
			},
		},
	})
}

// libraryCheckNoBindingFrom asks the broker that no binding in vhost has
// source for its source.
func libraryCheckNoBindingFrom(vhost, source string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		admin, err := testAdmin()
		if err != nil {
			return err
		}
		bindings, err := admin.ListBindingsIn(vhost)
		if err != nil {
			return err
		}
		for _, b := range bindings {
			if b.Source == source {
				return fmt.Errorf("the binding %s -> %s %s, key %q remains", b.Source, b.DestinationType, b.Destination, b.RoutingKey)
			}
		}
		return nil
	}
}

// TestAccDelayQueueSet_libraryLeastPrivilege manages each library's set as
// a user with the management tag and only the permissions its guide lists:
// configure and read on the layout's names, write on them and on the
// route's destination. Without write on the destination the broker refuses
// the route, and the diagnostic names the layout's names, not <name>.*.
func TestAccDelayQueueSet_libraryLeastPrivilege(t *testing.T) {
	// The patterns as the guides write them.
	patterns := map[string]string{
		"nservicebus": `^nsb\.v2\.delay-(level-[0-9]{2}|delivery)$`,
		"celery":      `^celery_delayed_([0-9]|1[0-9]|2[0-7]|delivery)$`,
	}
	for name, own := range patterns {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, vhost, lc, _ := librarySetUp(t, name)
			password := acctest.RandString(20)
			enough := rabbithole.Permissions{Configure: own, Write: own + "|^" + regexp.QuoteMeta(lc.destination) + "$", Read: own}
			withoutRoute := rabbithole.Permissions{Configure: own, Write: own, Read: own}
			user := testBrokerUser(t, password, "management", vhost, withoutRoute)
			config := fmt.Sprintf("provider \"rabbitmq\" {\n  username = %q\n  password = %q\n}\n", user, password) + libraryConfig(lc, vhost, "")
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             libraryCheckGone(client, lc, vhost),
				Steps: []resource.TestStep{
					{
						Config: config,
						ExpectError: regexp.MustCompile(`(?s)RabbitMQ Refused the Operation.*` + regexp.QuoteMeta(lc.destination) +
							`.*Access\s+refused.*` + regexp.QuoteMeta(regexp.QuoteMeta(topology.Spec{Layout: lc.layout}.OutExchange()))),
					},
					{
						PreConfig: func() { testSetBrokerUser(t, user, password, "management", vhost, enough) },
						Config:    config,
						Check:     libraryCheckMatchesPlan(client, lc, vhost),
					},
					{
						Config:   config,
						PlanOnly: true,
					},
				},
			})
		})
	}
}

// TestAccDelayQueueSet_oneLibrarySetPerVhostInOneRun declares two sets of
// the nservicebus layout in one vhost with nothing ordering them: Terraform
// creates them at once, before either finds the other's objects on the
// broker, yet one of them fails, naming the other, and only one set's
// objects are declared.
func TestAccDelayQueueSet_oneLibrarySetPerVhostInOneRun(t *testing.T) {
	client, vhost, lc, _ := librarySetUp(t, "nservicebus")
	both := libraryConfig(lc, vhost, "") + fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "second" {
  name   = "nsb-again"
  vhost  = %q
  layout = "nservicebus"
}
`, vhost)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             libraryCheckGone(client, lc, vhost),
		Steps: []resource.TestStep{
			{
				Config:      both,
				ExpectError: regexp.MustCompile(`(?s)Delay Queue Set Already Exists.*` + testPhrase("is being created in this same run")),
			},
			{
				// Whichever set was created is destroyed alone.
				Config: `provider "rabbitmq" {}`,
				Check:  libraryCheckGone(client, lc, vhost),
			},
		},
	})
}
