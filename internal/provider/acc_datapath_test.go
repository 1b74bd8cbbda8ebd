package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The data-path test's set: 5 levels of 200 ms hold delays of 0 to 6.2 s.
const (
	dataPathLevels     = 5
	dataPathResolution = 200 * time.Millisecond
	dataPathKey        = "dp"
	// Every delay 0…31 ticks is sent this many times, in random order.
	dataPathCopiesPerDelay = 7
	// DATAPATH_SEED replays a run's delays and order.
	dataPathSeedEnv = "DATAPATH_SEED"
)

// TestAccDelayQueueSet_dataPath applies a set, then sends real messages
// through it: every message must arrive at the route's queue once, no
// earlier than its delay, having passed exactly the TTL queues of its
// delay's set bits in order (its x-death header); messages with malformed
// routing keys must be parked in the unroutable queue.
func TestAccDelayQueueSet_dataPath(t *testing.T) {
	testDataPathSet(t, fmt.Sprintf("  levels        = %d\n  resolution    = %q", dataPathLevels, dataPathResolution),
		dataPathCopiesPerDelay, map[string]string{
			// Fewer words than the delay has digits: no binding can match.
			"dp-unroutable-too-few-digits": dataPathKey + ".1.0",
			// As many words as digits, none of them a digit.
			"dp-unroutable-not-digits": dataPathKey + ".a.b.c.d.e",
		},
		func(names topology.Names) []resource.TestCheckFunc {
			return []resource.TestCheckFunc{
				resource.TestCheckResourceAttr(testResource, "ingest_exchange", names.Ingest()),
				resource.TestCheckResourceAttr(testResource, "unroutable_queue", names.Unroutable()),
				resource.TestCheckResourceAttr(testResource, "levels", strconv.Itoa(dataPathLevels)),
			}
		})
}

// testDataPathSet applies a set of attributes (HCL lines; force_destroy is
// added, so that a failed run leaves no messages that block destroy) with
// one route, checks it with checks of its names, then sends every delay of
// the set copies times (dataPathCheckDelays) and each malformed routing key
// (dataPathCheckUnroutable).
func testDataPathSet(t *testing.T, attributes string, copies int, malformed map[string]string,
	checks func(names topology.Names) []resource.TestCheckFunc,
) {
	t.Helper()
	conn, name, routeQueue, seed := dataPathSetUp(t)
	names := topology.Names(name)
	all := append(checks(names),
		dataPathCheckDelays(t, conn, testResource, names, routeQueue, seed, copies),
		dataPathCheckUnroutable(t, conn, testResource, malformed))
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             dataPathCheckGone(conn, names),
		Steps: []resource.TestStep{{
			Config: dataPathSetConfig(name, routeQueue, attributes+"\n  force_destroy = true"),
			Check:  resource.ComposeAggregateTestCheckFunc(all...),
		}},
	})
}

// dataPathSetConfig is the configuration of a set named name with
// attributes (HCL lines) and one route, of dataPathKey to routeQueue.
func dataPathSetConfig(name, routeQueue, attributes string) string {
	return fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "test" {
  name = %q
%s

  route {
    destination = %q
    key         = %q
  }
}
`, name, strings.TrimPrefix(attributes, "\n"), routeQueue, dataPathKey)
}

// dataPathSetUp skips the test unless acceptance tests run, connects over
// AMQP, picks a set name and declares its route's queue, and picks the seed
// of the delays and their order.
func dataPathSetUp(t *testing.T) (conn *amqp.Connection, name, routeQueue string, seed uint64) {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	testAccPreCheck(t)
	conn, err := messaging.Dial(messaging.URLFromEnv(), 10*time.Second)
	if err != nil {
		t.Fatalf("the data path needs AMQP (%s): %v", messaging.URLEnv, err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	name = fmt.Sprintf("acc-dp-%08x", rand.Uint32())
	routeQueue = name + "-work"
	// The provider does not manage plain queues; the route needs one to exist.
	if err := messaging.DeclareQueue(conn, routeQueue); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := messaging.DeleteQueue(conn, routeQueue); err != nil {
			t.Errorf("deleting the route's queue: %v", err)
		}
	})

	seed = uint64(time.Now().UnixNano())
	if s := os.Getenv(dataPathSeedEnv); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", dataPathSeedEnv, s, err)
		}
	}
	t.Logf("random delays and order from seed %d (%s=%d replays them)", seed, dataPathSeedEnv, seed)
	return conn, name, routeQueue, seed
}

// dataPathSet reads where to publish from the state, so the test also
// checks that the outputs publishers use are right.
func dataPathSet(s *terraform.State, address string) (messaging.Set, string, error) {
	rs, ok := s.RootModule().Resources[address]
	if !ok {
		return messaging.Set{}, "", fmt.Errorf("%s is not in the state", address)
	}
	attributes := rs.Primary.Attributes
	levels, err := strconv.Atoi(attributes["levels"])
	if err != nil {
		return messaging.Set{}, "", fmt.Errorf("levels %q: %w", attributes["levels"], err)
	}
	resolution, err := time.ParseDuration(attributes["resolution"])
	if err != nil {
		return messaging.Set{}, "", fmt.Errorf("resolution %q: %w", attributes["resolution"], err)
	}
	radix, err := strconv.Atoi(attributes["radix"])
	if err != nil {
		return messaging.Set{}, "", fmt.Errorf("radix %q: %w", attributes["radix"], err)
	}
	set := messaging.Set{IngestExchange: attributes["ingest_exchange"], Levels: levels, Resolution: resolution, Radix: radix}
	return set, attributes["unroutable_queue"], nil
}

// dataPathKeyFormat is how the set's routing keys write a delay.
func dataPathKeyFormat(set messaging.Set) topology.KeyFormat {
	return topology.KeyFormat{Levels: set.Levels, Radix: set.Radix, Resolution: set.Resolution}
}

// dataPathCheckDelays publishes every delay of the set copies times in a
// seeded random order and checks each arrival: not early, once, with its
// key, and through the queues of its digits (dataPathCheckDeaths): a hop too
// many, too few or a wrong one fails there whatever the machine's load. The
// lateness it logs is a figure, the benchmarks' to bound.
func dataPathCheckDelays(t *testing.T, conn *amqp.Connection, address string, names topology.Names, routeQueue string, seed uint64,
	copies int,
) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		set, _, err := dataPathSet(s, address)
		if err != nil {
			return err
		}
		format := dataPathKeyFormat(set)
		ctx, cancel := testHangContext(format.MaxDelay())
		defer cancel()

		runID := fmt.Sprintf("dp-%d-", seed)
		var batch []messaging.Delayed
		for ticks := range int(format.MaxDelay()/set.Resolution) + 1 {
			for copyIndex := range copies {
				batch = append(batch, messaging.Delayed{
					ID:    fmt.Sprintf("%s%02d-%d", runID, ticks, copyIndex),
					Key:   dataPathKey,
					Delay: time.Duration(ticks) * set.Resolution,
				})
			}
		}
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })

		consumer, err := messaging.NewConsumer(conn, routeQueue, messaging.ConsumerOptions{IDPrefix: runID})
		if err != nil {
			return err
		}
		defer func() { _ = consumer.Close() }()
		publisher, err := messaging.NewPublisher(conn, set)
		if err != nil {
			return err
		}
		defer func() { _ = publisher.Close() }()

		sent, err := publisher.PublishBatch(ctx, batch)
		if err != nil {
			return fmt.Errorf("publishing %d messages to %s: %w", len(batch), set.IngestExchange, err)
		}
		ids := make([]string, len(sent))
		for i, m := range sent {
			ids[i] = m.ID
		}
		if err := consumer.WaitForIDs(ctx, ids); err != nil {
			return fmt.Errorf("lost messages: %w", err)
		}
		// A duplicate would follow its original closely: wait for a quiet queue.
		if err := consumer.Settle(ctx, time.Second); err != nil {
			return fmt.Errorf("waiting for duplicates: %w", err)
		}

		arrivals := consumer.Arrivals()
		var problems []error
		hops := 0
		for _, a := range arrivals {
			hops += len(a.Deaths)
			key, delay, err := format.Decode(a.RoutingKey)
			switch {
			case err != nil:
				problems = append(problems, fmt.Errorf("%s arrived with routing key %q: %w", a.Message.ID, a.RoutingKey, err))
			case key != dataPathKey || delay != a.Message.Delay:
				problems = append(problems, fmt.Errorf("%s (delay %s) arrived with routing key %q, which says key %q and delay %s",
					a.Message.ID, a.Message.Delay, a.RoutingKey, key, delay))
			}
			if a.Early() {
				problems = append(problems, fmt.Errorf("%s (delay %s) arrived %s early", a.Message.ID, a.Message.Delay, -a.Lateness))
			}
			if err := dataPathCheckDeaths(names, set, a); err != nil {
				problems = append(problems, err)
			}
		}
		for _, d := range consumer.Duplicates() {
			problems = append(problems, fmt.Errorf("%s (delay %s) arrived again %s after its delay", d.Message.ID, d.Message.Delay, d.Lateness))
		}
		for _, f := range consumer.Foreign() {
			problems = append(problems, fmt.Errorf("unexpected message with routing key %q on %s: %s", f.RoutingKey, routeQueue, f.Reason))
		}
		summary := messaging.Summarize(arrivals)
		t.Logf("%d messages, delays 0–%s, %d hops read from x-death: lateness p50 %s, p99 %s, max %s (min %s)",
			len(arrivals), format.MaxDelay(), hops, summary.P50, summary.P99, summary.Max, summary.Min)
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Errorf("… and %d more problems", len(problems)-20))
		}
		return errors.Join(problems...)
	}
}

// dataPathWantDeaths is the x-death header a message of delay ticks gets
// on its way through generation 0 of set (names): one death, "expired", for
// each nonzero digit of ticks in the set's radix, the most significant
// first, from that digit's queue, entered from the ingest exchange for the
// first and from the done exchange of the level before for the others; each
// once, with the message's routing key. The most recent comes first, as the
// broker lists them.
func dataPathWantDeaths(names topology.Names, set messaging.Set, ticks uint64, routingKey string) []messaging.Death {
	radix := max(set.Radix, 2)
	digits := make([]int, set.Levels) // digits[k] is the digit at level k
	for k, rest := 0, ticks; k < set.Levels; k, rest = k+1, rest/uint64(radix) {
		digits[k] = int(rest % uint64(radix))
	}
	var path []messaging.Death
	from := set.IngestExchange
	for k := set.Levels - 1; k >= 0; k-- {
		if digits[k] == 0 {
			continue
		}
		path = append(path, messaging.Death{Queue: names.Queue(radix, k, digits[k]), Reason: "expired", Exchange: from, Count: 1,
			RoutingKeys: []string{routingKey}})
		from = names.LevelDone(radix, k)
	}
	slices.Reverse(path)
	return path
}

// dataPathCheckDeaths checks that the message a passed exactly the TTL
// queues of its delay's nonzero digits, in order, each once, by the x-death
// header the broker wrote (see dataPathWantDeaths). RabbitMQ 3.10 reorders
// the header's older entries, so the order is read from each death's
// exchange, which names the hop before it: the header must hold the same
// deaths in any order, and list the last hop first.
func dataPathCheckDeaths(names topology.Names, set messaging.Set, a messaging.Arrival) error {
	want := dataPathWantDeaths(names, set, uint64(a.Message.Delay/set.Resolution), a.RoutingKey)
	byQueue := func(x, y messaging.Death) int { return strings.Compare(x.Queue, y.Queue) }
	got := slices.SortedFunc(slices.Values(a.Deaths), byQueue)
	sorted := slices.SortedFunc(slices.Values(want), byQueue)
	if !cmp.Equal(sorted, got, cmpopts.EquateEmpty()) || (len(want) > 0 && !cmp.Equal(want[0], a.Deaths[0])) {
		return fmt.Errorf("%s (delay %s) passed the wrong queues: x-death %+v, want %+v", a.Message.ID, a.Message.Delay, a.Deaths, want)
	}
	return nil
}

// dataPathCheckUnroutable publishes messages whose routing keys no binding
// matches, malformed by message id, and checks that the unroutable queue
// parks them.
func dataPathCheckUnroutable(t *testing.T, conn *amqp.Connection, address string, malformed map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		set, unroutable, err := dataPathSet(s, address)
		if err != nil {
			return err
		}
		malformed := maps.Clone(malformed) // the loop below deletes what arrives
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		publisher, err := messaging.NewPublisher(conn, set)
		if err != nil {
			return err
		}
		defer func() { _ = publisher.Close() }()

		for id, routingKey := range malformed {
			if _, err := publisher.PublishWithRoutingKey(ctx, routingKey, messaging.Message{ID: id}); err != nil {
				return fmt.Errorf("publishing with malformed routing key %q: %w", routingKey, err)
			}
		}
		var problems []error
		// Counted up front: the loop deletes from the map it would range over.
		for range len(malformed) {
			getCtx, cancelGet := context.WithTimeout(ctx, 10*time.Second)
			delivery, err := messaging.Get(getCtx, conn, unroutable)
			cancelGet()
			if err != nil {
				problems = append(problems, err)
				break
			}
			message, err := messaging.DecodeMessage(delivery.Body)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s held a message with routing key %q that the test did not send: %w", unroutable, delivery.RoutingKey, err))
				continue
			}
			routingKey, ok := malformed[message.ID]
			if !ok || routingKey != delivery.RoutingKey {
				problems = append(problems, fmt.Errorf("%s held %s with routing key %q, want one of %v", unroutable, message.ID, delivery.RoutingKey, malformed))
				continue
			}
			delete(malformed, message.ID)
			t.Logf("routing key %q was parked in %s", routingKey, unroutable)
		}
		for id, routingKey := range malformed {
			problems = append(problems, fmt.Errorf("%s with routing key %q did not reach %s", id, routingKey, unroutable))
		}
		return errors.Join(problems...)
	}
}

// dataPathCheckGone checks over AMQP that the set's ingest exchange and
// unroutable queue no longer exist.
func dataPathCheckGone(conn *amqp.Connection, names topology.Names) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if err := messaging.CheckQueue(conn, names.Unroutable()); !errors.Is(err, messaging.ErrQueueNotFound) {
			return fmt.Errorf("queue %s after destroy: %v, want it gone", names.Unroutable(), err)
		}
		ch, err := conn.Channel()
		if err != nil {
			return err
		}
		defer func() { _ = ch.Close() }()
		err = ch.ExchangeDeclarePassive(names.Ingest(), topology.ExchangeTopic, true, false, false, false, nil)
		var amqpErr *amqp.Error
		if !errors.As(err, &amqpErr) || amqpErr.Code != amqp.NotFound {
			return fmt.Errorf("exchange %s after destroy: %v, want it gone", names.Ingest(), err)
		}
		return nil
	}
}

// The x-death check of the data-path tests, without a broker: it takes the
// path of a message's digits in any order with the last hop first, and
// refuses a hop too many, too few, a wrong one, one passed twice, the
// wrong order and a wrong last hop.
func TestDataPathCheckDeaths(t *testing.T) {
	t.Parallel()
	names := topology.Names("s")
	hex := messaging.Set{IngestExchange: names.Ingest(), Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond}
	death := func(queue, exchange string) messaging.Death {
		return messaging.Death{Queue: queue, Reason: "expired", Exchange: exchange, Count: 1, RoutingKeys: []string{"dp.3.10"}}
	}
	top := death("s.r16.01.3", "s.ingest")
	bottom := death("s.r16.00.10", "s.r16.01.done")
	arrival := func(delay time.Duration, deaths ...messaging.Death) messaging.Arrival {
		return messaging.Arrival{Message: messaging.Message{ID: "m", Delay: delay}, RoutingKey: "dp.3.10", Deaths: deaths}
	}
	twice := top
	twice.Count = 2
	wrongKey := bottom
	wrongKey.RoutingKeys = []string{"dp.3.11"}
	binary := messaging.Set{IngestExchange: names.Ingest(), Levels: 5, Resolution: time.Second}
	tests := []struct {
		name string
		set  messaging.Set
		a    messaging.Arrival
		ok   bool
	}{
		{"two digits", hex, arrival(58*100*time.Millisecond, bottom, top), true},
		{"delay 0 passes no queue", hex, arrival(0), true},
		{"one digit", hex, arrival(10*100*time.Millisecond, death("s.r16.00.10", "s.ingest")), true},
		{"a hop missing", hex, arrival(58*100*time.Millisecond, bottom), false},
		{"a hop too many", hex, arrival(10*100*time.Millisecond, bottom, top), false},
		{"the last hop not first", hex, arrival(58*100*time.Millisecond, top, bottom), false},
		{"entered from the wrong exchange", hex, arrival(58*100*time.Millisecond, death("s.r16.00.10", "s.ingest"), top), false},
		{"a queue passed twice", hex, arrival(58*100*time.Millisecond, bottom, twice), false},
		{"another routing key", hex, arrival(58*100*time.Millisecond, wrongKey, top), false},
		{"a death for nothing", hex, arrival(0, bottom), false},
		{"radix 2, bits 2 and 0", binary, arrival(5*time.Second,
			death("s.level.00", "s.level.02.done"), death("s.level.02", "s.ingest")), true},
	}
	for _, tt := range tests {
		err := dataPathCheckDeaths(names, tt.set, tt.a)
		if (err == nil) != tt.ok {
			t.Errorf("%s: dataPathCheckDeaths() = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
