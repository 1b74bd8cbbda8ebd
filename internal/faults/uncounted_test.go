package faults

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// uncountedNodes are the script's nodes of TestFaultUncountedWithoutMetrics.
var uncountedNodes = []int{4, 5}

// TestFaultUncountedWithoutMetrics checks a quorum queue on a two-node
// cluster that collects no management metrics, where only the leader's
// node counts its messages: through the leader's node a deletion is refused
// as non-empty; through the other node the leader is counted over AMQP when
// amqp_endpoint is named, and otherwise the count is unknown and the
// deletion refused, never made on a guess. Whether a check peeks depends on
// the version (DESIGN.md, "Fault tests: counting without metrics").
func TestFaultUncountedWithoutMetrics(t *testing.T) {
	requireFaults(t)
	version := os.Getenv("RABBITMQ_VERSION")
	if strings.HasPrefix(version, "3.") {
		t.Skipf("RabbitMQ %s without management metrics cannot read an exchange by name (500); this runs on 4.x", version)
	}
	// The version rule of broker.checkRule, for the nodes of make test-faults:
	// 4.3 (every node on it) peeks at quorum queues, 4.0 does not.
	peeks := version == "" || version == "4.3"
	nodes := startNodes(t, nodeConfig{Conf: "deprecated_features.permit.management_metrics_collection = false"}, uncountedNodes...)
	leader, other := brokerClient(t, nodes[0].ManagementURL), brokerClient(t, nodes[1].ManagementURL)
	queue := topology.Queue{Name: "faults-uncounted", Arguments: topology.QueueArguments{
		QueueType: topology.QueueTypeQuorum, LeaderLocator: topology.LeaderLocatorClientLocal}}
	if err := leader.Apply(t.Context(), "/", []topology.Change{{Kind: topology.CreateQueue, Queue: &queue}}, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	conn := nodeConnection(t, nodes[0].AMQPURL)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.PublishWithContext(t.Context(), "", queue.Name, true, false, amqp.Publishing{Body: []byte("held")}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(broker.StatisticsLag) // two ticks of the leader: its totals count the message
	onLeader, onOther := totalsOf(t, nodes[0].ManagementURL, queue.Name), totalsOf(t, nodes[1].ManagementURL, queue.Name)
	t.Logf("totals of %s through the leader's node %s: %v; through %s: %v", queue.Name, nodes[0].Name, onLeader, nodes[1].Name, onOther)
	if onLeader["leader"] != nodes[0].Name || onLeader["messages"] != 1.0 || onOther["messages"] != 0.0 {
		t.Fatalf("want the leader on %s counting 1 and %s answering 0: the test proves nothing", nodes[0].Name, nodes[1].Name)
	}
	// Where a peek is no delivery it counts the message exactly; elsewhere
	// the leader's node counts it by its totals, which lag: the queue may
	// hold it, as the refusal says.
	if peeks {
		checkThrough(t, leader, queue.Name, 1, nil)
	} else {
		checkStaleThrough(t, leader, queue.Name)
	}
	// The queue's leader counts it over AMQP, through either node: exact,
	// with no metrics and no peek. Without metrics the broker shows no
	// listeners, so the AMQP endpoint is named, as a user would.
	amqpOf, err := url.Parse(nodes[1].AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	amqpOf.User, amqpOf.Path = nil, "/"
	named, err := broker.New(broker.Config{Endpoint: nodes[1].ManagementURL, Username: "guest", Password: "guest",
		Timeout: 30 * time.Second, AMQPEndpoint: amqpOf.String()})
	if err != nil {
		t.Fatal(err)
	}
	checkThrough(t, named, queue.Name, 1, nil)
	if peeks {
		checkThrough(t, other, queue.Name, 1, nil)
	} else {
		checkThrough(t, other, queue.Name, 1, new(*broker.UncountedError))
	}

	// A peek's requeue reaches the queue after the peek's answer: the
	// message may be back a moment later, never gone.
	ctx, cancel := context.WithTimeout(t.Context(), broker.StatisticsLag)
	defer cancel()
	msg, err := messaging.Get(ctx, conn, queue.Name)
	if err != nil || msg.Redelivered != peeks {
		t.Fatalf("Get(%s) = redelivered %v, %v; want the message, redelivered %v (peeked at)", queue.Name, msg.Redelivered, err, peeks)
	}
	// Until its next tick the leader's totals count the message taken: a
	// deletion would be refused, as any count above 0 is believed.
	for deadline := time.Now().Add(3 * broker.StatisticsLag); totalsOf(t, nodes[0].ManagementURL, queue.Name)["messages"] != 0.0; {
		if time.Now().After(deadline) {
			t.Fatalf("the leader's totals still count a message in %s", queue.Name)
		}
		time.Sleep(250 * time.Millisecond)
	}
	started := time.Now()
	if err := leader.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &queue}}, broker.ApplyOptions{}); err != nil {
		t.Fatalf("deleting the emptied queue through the leader's node: %v", err)
	}
	t.Logf("the emptied queue deleted through the leader's node after %s", time.Since(started).Round(time.Millisecond))
}

// checkThrough makes the provider's checks of queue through client, and a
// deletion, which must be refused: as uncounted when uncounted is not nil,
// else as holding want messages.
func checkThrough(t *testing.T, client *broker.Client, queue string, want int64, uncounted **broker.UncountedError) { //nolint:unparam // want says what the count must be
	t.Helper()
	held, err := client.HeldMessages(t.Context(), "/", []string{queue})
	if uncounted == nil && (err != nil || held[queue] != want) || uncounted != nil && (!broker.IsUncounted(err) || held[queue] != 1) {
		t.Errorf("HeldMessages through %s = %v, %v; want %d (uncounted: %v)", client.Endpoint(), held, err, want, uncounted != nil)
	}
	err = client.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &topology.Queue{Name: queue}}}, broker.ApplyOptions{})
	t.Logf("deletion through %s: %v", client.Endpoint(), err)
	var notEmpty *broker.QueueNotEmptyError
	switch {
	case uncounted != nil && !errors.As(err, uncounted):
		t.Errorf("deletion through %s: %v, want an *UncountedError", client.Endpoint(), err)
	case uncounted == nil && (!errors.As(err, &notEmpty) || notEmpty.Messages != want):
		t.Errorf("deletion through %s: %v, want a *QueueNotEmptyError with %d messages", client.Endpoint(), err, want)
	}
}

// checkStaleThrough makes the provider's checks of queue through client,
// whose totals alone count its one message: counted as may-hold, and the
// deletion refused so.
func checkStaleThrough(t *testing.T, client *broker.Client, queue string) {
	t.Helper()
	held, err := client.HeldMessages(t.Context(), "/", []string{queue})
	if stale := broker.Uncounted(err)[queue]; held[queue] != 1 || stale == nil || stale.Messages != 1 {
		t.Errorf("HeldMessages through %s = %v, %v; want 1, counted by the totals alone", client.Endpoint(), held, err)
	}
	err = client.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &topology.Queue{Name: queue}}}, broker.ApplyOptions{})
	t.Logf("deletion through %s: %v", client.Endpoint(), err)
	if stale := new(broker.UncountedError); !errors.As(err, &stale) || stale.Messages != 1 {
		t.Errorf("deletion through %s: %v, want it refused for the 1 message the totals count", client.Endpoint(), err)
	}
}

// totalsOf reads queue through a node's management API as the check does.
func totalsOf(t *testing.T, endpoint, queue string) map[string]any {
	t.Helper()
	return queueAnswer(t, endpoint, queue, url.Values{
		"columns": {"leader,messages,messages_ready,messages_dlx"}, "enable_queue_totals": {"true"}})
}

// nodeConnection opens an AMQP connection to a node, closed when the test
// ends.
func nodeConnection(t *testing.T, amqpURL string) *amqp.Connection {
	t.Helper()
	conn, err := messaging.Dial(amqpURL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
