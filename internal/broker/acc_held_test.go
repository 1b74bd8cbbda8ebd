package broker_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccHeldMessagesSeesWhatTheStatisticsDoNot checks the check the
// provider makes before a change that deletes queues: a message just
// published, which the statistics count neither before the check nor after
// it, is reported in a quorum and in a classic queue; empty and missing queues are
// not; and the message stays where it was. Where a peek at a quorum queue
// would count as a delivery (RabbitMQ 4.0–4.2: checkRule), the check does
// not peek there: the queue's leader counts it (a passive declaration over
// AMQP), as Apply's deletion would.
func TestAccHeldMessagesSeesWhatTheStatisticsDoNot(t *testing.T) {
	log := &logged{}
	client := accLoggingClient(t, log) // its own: the test counts its requests, and reads its log
	t.Parallel()
	peeksAtQuorum := peeksAtQuorumQueues(t, client)
	ch := amqpChannel(t)
	// The statistics catch a message now and then before the check, which
	// then needs no peek: try again, on new queues, until they have not.
	for attempt := 1; ; attempt++ {
		base := uniqueName(t)
		classic := topology.Queue{Name: base + ".classic", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}}
		emptyClassic := topology.Queue{Name: base + ".classic-empty", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}}
		quorum, emptyQuorum := quorumQueue(base+".quorum"), quorumQueue(base+".quorum-empty")
		createObjects(t, client, nil, []topology.Queue{classic, emptyClassic, quorum, emptyQuorum}, nil)
		queues := []string{classic.Name, emptyClassic.Name, quorum.Name, emptyQuorum.Name, base + ".missing"}
		// With their statistics, which bring a quorum queue's policy: a
		// 3.10 check peeks only once it sees no delivery limit applies.
		awaitQueueStatistics(t, client, quorum.Name, emptyQuorum.Name)
		// A first check opens and proves the client's AMQP connection, whose
		// requests (listeners, cluster name, connections) are not the queues'.
		if _, err := client.HeldMessages(t.Context(), accVHost, []string{emptyClassic.Name}); err != nil {
			t.Fatal(err)
		}

		publish(t, ch, "", classic.Name)
		publish(t, ch, "", quorum.Name)
		published := time.Now()
		counts, err := client.QueueMessages(t.Context(), accVHost, queues)
		if err != nil {
			t.Fatal(err)
		}
		if counts[classic.Name] > 0 || counts[quorum.Name] > 0 {
			if attempt == statisticsAttempts {
				t.Fatalf("the statistics counted the messages at once %d times out of %d: %v", attempt, attempt, counts)
			}
			continue
		}
		logBefore := len(log.text())
		held, err := client.HeldMessages(t.Context(), accVHost, queues)
		elapsed, said := time.Since(published), log.text()[logBefore:]
		if err != nil {
			t.Fatal(err)
		}
		// Its own requests: the client's AMQP proof may still read the
		// management API meanwhile.
		requests := operationRequests(t, said, "held messages")
		// The messages stay, so statistics that count neither after the
		// check counted neither during it: the check saw what they did not.
		after, err := client.QueueMessages(t.Context(), accVHost, queues)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("HeldMessages %s after the publish, the statistics reading %v, then %v: %v in %d requests (peeks at quorum queues: %v)",
			elapsed.Round(time.Millisecond), counts, after, held, requests, peeksAtQuorum)
		if after[classic.Name] > 0 || after[quorum.Name] > 0 {
			if attempt == statisticsAttempts {
				t.Fatalf("the statistics counted the messages before the check had ended %d times out of %d: %v", attempt, attempt, after)
			}
			continue
		}
		want, peeked := map[string]int64{classic.Name: 1, quorum.Name: 1}, []string{classic.Name, quorum.Name}
		// Each queue read alone: its statistics and, since they count
		// nothing yet, a peek where it is no delivery; only the statistics
		// of the missing one, and then a look at the vhost.
		wantRequests := int64(2*(len(queues)-1) + 1 + 1)
		if !peeksAtQuorum {
			// Where a peek counts, the quorum queue's leader counts it over
			// AMQP instead, and, for the empty queue's 0, a read of the
			// leader's state right after.
			peeked, wantRequests = peeked[:1], wantRequests-2+1
		}
		if !gocmp.Equal(want, held) {
			t.Errorf("HeldMessages() = %v, want %v", held, want)
		}
		switch {
		case requests != wantRequests && strings.Contains(said, "counting by"):
			// A leader's 0 that was slow (a busy machine) or an AMQP count that
			// failed sends the check to the statistics, which it reads more.
			t.Logf("HeldMessages made %d requests, not %d: a count fell back to the statistics:\n%s", requests, wantRequests, said)
		case requests != wantRequests:
			t.Errorf("HeldMessages made %d requests, want %d: two per queue (one per quorum queue where a peek counts), "+
				"one for the missing one, one for the vhost; the client's log meanwhile:\n%s", requests, wantRequests, said)
		}
		checkPeeked(t, ch, []string{classic.Name, quorum.Name}, peeked)
		for _, queue := range []string{emptyClassic.Name, emptyQuorum.Name} {
			if depth := queueDepth(t, ch, queue); depth != 0 {
				t.Errorf("%s holds %d messages, want 0", queue, depth)
			}
		}
		return
	}
}

// statisticsAttempts is how many times a test that needs the statistics
// not to count a message yet tries, on new queues: they catch one within
// a second now and then, and more often on a loaded machine.
const statisticsAttempts = 10

// checkPeeked takes the one message of each of queues and checks it is
// the test's, redelivered if and only if the queue is among peeked.
func checkPeeked(t *testing.T, ch *amqp.Channel, queues, peeked []string) {
	t.Helper()
	for _, queue := range queues {
		awaitDepth(t, ch, queue, 1)
		msg, ok, err := ch.Get(queue, true)
		if err != nil || !ok {
			t.Fatalf("Get(%s) = %v, %v; want the message", queue, ok, err)
		}
		if wantRedelivered := slices.Contains(peeked, queue); string(msg.Body) != "test "+queue || msg.Redelivered != wantRedelivered {
			t.Errorf("the message of %s is %q, redelivered = %v; want %q, redelivered %v (by a peek)",
				queue, msg.Body, msg.Redelivered, "test "+queue, wantRedelivered)
		}
	}
}

// peeksAtQuorumQueues tells whether client's checks peek at a quorum queue
// without a delivery limit on the test broker, learning the broker as the
// client's first check of one would.
func peeksAtQuorumQueues(t *testing.T, client *broker.Client) bool {
	t.Helper()
	peeks, err := broker.PeeksAtQuorumQueues(t.Context(), client)
	if err != nil {
		t.Fatal(err)
	}
	return peeks
}

// awaitQueueStatistics waits until the broker gives a count of each of
// queues (a new queue has none for some seconds), calling it hung after
// testHangSlack.
func awaitQueueStatistics(t *testing.T, client *broker.Client, queues ...string) {
	t.Helper()
	deadline := time.Now().Add(testHangSlack)
	for _, queue := range queues {
		for {
			has, err := broker.HasStatistics(t.Context(), client, accVHost, queue)
			if err != nil {
				t.Fatal(err)
			}
			if has {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("hung: the broker gives no count of %s after %s", queue, testHangSlack)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// TestAccStatisticsOutliveMessages records what made a draining generation
// look full right after a broker restart (issue 22): the management
// statistics of a quorum TTL queue go on counting messages that have left
// it, until the queue's next statistics tick reaches the management
// database — within broker.StatisticsLag. The messages are gone (a passive
// declaration counts none, a peek finds none) and arrive once. A draining
// generation whose last messages left just before an apply is therefore
// kept by that apply unless its migration_wait covers the lag, and deleted
// by a later one.
func TestAccStatisticsOutliveMessages(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	// Longer than broker.StatisticsLag, so the statistics count them before they leave.
	const ttl, published = 12 * time.Second, 20
	ch := amqpChannel(t)
	// A statistics sample may reach the management database in the instant
	// between the messages leaving and the first look: try again, on new
	// queues, until it has not.
	for attempt := 1; ; attempt++ {
		source, dead := ttlQueueDeadLettering(t, client, ttl, topology.AtLeastOnce)
		for range published {
			publish(t, ch, "", source.Name)
		}
		deadline := time.Now().Add(ttl + testHangSlack)
		for queueDepth(t, ch, dead.Name) < published {
			if time.Now().After(deadline) {
				t.Fatalf("hung: %d of %d messages dead-lettered into %s %s after their TTL", queueDepth(t, ch, dead.Name), published, dead.Name, testHangSlack)
			}
			time.Sleep(10 * time.Millisecond)
		}
		left := time.Now()
		counted, err := client.CountedMessages(t.Context(), accVHost, []string{source.Name})
		if err != nil {
			t.Fatal(err)
		}
		if depth := queueDepth(t, ch, source.Name); depth != 0 {
			t.Fatalf("%s holds %d messages after all %d were dead-lettered", source.Name, depth, published)
		}
		if peeked := peek(t, source.Name); len(peeked) != 0 {
			t.Fatalf("a peek at %s found %v after every message was dead-lettered", source.Name, peeked)
		}
		if counted[source.Name] == 0 {
			if attempt == 3 {
				t.Fatalf("the statistics counted nothing in %s the instant its messages left, three times out of three", source.Name)
			}
			continue
		}
		for counted[source.Name] > 0 {
			if time.Since(left) > broker.StatisticsLag+testHangSlack {
				t.Fatalf("hung: the statistics still count %d messages in %s %s after they left", counted[source.Name], source.Name,
					time.Since(left).Round(time.Millisecond))
			}
			time.Sleep(250 * time.Millisecond)
			if counted, err = client.CountedMessages(t.Context(), accVHost, []string{source.Name}); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("the statistics counted messages that had left %s for %s (StatisticsLag %s)", source.Name,
			time.Since(left).Round(time.Millisecond), broker.StatisticsLag)
		if depth := queueDepth(t, ch, dead.Name); depth != published {
			t.Errorf("%s holds %d messages, want each of the %d once", dead.Name, depth, published)
		}
		return
	}
}

// operationRequests is how many requests the client's log says its
// operation made.
func operationRequests(t *testing.T, said, operation string) int64 {
	t.Helper()
	for line := range strings.Lines(said) {
		if fields, ok := strings.CutPrefix(strings.TrimSpace(line), "RabbitMQ management API: "+operation+" "); ok {
			var logged struct {
				Requests int64 `json:"requests"`
			}
			if err := json.Unmarshal([]byte(fields), &logged); err != nil {
				t.Fatal(err)
			}
			return logged.Requests
		}
	}
	t.Fatalf("the client's log names no %s:\n%s", operation, said)
	return 0
}
