package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// delayedKey is the routing key the tests publish with; the work queue is
// bound to the delivery exchange on delayedBindingKey.
const (
	delayedKey        = "orders.eu"
	delayedBindingKey = "orders.#"
)

// delayedAcc is what a delayed exchange's acceptance test works with: the
// test's client and AMQP connection, the exchange's name, and its work
// queue (bound to the delivery exchange by bindWork).
type delayedAcc struct {
	t      *testing.T
	client *broker.Client
	conn   *amqp.Connection
	name   string
	work   string
}

// delayedSetUp skips the test unless acceptance tests run, connects, and
// picks a name; whatever the test leaves of it is deleted, messages and all.
func delayedSetUp(t *testing.T) *delayedAcc {
	t.Helper()
	client := testBrokerClient(t)
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	conn, err := messaging.Dial(messaging.URLFromEnv(), 10*time.Second)
	if err != nil {
		t.Fatalf("the data path needs AMQP (%s): %v", messaging.URLEnv, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	a := &delayedAcc{t: t, client: client, conn: conn, name: fmt.Sprintf("acc-dx-%08x", rand.Uint32())}
	a.work = a.name + "-work"
	t.Cleanup(func() {
		_ = messaging.DeleteQueue(conn, a.work)
		gone := delayset.DelayedState{Spec: topology.DelayedSpec{Name: a.name, VHost: "/"}}
		if err := (delayset.DelayedExchanges{Broker: client}).Destroy(context.Background(), gone, true); err != nil {
			t.Errorf("cleaning up after the delayed exchange %q: %v", a.name, err)
		}
	})
	return a
}

func (a *delayedAcc) config(attributes string) string {
	return testDelayedConfig(a.name, attributes)
}

// bindWork declares the work queue and binds it to the delivery exchange,
// as a consumer of the plugin's exchange binds its queue.
func (a *delayedAcc) bindWork() error {
	return onChannel(a.conn, func(ch *amqp.Channel) error {
		if _, err := ch.QueueDeclare(a.work, true, false, false, false, nil); err != nil {
			return err
		}
		return ch.QueueBind(a.work, delayedBindingKey, topology.DelayedNames(a.name).Delivery(), false, nil)
	})
}

// checkGone asks the broker that nothing of the delayed exchange remains.
func (a *delayedAcc) checkGone(*terraform.State) error {
	found, err := a.client.ReadObjectsMatching(context.Background(), "/", topology.DelayedNames(a.name).ObjectNamePattern())
	if err != nil {
		return err
	}
	if left := len(found.Exchanges) + len(found.Queues); left > 0 {
		return fmt.Errorf("%d objects of %s remain: %v", left, a.name, append(found.QueueNames(), topology.Lines(found.Exchanges)))
	}
	return nil
}

// checkMatchesPlan asks the broker that it holds exactly the objects of the
// delayed exchange of delays (and the draining ones).
func (a *delayedAcc) checkMatchesPlan(delays, draining []int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		spec, err := topology.ResolveDelayed(topology.DelayedSpec{Name: a.name, VHost: "/", DelaysMS: delays, DeliveryType: "topic"})
		if err != nil {
			return err
		}
		found, err := a.client.ReadObjectsMatching(context.Background(), "/", topology.DelayedNames(a.name).ObjectNamePattern())
		if err != nil {
			return err
		}
		found = topology.DelayedNames(a.name).WithoutConsumerBindings(found)
		if changes := topology.Diff(topology.PlanDelayed(spec, draining), found); len(changes) > 0 {
			lines := make([]string, len(changes))
			for i, c := range changes {
				lines[i] = fmt.Sprintf("%s %v", c.Kind, c.Reason)
			}
			return fmt.Errorf("the broker differs from the plan: %s", strings.Join(lines, "; "))
		}
		return nil
	}
}

// delayedMessage is one message of a data-path test: the x-delay header it
// carries (nil: none), the delay it must wait at least, and where it must
// end: delivered, parked, or either (a header whose type the broker
// versions treat apart).
type delayedMessage struct {
	id     string
	header any
	delay  time.Duration
	fate   delayedFate
	sent   messaging.Message
}

type delayedFate int

const (
	delivered delayedFate = iota
	parked
	deliveredOrParked
)

// publish sends each message to the delayed exchange with its header.
func (a *delayedAcc) publish(ctx context.Context, messages []delayedMessage) ([]delayedMessage, error) {
	publisher, err := messaging.NewHeadersPublisher(a.conn)
	if err != nil {
		return nil, err
	}
	defer func() { _ = publisher.Close() }()
	for i, m := range messages {
		headers := amqp.Table{"note": "published as the delayed-message-exchange plugin's users do"}
		if m.header != nil {
			headers[topology.ArgDelay] = m.header
		}
		sent, err := publisher.PublishWithHeaders(ctx, a.name, delayedKey, headers, messaging.Message{ID: m.id, Delay: m.delay})
		if err != nil {
			return nil, err
		}
		messages[i].sent = sent
	}
	return messages, nil
}

// checkDataPath publishes a message of each kind of x-delay and checks
// where each ends: the listed delays arrive at the work queue, through the
// delivery exchange with the routing key unchanged, once each and never
// early; the others are parked, and none is lost.
func (a *delayedAcc) checkDataPath(*terraform.State) error {
	if err := a.bindWork(); err != nil {
		return err
	}
	prefix := a.name + "-"
	messages := []delayedMessage{
		{id: prefix + "int16-1000", header: int16(1000), delay: time.Second},
		{id: prefix + "int32-1000", header: int32(1000), delay: time.Second},
		{id: prefix + "int64-3000", header: int64(3000), delay: 3 * time.Second},
		{id: prefix + "int32-0", header: int32(0)},
		{id: prefix + "unlisted-2000", header: int32(2000), fate: parked},
		{id: prefix + "string-1000", header: "1000", fate: parked},
		{id: prefix + "missing", fate: parked},
		{id: prefix + "float-1000", header: float64(1000), delay: time.Second, fate: deliveredOrParked},
	}
	ctx, cancel := testHangContext(3 * time.Second)
	defer cancel()
	work, err := messaging.NewConsumer(a.conn, a.work, messaging.ConsumerOptions{IDPrefix: prefix})
	if err != nil {
		return err
	}
	defer func() { _ = work.Close() }()
	parking, err := messaging.NewConsumer(a.conn, topology.DelayedNames(a.name).Parking(), messaging.ConsumerOptions{IDPrefix: prefix})
	if err != nil {
		return err
	}
	defer func() { _ = parking.Close() }()
	if messages, err = a.publish(ctx, messages); err != nil {
		return err
	}
	var toWork, toParking []string
	for _, m := range messages {
		switch m.fate {
		case delivered:
			toWork = append(toWork, m.id)
		case parked:
			toParking = append(toParking, m.id)
		}
	}
	if err := work.WaitForIDs(ctx, toWork); err != nil {
		return fmt.Errorf("lost delayed messages: %w", err)
	}
	if err := parking.WaitForIDs(ctx, toParking); err != nil {
		return fmt.Errorf("lost messages to park: %w", err)
	}
	// The messages either way are due by now; then a quiet second shows duplicates.
	if err := errors.Join(work.Settle(ctx, time.Second), parking.Settle(ctx, time.Second)); err != nil {
		return err
	}
	err = checkFates(messages, work, parking)
	for _, arrival := range work.Arrivals() {
		if strings.HasSuffix(arrival.Message.ID, "-float-1000") {
			a.t.Logf("an x-delay of 1000 as a float was delivered, %s after its delay", arrival.Lateness)
		}
	}
	return err
}

// checkFates checks that each message ended where its fate says, exactly
// once, and never early.
func checkFates(messages []delayedMessage, work, parking *messaging.Consumer) error {
	where := map[string][]string{}
	var problems []error
	for place, arrivals := range map[string][]messaging.Arrival{"delivered": work.Arrivals(), "parked": parking.Arrivals()} {
		for _, arrival := range arrivals {
			where[arrival.Message.ID] = append(where[arrival.Message.ID], place)
			if place == "delivered" && arrival.Early() {
				problems = append(problems, fmt.Errorf("%s arrived %s early", arrival.Message.ID, -arrival.Lateness))
			}
			if place == "delivered" && arrival.RoutingKey != delayedKey {
				problems = append(problems, fmt.Errorf("%s arrived with routing key %q, want %q", arrival.Message.ID, arrival.RoutingKey, delayedKey))
			}
		}
	}
	for _, c := range append(work.Duplicates(), parking.Duplicates()...) {
		problems = append(problems, fmt.Errorf("%s arrived twice", c.Message.ID))
	}
	for _, m := range messages {
		want := map[delayedFate][]string{delivered: {"delivered"}, parked: {"parked"}}[m.fate]
		got := where[m.id]
		switch {
		case m.fate == deliveredOrParked && len(got) != 1:
			problems = append(problems, fmt.Errorf("%s (x-delay %T) ended %v, want once, delivered or parked", m.id, m.header, got))
		case m.fate != deliveredOrParked && !slices.Equal(got, want):
			problems = append(problems, fmt.Errorf("%s (x-delay %T %v) ended %v, want %v", m.id, m.header, m.header, got, want))
		}
	}
	return errors.Join(problems...)
}

// TestAccDelayedExchange_dataPath applies a delayed exchange and sends it
// messages as the plugin's publishers do: an x-delay of 1000 as a short
// and an int, of 3000 as a long, and 0, arrive through the delivery
// exchange, never early; an unlisted delay, a string and a missing header
// are parked; a float, which some versions match, ends in one of the two.
// Its import then reads back the same state.
func TestAccDelayedExchange_dataPath(t *testing.T) {
	a := delayedSetUp(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             a.checkGone,
		Steps: []resource.TestStep{
			{
				Config: a.config("delays_ms = [0, 1000, 3000]\n  delivery_type = \"topic\"\n  force_destroy = true"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(testDelayedResource, "exchange", a.name),
					resource.TestCheckResourceAttr(testDelayedResource, "delivery_exchange", a.name+".delivery"),
					resource.TestCheckResourceAttr(testDelayedResource, "parking_queue", a.name+".unroutable"),
					a.checkMatchesPlan([]int64{0, 1000, 3000}, nil),
					a.checkDataPath,
				),
			},
			{
				ResourceName:            testDelayedResource,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"force_destroy"},
			},
		},
	})
}

// TestAccDelayedExchange_importHandMade: a delayed exchange declared by
// hand imports by either form of ID, and its configuration then plans
// nothing.
func TestAccDelayedExchange_importHandMade(t *testing.T) {
	for form, id := range map[string]func(name string) string{
		"escaped vhost/name": func(name string) string { return "%2F/" + name },
		"name@vhost":         func(name string) string { return name + "@/" },
	} {
		t.Run(form, func(t *testing.T) { testImportHandMadeDelayed(t, id) })
	}
}

func testImportHandMadeDelayed(t *testing.T, id func(name string) string) {
	a := delayedSetUp(t)
	spec, err := topology.ResolveDelayed(topology.DelayedSpec{Name: a.name, VHost: "/", DelaysMS: []int64{500, 0, 7000},
		DeliveryType: "fanout", QueueType: topology.QueueTypeClassic})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.client.Apply(t.Context(), "/", topology.Diff(topology.PlanDelayed(spec, nil), topology.Topology{VHost: "/"}), broker.ApplyOptions{}); err != nil {
		t.Fatalf("declaring the delayed exchange by hand: %v", err)
	}
	config := a.config("delays_ms = [0, 500, 7000]\n  delivery_type = \"fanout\"\n  queue_type = \"classic\"")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             a.checkGone,
		Steps: []resource.TestStep{
			{
				Config: config, ResourceName: testDelayedResource, ImportState: true, ImportStateId: id(a.name), ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("%d states imported, want 1", len(states))
					}
					for attribute, want := range map[string]string{"id": "%2F/" + a.name, "delays_ms.#": "3", "delivery_type": "fanout",
						"queue_type": "classic", "dead_letter_strategy": "at-most-once", "draining.%": "0"} {
						if got := states[0].Attributes[attribute]; got != want {
							return fmt.Errorf("imported %s = %q, want %q", attribute, got, want)
						}
					}
					return nil
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// TestAccDelayedExchange_removedDelay: removing a delay while its queue
// holds a message unbinds the queue (a new message of that delay is parked)
// and keeps it, with the message, which then arrives on time; the next
// apply finds it empty and deletes it. No message is lost.
func TestAccDelayedExchange_removedDelay(t *testing.T) {
	t.Parallel()
	a := delayedSetUp(t)
	// Long enough for the removal's apply to find it still held, on a loaded machine.
	const held = 90 * time.Second
	queue := topology.DelayedNames(a.name).DelayQueue(held.Milliseconds())
	prefix := a.name + "-"
	var work *messaging.Consumer
	t.Cleanup(func() {
		if work != nil {
			_ = work.Close()
		}
	})
	publish := func(id string, header any, delay time.Duration) error {
		ctx, cancel := testHangContext(0)
		defer cancel()
		_, err := a.publish(ctx, []delayedMessage{{id: prefix + id, header: header, delay: delay}})
		return err
	}
	both := fmt.Sprintf("delays_ms = [1000, %d]\n  delivery_type = \"topic\"", held.Milliseconds())
	one := "delays_ms = [1000]\n  delivery_type = \"topic\""
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             a.checkGone,
		Steps: []resource.TestStep{
			{
				Config: a.config(both),
				Check: func(*terraform.State) (err error) {
					if err := a.bindWork(); err != nil {
						return err
					}
					if work, err = messaging.NewConsumer(a.conn, a.work, messaging.ConsumerOptions{IDPrefix: prefix}); err != nil {
						return err
					}
					return publish("held", int32(held.Milliseconds()), held)
				},
			},
			{
				Config: a.config(one),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(testDelayedResource, "draining.%", "1"),
					resource.TestCheckResourceAttr(testDelayedResource, "draining."+queue, "1"),
					a.checkMatchesPlan([]int64{1000}, []int64{held.Milliseconds()}),
					func(*terraform.State) error {
						// Unlisted now: parked, never into the draining queue.
						if err := publish("after-removal", int32(held.Milliseconds()), 0); err != nil {
							return err
						}
						ctx, cancel := testHangContext(held)
						defer cancel()
						if err := work.WaitForIDs(ctx, []string{prefix + "held"}); err != nil {
							return fmt.Errorf("the draining queue's message is lost: %w", err)
						}
						if arrival := work.Arrivals()[0]; arrival.Early() {
							return fmt.Errorf("%s arrived %s early", arrival.Message.ID, -arrival.Lateness)
						}
						return a.checkParked(ctx, prefix+"after-removal")
					},
				),
				// The message has left: the refresh finds the queue empty, and the plan deletes it.
				ExpectNonEmptyPlan: true,
			},
			{
				Config: a.config(one),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(testDelayedResource, "draining.%", "0"),
					a.checkMatchesPlan([]int64{1000}, nil),
				),
			},
			{Config: a.config(one), PlanOnly: true},
		},
	})
}

// checkParked checks that the parking queue holds exactly the message id.
func (a *delayedAcc) checkParked(ctx context.Context, id string) error {
	delivery, err := messaging.Get(ctx, a.conn, topology.DelayedNames(a.name).Parking())
	if err != nil {
		return fmt.Errorf("the parking queue: %w", err)
	}
	if delivery.MessageId != id {
		return fmt.Errorf("the parking queue holds %q, want %q", delivery.MessageId, id)
	}
	return nil
}

// TestAccDelayedExchange_destroyRefusesHeldMessages: destroy refuses while
// a delay queue holds a message or the parking queue a parked one, and
// changes nothing; with force_destroy it deletes everything.
func TestAccDelayedExchange_destroyRefusesHeldMessages(t *testing.T) {
	a := delayedSetUp(t)
	config := "delays_ms = [600000]\n  delivery_type = \"topic\""
	queue := topology.DelayedNames(a.name).DelayQueue(600000)
	prefix := a.name + "-"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             a.checkGone,
		Steps: []resource.TestStep{
			{
				Config: a.config(config),
				Check: func(*terraform.State) error {
					ctx, cancel := testHangContext(0)
					defer cancel()
					_, err := a.publish(ctx, []delayedMessage{{id: prefix + "held", header: int64(600000)}, {id: prefix + "parked", header: "soon"}})
					return err
				},
			},
			{
				Config:      a.config(config),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Delay Queues Hold Messages.*` + regexp.QuoteMeta(queue) + `.*force_destroy`),
			},
			{
				Config: a.config(config),
				Check: resource.ComposeAggregateTestCheckFunc(
					a.checkMatchesPlan([]int64{600000}, nil),
					a.checkHolds(map[string]int64{queue: 1, topology.DelayedNames(a.name).Parking(): 1}),
				),
			},
			{Config: a.config(config + "\n  force_destroy = true")},
		},
	})
}

// checkHolds asks the broker, exactly, that each queue holds its messages:
// one queue a call, since HeldMessages stops counting the others once one
// is found holding.
func (a *delayedAcc) checkHolds(want map[string]int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for q, n := range want {
			got, err := a.client.HeldMessages(context.Background(), "/", []string{q})
			if err != nil {
				return err
			}
			if got[q] != n {
				return fmt.Errorf("%s holds %s message(s), want %d", q, strconv.FormatInt(got[q], 10), n)
			}
		}
		return nil
	}
}

// TestAccDelayedExchange_drift: a binding and a queue deleted by hand show
// in the plan, and the next apply declares them again.
func TestAccDelayedExchange_drift(t *testing.T) {
	a := delayedSetUp(t)
	config := a.config("delays_ms = [0, 2000]\n  delivery_type = \"topic\"")
	queue := topology.DelayedNames(a.name).DelayQueue(2000)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             a.checkGone,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					deliver := topology.Binding{Source: a.name, Destination: a.name + ".delivery", DestinationType: topology.DestinationExchange,
						Arguments: topology.BindingArguments{Match: topology.MatchAllWithX, HasDelay: true}}
					gone := []topology.Change{{Kind: topology.DeleteBinding, Binding: &deliver}, {Kind: topology.DeleteQueue, Queue: &topology.Queue{Name: queue}}}
					if err := a.client.Apply(t.Context(), "/", gone, broker.ApplyOptions{}); err != nil {
						t.Fatalf("deleting by hand: %v", err)
					}
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: config, Check: a.checkMatchesPlan([]int64{0, 2000}, nil)},
		},
	})
}

// TestAccDelayedExchange_changeUnderLoad: while messages of every delay are
// published, a delay is added and another removed; every message ends once,
// never early: a kept delay's delivered, an added or removed delay's
// delivered or, while it is not listed, parked.
func TestAccDelayedExchange_changeUnderLoad(t *testing.T) {
	a := delayedSetUp(t)
	prefix := a.name + "-"
	load := &delayedLoad{a: a, prefix: prefix, delays: []int64{500, 1500, 2500}, done: make(chan error, 1)}
	t.Cleanup(load.stopOnce)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             a.checkGone,
		Steps: []resource.TestStep{
			{
				Config: a.config("delays_ms = [500, 1500]\n  delivery_type = \"topic\""),
				Check:  func(*terraform.State) error { return load.start() },
			},
			{
				// 2500 comes, 500 goes, while the load runs. Its queue stays,
				// empty once every message has ended: the next plan deletes it.
				Config:             a.config("delays_ms = [1500, 2500]\n  delivery_type = \"topic\""),
				Check:              func(*terraform.State) error { return load.finish() },
				ExpectNonEmptyPlan: true,
			},
			{
				Config: a.config("delays_ms = [1500, 2500]\n  delivery_type = \"topic\""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(testDelayedResource, "draining.%", "0"),
					a.checkMatchesPlan([]int64{1500, 2500}, nil),
				),
			},
		},
	})
}

// delayedLoad publishes a message of each of its delays in turn until
// stopped, then checks where each ended.
type delayedLoad struct {
	a             *delayedAcc
	prefix        string
	delays        []int64
	work, parking *messaging.Consumer
	sent          []delayedMessage
	stop          chan struct{}
	done          chan error
}

func (l *delayedLoad) start() (err error) {
	if err := l.a.bindWork(); err != nil {
		return err
	}
	if l.work, err = messaging.NewConsumer(l.a.conn, l.a.work, messaging.ConsumerOptions{IDPrefix: l.prefix}); err != nil {
		return err
	}
	if l.parking, err = messaging.NewConsumer(l.a.conn, topology.DelayedNames(l.a.name).Parking(), messaging.ConsumerOptions{IDPrefix: l.prefix}); err != nil {
		return err
	}
	// The publisher's own: finish and stopOnce set l.stop to nil once they
	// close it, and a nil channel never receives.
	stop := make(chan struct{})
	l.stop = stop
	go func() {
		ctx, cancel := testHangContext(10 * time.Minute)
		defer cancel()
		start := time.Now()
		for i := 0; ; i++ {
			select {
			case <-stop:
				l.done <- nil
				return
			case <-time.After(50 * time.Millisecond):
			}
			ms := l.delays[i%len(l.delays)]
			m := delayedMessage{id: fmt.Sprintf("%s%d-%d-at-%dms", l.prefix, ms, i, time.Since(start).Milliseconds()), header: ms, delay: time.Duration(ms) * time.Millisecond}
			sent, err := l.a.publish(ctx, []delayedMessage{m})
			if err != nil {
				l.done <- err
				return
			}
			l.sent = append(l.sent, sent...)
		}
	}()
	return nil
}

func (l *delayedLoad) stopOnce() {
	if l.stop != nil {
		close(l.stop)
		l.stop = nil
		if err := <-l.done; err != nil { // only a test that failed before finish gets here
			l.a.t.Logf("publishing under load: %v", err)
		}
	}
	for _, c := range []*messaging.Consumer{l.work, l.parking} {
		if c != nil {
			_ = c.Close()
		}
	}
}

// finish stops the load once the change is applied, waits for every
// message, and checks each one's end.
func (l *delayedLoad) finish() error {
	// l.sent is the publisher's until it stops.
	l.a.t.Logf("the change is applied")
	time.Sleep(time.Second) // a little load after the change too
	close(l.stop)
	l.stop = nil
	if err := <-l.done; err != nil {
		return err
	}
	ctx, cancel := testHangContext(3 * time.Second)
	defer cancel()
	if err := l.waitAll(ctx); err != nil {
		return err
	}
	if err := errors.Join(l.work.Settle(ctx, time.Second), l.parking.Settle(ctx, time.Second)); err != nil {
		return err
	}
	for i, m := range l.sent {
		// 500 went and 2500 came during the change: either end is right for
		// them, as long as each ends once; 1500 stayed and must be delivered.
		if m.header != int64(1500) {
			l.sent[i].fate = deliveredOrParked
		}
	}
	l.a.t.Logf("%d messages published under the change", len(l.sent))
	if err := checkFates(l.sent, l.work, l.parking); err != nil {
		return err
	}
	// The refresh after this step plans the removed delay's queue away only
	// once the provider's counts find it empty, and the first of them is the
	// lagging statistics': wait for them, or the plan may be empty.
	ctx, cancel = testHangContext(2 * broker.StatisticsLag)
	defer cancel()
	return testWaitEmpty(ctx, l.a.client, "/", []string{topology.DelayedNames(l.a.name).DelayQueue(500)})
}

// waitAll waits until every message sent has ended somewhere.
func (l *delayedLoad) waitAll(ctx context.Context) error {
	for {
		ended := map[string]bool{}
		for _, c := range []*messaging.Consumer{l.work, l.parking} {
			for _, arrival := range c.Arrivals() {
				ended[arrival.Message.ID] = true
			}
		}
		var missing []string
		for _, m := range l.sent {
			if !ended[m.id] {
				missing = append(missing, m.id)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d messages ended nowhere, %v: %w", len(missing), len(l.sent), missing, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
