package broker_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The acceptance tests use the broker of scripts/rabbitmq.sh: management API
// at $RABBITMQ_ENDPOINT (http://127.0.0.1:15672 unless set), AMQP at
// $RABBITMQ_AMQP_URL (messaging.URLFromEnv), user guest; `make testacc` sets
// both to the ports the broker was started on. Every object they declare has
// a random name and is deleted at the end.
var (
	accEndpoint = cmp.Or(os.Getenv("RABBITMQ_ENDPOINT"), "http://127.0.0.1:15672")
	accAMQPURL  = messaging.URLFromEnv()
)

const accVHost = "/"

func accClient(t *testing.T) *broker.Client {
	t.Helper()
	return accLoggingClient(t, nil)
}

// accLoggingClient is accClient logging to log, if not nil.
func accLoggingClient(t *testing.T, log *logged) *broker.Client {
	t.Helper()
	if os.Getenv("TF_ACC") != "1" {
		t.Skip("acceptance test: needs the RabbitMQ of scripts/rabbitmq.sh at " + accEndpoint + "; set TF_ACC=1 to run it")
	}
	cfg := broker.Config{Endpoint: accEndpoint, Username: "guest", Password: "guest"}
	if log != nil {
		cfg.Logf = log.logf
	}
	client, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// uniqueName is a set name no other test run uses.
// readCounted is what read returned, failing the test on its error, and
// the requests client made meanwhile.
func readCounted(t *testing.T, client *broker.Client, read func() (topology.Topology, error)) (topology.Topology, int64) {
	t.Helper()
	before := client.Requests()
	got, err := read()
	if err != nil {
		t.Fatal(err)
	}
	return got, client.Requests() - before
}

func uniqueName(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "brokertest-" + hex.EncodeToString(b)
}

// applySpec creates the set of spec on the broker and deletes it, messages
// and all, when the test ends.
func applySpec(t *testing.T, client *broker.Client, spec topology.Spec) topology.Topology {
	t.Helper()
	plan, err := topology.Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteSet(t, client, spec.Name) })
	if err := client.Apply(t.Context(), accVHost, topology.Diff(plan, topology.Topology{VHost: accVHost}), broker.ApplyOptions{}); err != nil {
		t.Fatalf("Apply(create %s) error = %v", spec.Name, err)
	}
	return plan
}

func deleteSet(t *testing.T, client *broker.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := client.DeleteSet(ctx, accVHost, name, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
		t.Errorf("cleanup: deleting set %s: %v", name, err)
	}
}

// sortedTopology orders a topology's objects by name, as ReadSet does.
func sortedTopology(t topology.Topology) topology.Topology {
	t.Exchanges = slices.Clone(t.Exchanges)
	t.Queues = slices.Clone(t.Queues)
	t.Bindings = slices.Clone(t.Bindings)
	slices.SortFunc(t.Exchanges, func(a, b topology.Exchange) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(t.Queues, func(a, b topology.Queue) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(t.Bindings, func(a, b topology.Binding) int {
		return strings.Compare(
			a.Source+"\x00"+string(a.DestinationType)+"\x00"+a.Destination+"\x00"+a.RoutingKey,
			b.Source+"\x00"+string(b.DestinationType)+"\x00"+b.Destination+"\x00"+b.RoutingKey)
	})
	return t
}

// accSpecs are the three kinds of set: the queue type and dead-letter
// strategy decide which arguments the queues carry.
var accSpecs = map[string]topology.Spec{
	"classic":              {QueueType: topology.QueueTypeClassic},
	"quorum at-most-once":  {QueueType: topology.QueueTypeQuorum, DeadLetterStrategy: topology.AtMostOnce},
	"quorum at-least-once": {QueueType: topology.QueueTypeQuorum, DeadLetterStrategy: topology.AtLeastOnce},
	"quorum by default":    {},
	// RabbitMQ 3.x refuses x-queue-leader-locator on classic queues.
	"quorum, leaders balanced": {QueueLeaderLocator: topology.LeaderLocatorBalanced},
}

func TestAccApplyThenReadSetEqualsPlan(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	for name, spec := range accSpecs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec.Name, spec.VHost, spec.Levels, spec.Resolution = uniqueName(t), accVHost, 4, time.Second
			spec.Routes = []topology.Route{
				{Destination: "amq.topic", DestinationType: topology.DestinationExchange, Key: "orders"},
				{Destination: "amq.fanout", DestinationType: topology.DestinationExchange},
			}
			plan := applySpec(t, client, spec)

			got, err := client.ReadSet(t.Context(), accVHost, spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(sortedTopology(plan), got); diff != "" {
				t.Errorf("ReadSet() differs from Plan (-plan +read):\n%s", diff)
			}
			if changes := topology.Diff(plan, got); len(changes) != 0 {
				t.Errorf("Diff(plan, read) = %d changes, want none: %+v", len(changes), changes)
			}
			inferred, err := topology.Infer(spec.Name, got)
			if err != nil {
				t.Fatalf("Infer(read) error = %v", err)
			}
			resolved, err := topology.Resolve(spec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(resolved, inferred); diff != "" {
				t.Errorf("Infer(ReadSet()) differs from the resolved spec (-want +got):\n%s", diff)
			}
			checkPlacements(t, client, got)
		})
	}
}

// checkPlacements checks where the queues of t run on the single node the
// acceptance tests use: as the read found them, and as a read by name finds
// them again.
func checkPlacements(t *testing.T, client *broker.Client, top topology.Topology) {
	t.Helper()
	queues := top.QueueNames()
	remembered := client.Placements(accVHost, queues)
	read, err := client.ReadPlacements(t.Context(), accVHost, append(queues, "no-such-queue"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(remembered, read); diff != "" {
		t.Errorf("ReadPlacements differs from what ReadSet found (-read set +read placements):\n%s", diff)
	}
	for _, q := range top.Queues {
		p := read[q.Name]
		switch {
		case p.Leader == "":
			t.Errorf("%s: no node (%+v)", q.Name, p)
		case q.Arguments.QueueType == topology.QueueTypeQuorum && !slices.Equal(p.Members, []string{p.Leader}):
			t.Errorf("%s: members %v, want its leader %s alone", q.Name, p.Members, p.Leader)
		case q.Arguments.QueueType == topology.QueueTypeQuorum && !slices.Equal(p.Online, p.Members):
			t.Errorf("%s: online %v, want its members %v", q.Name, p.Online, p.Members)
		case q.Arguments.QueueType == topology.QueueTypeClassic && p.Members != nil:
			t.Errorf("%s, a classic queue, has members %v", q.Name, p.Members)
		}
	}
}

// TestAccDriftOfProperties checks that a queue of the set that is not
// durable, and a classic queue declared without x-queue-type, read as the
// broker has them: the first is drift that Diff replaces, the second is not.
func TestAccDriftOfProperties(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	spec := topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: 2, Resolution: time.Second, QueueType: topology.QueueTypeClassic}
	plan := applySpec(t, client, spec)
	names := topology.Names(spec.Name)
	level0 := topology.Queue{Name: names.Level(0)}
	level1 := plan.Queues[1]
	if level1.Name != names.Level(1) {
		t.Fatalf("plan.Queues[1] is %s, want %s", level1.Name, names.Level(1))
	}
	untyped := level1
	untyped.Arguments.QueueType = "" // declared without x-queue-type: classic by default
	nonDurable := plan.Queues[0]
	nonDurable.Arguments.Other = map[string]string{"durable": "false"}
	err := client.Apply(t.Context(), accVHost, []topology.Change{
		{Kind: topology.DeleteQueue, Queue: &level0},
		{Kind: topology.DeleteQueue, Queue: &level1},
		{Kind: topology.CreateQueue, Queue: &nonDurable},
		{Kind: topology.CreateQueue, Queue: &untyped},
	}, broker.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The deletions dropped the bindings into the two queues: put them back.
	var bindings []topology.Change
	for _, b := range plan.Bindings {
		if b.Destination == level0.Name || b.Destination == level1.Name {
			bindings = append(bindings, topology.Change{Kind: topology.CreateBinding, Binding: &b})
		}
	}
	if err := client.Apply(t.Context(), accVHost, bindings, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}

	got, err := client.ReadSet(t.Context(), accVHost, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	changes := topology.Diff(plan, got)
	var replaced []string
	for _, c := range changes {
		if c.Queue != nil {
			replaced = append(replaced, string(c.Kind)+" "+c.Queue.Name)
		}
	}
	want := []string{"delete_queue " + names.Level(0), "create_queue " + names.Level(0)}
	if diff := gocmp.Diff(want, replaced); diff != "" {
		t.Fatalf("queue changes of Diff(plan, read) (-want +got):\n%s\nall changes: %+v", diff, changes)
	}
	if err := client.Apply(t.Context(), accVHost, changes, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = client.ReadSet(t.Context(), accVHost, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	if changes := topology.Diff(plan, got); len(changes) != 0 {
		t.Errorf("after applying the drift's changes, Diff(plan, read) = %+v, want none", changes)
	}
}

// TestAccReadSetRequestCount checks that a read costs N + 5 requests, and
// still does when the vhost holds 200 other queues with bindings, some with
// names close to the set's (the management API's filter ignores case).
func TestAccReadSetRequestCount(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	const levels = 6
	spec := topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: levels, Resolution: time.Second}
	plan := applySpec(t, client, spec)

	read := func() (topology.Topology, int64) {
		t.Helper()
		return readCounted(t, client, func() (topology.Topology, error) { return client.ReadSet(t.Context(), accVHost, spec.Name) })
	}
	alone, requests := read()
	t.Logf("ReadSet of %d levels alone: %d requests", levels, requests)
	if requests > levels+5 {
		t.Errorf("ReadSet made %d requests, want at most %d", requests, levels+5)
	}

	// 200 unrelated queues bound from amq.topic, and 50 exchanges. Some names
	// extend the set's; some match its pattern ignoring case, as the
	// management API's filter does, so they reach the client, which must drop
	// them before it lists any exchange's bindings.
	upper := strings.ToUpper(spec.Name)
	var otherQueues []topology.Queue
	var otherExchanges []topology.Exchange
	for i := range 200 {
		var name string
		switch i % 4 {
		case 0:
			name = fmt.Sprintf("%s.other.%03d", spec.Name, i)
		case 1:
			name = fmt.Sprintf("%s.level.%02d.x", spec.Name, i/4)
		case 2:
			name = fmt.Sprintf("%s.LEVEL.%02d", upper, i/4)
			otherExchanges = append(otherExchanges, topology.Exchange{Name: name + ".DONE", Type: topology.ExchangeTopic})
		case 3:
			name = fmt.Sprintf("x%s.ingest.%03d", spec.Name, i)
		}
		otherQueues = append(otherQueues, topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}})
	}
	var otherBindings []topology.Binding
	for i := range otherQueues {
		otherBindings = append(otherBindings, topology.Binding{
			Source: "amq.topic", Destination: otherQueues[i].Name, DestinationType: topology.DestinationQueue, RoutingKey: "#",
		})
	}
	for i := range otherExchanges {
		otherBindings = append(otherBindings, topology.Binding{
			Source: otherExchanges[i].Name, Destination: otherQueues[4*i+2].Name, DestinationType: topology.DestinationQueue, RoutingKey: "#",
		})
	}
	applyStarted, applyRequests := time.Now(), client.Requests()
	createObjects(t, client, otherExchanges, otherQueues, otherBindings)
	t.Logf("Apply of %d objects: %d requests in %s", len(otherExchanges)+len(otherQueues)+len(otherBindings),
		client.Requests()-applyRequests, time.Since(applyStarted).Round(time.Millisecond))

	crowded, crowdedRequests := read()
	t.Logf("ReadSet of %d levels among 200 other queues: %d requests", levels, crowdedRequests)
	if crowdedRequests != requests {
		t.Errorf("ReadSet made %d requests among 200 other queues, %d alone; want the same", crowdedRequests, requests)
	}
	if diff := gocmp.Diff(alone, crowded); diff != "" {
		t.Errorf("ReadSet() changed with unrelated queues around (-alone +crowded):\n%s", diff)
	}
	if changes := topology.Diff(plan, crowded); len(changes) != 0 {
		t.Errorf("Diff(plan, read) = %+v, want none", changes)
	}
}

// amqpChannel opens a channel in confirm mode on the test broker.
func amqpChannel(t *testing.T) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(accAMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return ch
}

// publish sends a message and waits for the broker's confirm.
func publish(t *testing.T, ch *amqp.Channel, exchange, key string) {
	t.Helper()
	confirmation, err := ch.PublishWithDeferredConfirmWithContext(t.Context(), exchange, key, true, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte("test " + key)})
	if err != nil {
		t.Fatal(err)
	}
	acked, err := confirmation.WaitContext(t.Context())
	if err != nil || !acked {
		t.Fatalf("publishing to %q with key %q: acked = %v, error = %v", exchange, key, acked, err)
	}
}

// queueDepth is a queue's exact message count, from a passive declaration.
func queueDepth(t *testing.T, ch *amqp.Channel, queue string) int {
	t.Helper()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("QueueDeclarePassive(%s) error = %v", queue, err)
	}
	return q.Messages
}

func TestAccQueueMessagesAndDeleteIfEmpty(t *testing.T) {
	accClient(t)
	t.Parallel()
	for name, queueType := range map[string]topology.QueueType{
		"classic": topology.QueueTypeClassic,
		"quorum":  topology.QueueTypeQuorum,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client := accClient(t) // its own: the test counts its requests
			// An hour per tick: nothing expires while the test looks.
			spec := topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: 2, Resolution: time.Hour, QueueType: queueType}
			applySpec(t, client, spec)
			names := topology.Names(spec.Name)
			ch := amqpChannel(t)
			key, err := topology.EncodeKey("order", time.Hour, spec.Levels, spec.Resolution)
			if err != nil {
				t.Fatal(err)
			}
			const published = 3
			for range published {
				publish(t, ch, names.Ingest(), key)
			}
			if depth := queueDepth(t, ch, names.Level(0)); depth != published {
				t.Fatalf("level 0 holds %d messages after publishing %d with key %q", depth, published, key)
			}

			// The statistics lag: poll until they show the messages.
			started := time.Now()
			var counts map[string]int64
			for {
				before := client.Requests()
				counts, err = client.QueueMessages(t.Context(), accVHost, []string{names.Level(0), names.Level(1), names.Unroutable(), spec.Name + ".missing"})
				if err != nil {
					t.Fatal(err)
				}
				if n := client.Requests() - before; n != 1 {
					t.Errorf("QueueMessages made %d requests, want 1", n)
				}
				if counts[names.Level(0)] == published {
					break
				}
				if time.Since(started) > testHangSlack {
					t.Fatalf("hung: the statistics count %v after %s, want %d in %s", counts, testHangSlack, published, names.Level(0))
				}
				time.Sleep(250 * time.Millisecond)
			}
			t.Logf("%s: the statistics showed the messages after %s", name, time.Since(started).Round(time.Millisecond))
			want := map[string]int64{names.Level(0): published, names.Level(1): 0, names.Unroutable(): 0}
			if diff := gocmp.Diff(want, counts); diff != "" {
				t.Errorf("QueueMessages() mismatch (-want +got):\n%s", diff)
			}

			level0 := topology.Queue{Name: names.Level(0)}
			deletion := []topology.Change{{Kind: topology.DeleteQueue, Queue: &level0}}
			err = client.Apply(t.Context(), accVHost, deletion, broker.ApplyOptions{})
			var notEmpty *broker.QueueNotEmptyError
			var changeErr *broker.ChangeError
			if !errors.As(err, &notEmpty) || !errors.As(err, &changeErr) {
				t.Fatalf("Apply(delete non-empty queue) error = %v, want *ChangeError wrapping *QueueNotEmptyError", err)
			}
			if notEmpty.Queue != names.Level(0) || notEmpty.Messages != published {
				t.Errorf("QueueNotEmptyError = %+v, want queue %s with %d messages", notEmpty, names.Level(0), published)
			}
			t.Logf("refusal: %v", err)
			// The quorum check peeked: the head message is back within a
			// millisecond or so of the refusal.
			awaitDepth(t, ch, names.Level(0), published)

			if err := client.Apply(t.Context(), accVHost, deletion, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
				t.Fatalf("Apply(force delete) error = %v", err)
			}
			got, err := client.ReadSet(t.Context(), accVHost, spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range got.Queues {
				if q.Name == names.Level(0) {
					t.Errorf("level 0 is still there after a forced delete")
				}
			}
			// An empty queue goes without force.
			level1 := topology.Queue{Name: names.Level(1)}
			if err := client.Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.DeleteQueue, Queue: &level1}}, broker.ApplyOptions{}); err != nil {
				t.Fatalf("Apply(delete the empty level 1) error = %v", err)
			}
			if got, err = client.ReadSet(t.Context(), accVHost, spec.Name); err != nil {
				t.Fatal(err)
			}
			for _, q := range got.Queues {
				if q.Name == names.Level(1) {
					t.Errorf("the empty level 1 is still there after its delete")
				}
			}
			// Deleting what is gone is success.
			if err := client.Apply(t.Context(), accVHost, deletion, broker.ApplyOptions{}); err != nil {
				t.Errorf("Apply(delete a deleted queue) error = %v, want nil", err)
			}
		})
	}
}

// TestAccDeadLetteredMalformedKeyReachesUnroutable verifies on the broker
// that a dead-lettered message whose routing key matches no binding of the
// dead-letter exchange goes to that exchange's alternate exchange: a message
// published straight into level 1 (by the default exchange, so its key is
// the queue's name, whose last word is "01", neither "0" nor "1") must end
// in <name>.unroutable once its TTL expires.
func TestAccDeadLetteredMalformedKeyReachesUnroutable(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	for name, spec := range map[string]topology.Spec{
		"classic":              {QueueType: topology.QueueTypeClassic},
		"quorum at-most-once":  {QueueType: topology.QueueTypeQuorum, DeadLetterStrategy: topology.AtMostOnce},
		"quorum at-least-once": {QueueType: topology.QueueTypeQuorum, DeadLetterStrategy: topology.AtLeastOnce},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec.Name, spec.VHost, spec.Levels, spec.Resolution = uniqueName(t), accVHost, 2, 100*time.Millisecond
			applySpec(t, client, spec)
			names := topology.Names(spec.Name)
			ch := amqpChannel(t)
			publish(t, ch, "", names.Level(1))

			deadline := time.Now().Add(20 * time.Second)
			for queueDepth(t, ch, names.Unroutable()) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the message never reached %s: level 1 holds %d, level 0 holds %d",
						names.Unroutable(), queueDepth(t, ch, names.Level(1)), queueDepth(t, ch, names.Level(0)))
				}
				time.Sleep(50 * time.Millisecond)
			}
			msg, ok, err := ch.Get(names.Unroutable(), true)
			if err != nil || !ok {
				t.Fatalf("Get(%s) = %v, %v", names.Unroutable(), ok, err)
			}
			if msg.RoutingKey != names.Level(1) {
				t.Errorf("the parked message has routing key %q, want %q", msg.RoutingKey, names.Level(1))
			}
			for _, queue := range []string{names.Level(0), names.Level(1)} {
				if depth := queueDepth(t, ch, queue); depth != 0 {
					t.Errorf("%s holds %d messages, want 0", queue, depth)
				}
			}
		})
	}
}

func TestAccMissingVHost(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	vhost := uniqueName(t)
	if _, err := client.ReadSet(t.Context(), vhost, "delay"); !errors.Is(err, broker.ErrVHostNotFound) {
		t.Errorf("ReadSet() error = %v, want ErrVHostNotFound", err)
	}
	if _, err := client.QueueMessages(t.Context(), vhost, []string{"delay.level.00"}); !errors.Is(err, broker.ErrVHostNotFound) {
		t.Errorf("QueueMessages() error = %v, want ErrVHostNotFound", err)
	}
	queue := topology.Queue{Name: "delay.level.00"}
	err := client.Apply(t.Context(), vhost, []topology.Change{{Kind: topology.CreateQueue, Queue: &queue}}, broker.ApplyOptions{})
	var changeErr *broker.ChangeError
	if !errors.Is(err, broker.ErrVHostNotFound) || !errors.As(err, &changeErr) {
		t.Errorf("Apply(create queue) error = %v, want a *ChangeError that is ErrVHostNotFound", err)
	}
	for vhost, want := range map[string]bool{vhost: false, accVHost: true} {
		if exists, err := client.VHostExists(t.Context(), vhost); err != nil || exists != want {
			t.Errorf("VHostExists(%q) = %v, %v; want %v, nil", vhost, exists, err, want)
		}
	}
}

func TestAccWrongPassword(t *testing.T) {
	accClient(t)
	t.Parallel()
	client, err := broker.New(broker.Config{Endpoint: accEndpoint, Username: "guest", Password: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.ReadSet(t.Context(), accVHost, "delay")
	var authErr *broker.AuthError
	if !errors.As(err, &authErr) || !strings.Contains(err.Error(), `user "guest"`) {
		t.Errorf("ReadSet() error = %v, want *AuthError naming guest", err)
	}
}

// TestAccApplyReportsEveryFailureOfABatch checks that failures of one batch
// come back together, in change order, and that nothing after them runs.
func TestAccApplyReportsEveryFailureOfABatch(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	name := uniqueName(t)
	good := topology.Queue{Name: name + ".good", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}}
	badTTL := topology.Queue{Name: name + ".bad-ttl", Arguments: topology.QueueArguments{MessageTTL: topology.MaxTTL + 1}}
	badType := topology.Queue{Name: name + ".bad-type", Arguments: topology.QueueArguments{QueueType: "nonsense"}}
	never := topology.Exchange{Name: topology.Names(name).Out(), Type: topology.ExchangeTopic}
	t.Cleanup(func() {
		var deletions []topology.Change
		for _, q := range []*topology.Queue{&good, &badTTL, &badType} {
			deletions = append(deletions, topology.Change{Kind: topology.DeleteQueue, Queue: q})
		}
		deletions = append(deletions, topology.Change{Kind: topology.DeleteExchange, Exchange: &never})
		if err := client.Apply(context.Background(), accVHost, deletions, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	err := client.Apply(t.Context(), accVHost, []topology.Change{
		{Kind: topology.CreateQueue, Queue: &badTTL},
		{Kind: topology.CreateQueue, Queue: &good},
		{Kind: topology.CreateQueue, Queue: &badType},
		{Kind: topology.CreateExchange, Exchange: &never},
	}, broker.ApplyOptions{})
	if err == nil {
		t.Fatal("Apply() error = nil, want two failures")
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("Apply() error %v is not a joined error", err)
	}
	var failed []string
	for _, e := range joined.Unwrap() {
		var changeErr *broker.ChangeError
		if !errors.As(e, &changeErr) {
			t.Fatalf("failure %v is not a *ChangeError", e)
		}
		failed = append(failed, changeErr.Change.Queue.Name)
	}
	if diff := gocmp.Diff([]string{badTTL.Name, badType.Name}, failed); diff != "" {
		t.Errorf("failed changes (-want +got):\n%s", diff)
	}
	t.Logf("Apply() error:\n%v", err)
	got, readErr := client.QueueMessages(t.Context(), accVHost, []string{good.Name})
	if readErr != nil {
		t.Fatal(readErr)
	}
	if _, ok := got[good.Name]; !ok {
		t.Errorf("the good queue of the failed batch was not created")
	}
	set, readErr := client.ReadSet(t.Context(), accVHost, name)
	if readErr != nil {
		t.Fatal(readErr)
	}
	if len(set.Exchanges) != 0 {
		t.Errorf("the exchange after the failed batch was created: %+v", set.Exchanges)
	}
}

// TestAccShrinkDeletesBindings takes a set from three levels with a route to
// two levels without it: the ingest exchange stays, so its old bindings
// ("#.1.*.*", …) must really be deleted, by their properties keys.
func TestAccShrinkDeletesBindings(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	spec := topology.Spec{Name: uniqueName(t), VHost: accVHost, Levels: 3, Resolution: time.Second,
		Routes: []topology.Route{{Destination: "amq.topic", DestinationType: topology.DestinationExchange, Key: "orders"}}}
	applySpec(t, client, spec)
	spec.Levels, spec.Routes = 2, nil
	smaller, err := topology.Plan(spec)
	if err != nil {
		t.Fatal(err)
	}
	actual, err := client.ReadSet(t.Context(), accVHost, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	changes := topology.Diff(smaller, actual)
	deletedBindings := 0
	for _, c := range changes {
		if c.Kind == topology.DeleteBinding {
			deletedBindings++
		}
	}
	if deletedBindings == 0 {
		t.Fatalf("Diff deletes no binding: %+v", changes)
	}
	if err := client.Apply(t.Context(), accVHost, changes, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := client.ReadSet(t.Context(), accVHost, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(sortedTopology(smaller), got); diff != "" {
		t.Errorf("after deleting %d bindings, ReadSet() differs from the smaller plan (-plan +read):\n%s", deletedBindings, diff)
	}
}

// TestAccClassicQueueLeaderLocator declares a classic queue with
// x-queue-leader-locator: RabbitMQ 3.x refuses the argument on classic
// queues, which is why a classic set gets none by default; 4.x takes it.
func TestAccClassicQueueLeaderLocator(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	version := brokerVersion(t, client)
	queue := topology.Queue{Name: uniqueName(t), Arguments: topology.QueueArguments{
		QueueType: topology.QueueTypeClassic, LeaderLocator: topology.LeaderLocatorBalanced}}
	err := client.Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.CreateQueue, Queue: &queue}}, broker.ApplyOptions{})
	t.Cleanup(func() {
		_ = client.Apply(context.Background(), accVHost, []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}},
			broker.ApplyOptions{ForceDeleteQueues: true})
	})
	refused := strings.HasPrefix(version, "3.")
	if refused != (err != nil) {
		t.Fatalf("RabbitMQ %s: declaring a classic queue with x-queue-leader-locator: %v; want refused: %t", version, err, refused)
	}
	if err != nil && !strings.Contains(err.Error(), "x-queue-leader-locator") {
		t.Errorf("the refusal does not name the argument: %v", err)
	}
}
