package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// createObjects applies the creation of the given objects, and deletes them,
// messages and all, when the test ends.
func createObjects(t *testing.T, client *broker.Client, exchanges []topology.Exchange, queues []topology.Queue, bindings []topology.Binding) {
	t.Helper()
	var creations, deletions []topology.Change
	for i := range exchanges {
		creations = append(creations, topology.Change{Kind: topology.CreateExchange, Exchange: &exchanges[i]})
		deletions = append(deletions, topology.Change{Kind: topology.DeleteExchange, Exchange: &exchanges[i]})
	}
	for i := range queues {
		creations = append(creations, topology.Change{Kind: topology.CreateQueue, Queue: &queues[i]})
		deletions = append(deletions, topology.Change{Kind: topology.DeleteQueue, Queue: &queues[i]})
	}
	for i := range bindings {
		creations = append(creations, topology.Change{Kind: topology.CreateBinding, Binding: &bindings[i]})
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := client.Apply(ctx, accVHost, deletions, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := client.Apply(t.Context(), accVHost, creations, broker.ApplyOptions{}); err != nil {
		t.Fatalf("Apply(create) error = %v", err)
	}
}

// queueExists asks the broker with a passive declaration, on a channel of
// its own: a missing queue closes the channel.
func queueExists(t *testing.T, queue string) bool {
	t.Helper()
	conn, err := amqp.Dial(accAMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	_, err = ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	var amqpErr *amqp.Error
	switch {
	case err == nil:
		return true
	case errors.As(err, &amqpErr) && amqpErr.Code == amqp.NotFound:
		return false
	}
	t.Fatalf("QueueDeclarePassive(%s) error = %v", queue, err)
	return false
}

func deleteQueue(t *testing.T, client *broker.Client, queue string, opts broker.ApplyOptions) error {
	t.Helper()
	q := topology.Queue{Name: queue}
	return client.Apply(t.Context(), accVHost, []topology.Change{{Kind: topology.DeleteQueue, Queue: &q}}, opts)
}

func quorumQueue(name string) topology.Queue {
	return topology.Queue{Name: name, Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
}

// TestAccQuorumQueueDeletion checks the emptiness check that replaces the
// if-empty guard quorum queues refuse.
func TestAccQuorumQueueDeletion(t *testing.T) {
	client := accClient(t)
	t.Parallel()

	t.Run("a message the statistics do not show yet is refused and kept", func(t *testing.T) {
		t.Parallel()
		peeksAtQuorum := peeksAtQuorumQueues(t, client)
		ch := amqpChannel(t)
		// The statistics catch a message now and then before the check,
		// which then needs no peek: try again, on a new queue, until they
		// have not.
		for attempt := 1; ; attempt++ {
			queue := quorumQueue(uniqueName(t))
			createObjects(t, client, nil, []topology.Queue{queue}, nil)
			awaitQueueStatistics(t, client, queue.Name) // they bring its policy (checkRule)
			publish(t, ch, "", queue.Name)
			published := time.Now()
			counts, err := client.QueueMessages(t.Context(), accVHost, []string{queue.Name})
			if err != nil {
				t.Fatal(err)
			}
			if counts[queue.Name] > 0 {
				if attempt == statisticsAttempts {
					t.Fatalf("the statistics counted the message at once %d times out of %d", attempt, attempt)
				}
				continue
			}
			err = deleteQueue(t, client, queue.Name, broker.ApplyOptions{})
			elapsed := time.Since(published)
			// The message stays, so statistics that do not count it after the
			// delete did not during it: the check saw what they did not.
			after, countErr := client.QueueMessages(t.Context(), accVHost, []string{queue.Name})
			if countErr != nil {
				t.Fatal(countErr)
			}
			t.Logf("delete %s after the publish, the statistics reading %d, then %d (peeks at quorum queues: %v): %v",
				elapsed.Round(time.Millisecond), counts[queue.Name], after[queue.Name], peeksAtQuorum, err)
			if after[queue.Name] > 0 && peeksAtQuorum {
				if attempt == statisticsAttempts {
					t.Fatalf("the statistics counted the message before the delete had ended %d times out of %d", attempt, attempt)
				}
				continue
			}
			var notEmpty *broker.QueueNotEmptyError
			if !errors.As(err, &notEmpty) {
				t.Fatalf("Apply(delete) error = %v, want a *QueueNotEmptyError", err)
			}
			if notEmpty.Queue != queue.Name || notEmpty.Messages != 1 {
				t.Errorf("QueueNotEmptyError = %+v, want queue %s with 1 message", notEmpty, queue.Name)
			}
			// Where a peek would count as a delivery, the deletion waited
			// for statistics sampled after it began, which count the
			// message: it is not redelivered.
			checkPeeked(t, ch, []string{queue.Name}, map[bool][]string{true: {queue.Name}}[peeksAtQuorum])
			return
		}
	})

	t.Run("an empty queue is deleted", func(t *testing.T) {
		t.Parallel()
		queue := quorumQueue(uniqueName(t))
		createObjects(t, client, nil, []topology.Queue{queue}, nil)
		before := client.Requests()
		if err := deleteQueue(t, client, queue.Name, broker.ApplyOptions{}); err != nil {
			t.Fatalf("Apply(delete the empty queue) error = %v", err)
		}
		t.Logf("deleting an empty quorum queue took %d requests", client.Requests()-before)
		if queueExists(t, queue.Name) {
			t.Errorf("the empty queue %s is still there after its delete", queue.Name)
		}
		if err := deleteQueue(t, client, queue.Name, broker.ApplyOptions{}); err != nil {
			t.Errorf("Apply(delete a deleted queue) error = %v, want nil", err)
		}
	})

	t.Run("a queue still bound keeps its bindings when refused", func(t *testing.T) {
		// As a replacement's deletion finds it: Diff leaves its bindings for
		// the deletion to drop. Where the check may not peek, it unbinds the
		// queue while it waits, and binds it again when it refuses.
		t.Parallel()
		base := uniqueName(t)
		source := topology.Exchange{Name: base + ".x", Type: topology.ExchangeTopic}
		queue := quorumQueue(base)
		binding := topology.Binding{Source: source.Name, Destination: queue.Name, DestinationType: topology.DestinationQueue, RoutingKey: "k.#"}
		createObjects(t, client, []topology.Exchange{source}, []topology.Queue{queue}, []topology.Binding{binding})
		ch := amqpChannel(t)
		publish(t, ch, source.Name, "k.1")
		var notEmpty *broker.QueueNotEmptyError
		if err := deleteQueue(t, client, queue.Name, broker.ApplyOptions{}); !errors.As(err, &notEmpty) {
			t.Fatalf("Apply(delete) error = %v, want a *QueueNotEmptyError", err)
		}
		if keys := bindingKeysFrom(t, source.Name, queue.Name); !slices.Equal(keys, []string{"k.#"}) {
			t.Errorf("after the refusal %s is bound to %s with keys %q, want [k.#]", source.Name, queue.Name, keys)
		}
		if _, ok, err := ch.Get(queue.Name, true); err != nil || !ok {
			t.Fatalf("Get(%s) = %v, %v; want the message", queue.Name, ok, err)
		}
		awaitStatistics(t, client, queue.Name, 0) // until then they count the message taken
		if err := deleteQueue(t, client, queue.Name, broker.ApplyOptions{}); err != nil || queueExists(t, queue.Name) {
			t.Errorf("Apply(delete the emptied queue) error = %v; want it gone", err)
		}
	})

	t.Run("force deletes a queue holding messages", func(t *testing.T) {
		t.Parallel()
		queue := quorumQueue(uniqueName(t))
		createObjects(t, client, nil, []topology.Queue{queue}, nil)
		publish(t, amqpChannel(t), "", queue.Name)
		if err := deleteQueue(t, client, queue.Name, broker.ApplyOptions{ForceDeleteQueues: true}); err != nil {
			t.Fatalf("Apply(force delete) error = %v", err)
		}
		if queueExists(t, queue.Name) {
			t.Errorf("%s is still there after a forced delete", queue.Name)
		}
	})
}

// awaitDepth waits, a second at most, until queue holds want ready
// messages. The management API answers a peek before the broker has put the
// message back: for about a millisecond it is unacknowledged, not ready.
func awaitDepth(t *testing.T, ch *amqp.Channel, queue string, want int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		depth := queueDepth(t, ch, queue)
		if depth == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d ready messages, want %d", queue, depth, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// peek asks the management API for the head message of queue and has it
// put back, as Apply's emptiness check does.
func peek(t *testing.T, queue string) []map[string]any {
	t.Helper()
	request, err := json.Marshal(broker.PeekRequest)
	if err != nil {
		t.Fatal(err)
	}
	resp := managementPost(t, "/api/queues/"+url.PathEscape(accVHost)+"/"+url.PathEscape(queue)+"/get", string(request))
	defer resp.Body.Close()
	var messages []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&messages); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("peek at %s: status %s, decoding error %v", queue, resp.Status, err)
	}
	return messages
}

// managementPost posts body to path of the management API as guest, for
// what the client under test does not do itself, and returns the answer.
func managementPost(t *testing.T, path, body string) *http.Response {
	t.Helper()
	return managementRequest(t, http.MethodPost, path, strings.NewReader(body))
}

// managementRequest sends a request to path of the management API as
// guest, with a JSON body unless body is nil, and returns the answer.
func managementRequest(t *testing.T, method, path string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, accEndpoint+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("guest", "guest")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// ttlQueueDeadLettering declares a quorum queue with a message TTL that
// dead-letters with strategy, through a fanout exchange, into a quorum
// queue of its own, and returns both.
func ttlQueueDeadLettering(t *testing.T, client *broker.Client, ttl time.Duration, strategy topology.DeadLetterStrategy) (source, dead topology.Queue) {
	t.Helper()
	base := uniqueName(t)
	dlx := topology.Exchange{Name: base + ".dlx", Type: topology.ExchangeFanout}
	dead = quorumQueue(base + ".dead")
	source = quorumQueue(base + ".ttl")
	source.Arguments.MessageTTL = ttl.Milliseconds()
	source.Arguments.DeadLetterExchange = dlx.Name
	source.Arguments.DeadLetterStrategy = strategy
	if strategy == topology.AtLeastOnce {
		source.Arguments.Overflow = "reject-publish" // else the broker downgrades it to at-most-once
	}
	createObjects(t, client, []topology.Exchange{dlx}, []topology.Queue{dead, source},
		[]topology.Binding{{Source: dlx.Name, Destination: dead.Name, DestinationType: topology.DestinationQueue}})
	return source, dead
}

// TestAccPeekKeepsMessageTTL checks that a peek neither loses a message of
// a quorum TTL queue nor delays its dead-lettering: peeked a third of the
// way through its TTL, the message dead-letters before the peek plus the
// TTL, the earliest a peek that restarted the TTL would let it go.
func TestAccPeekKeepsMessageTTL(t *testing.T) {
	client := accClient(t)
	t.Parallel()
	for name, strategy := range map[string]topology.DeadLetterStrategy{
		"at-most-once":  topology.AtMostOnce,
		"at-least-once": topology.AtLeastOnce,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A message late by the peek's lead tells nothing: on a machine
			// that slow, the run is tried again with twice the TTL.
			for ttl := 3 * time.Second; ; ttl *= 2 {
				if peekKeepsMessageTTL(t, client, ttl, strategy) {
					return
				}
				if ttl >= 48*time.Second {
					t.Fatalf("hung: at every TTL up to %s the message dead-lettered too late to tell whether the peek restarted it", ttl)
				}
			}
		})
	}
}

// peekKeepsMessageTTL runs TestAccPeekKeepsMessageTTL with ttl and says
// whether the run told: whether the message was peeked before its TTL and
// dead-lettered before the peek's start and the TTL.
func peekKeepsMessageTTL(t *testing.T, client *broker.Client, ttl time.Duration, strategy topology.DeadLetterStrategy) bool {
	source, dead := ttlQueueDeadLettering(t, client, ttl, strategy)
	ch := amqpChannel(t)
	sent := time.Now() // before the broker takes it: its TTL runs from later
	publish(t, ch, "", source.Name)
	time.Sleep(time.Until(sent.Add(ttl / 3)))
	peekStarted := time.Now()
	peeked := peek(t, source.Name)
	peekEnded := time.Now()
	if len(peeked) == 0 && peekEnded.Sub(sent) >= ttl-messaging.BrokerClock {
		t.Logf("TTL %s: the peek ended %s after the publish, when the message may have left", ttl, peekEnded.Sub(sent).Round(time.Millisecond))
		return false
	}
	if len(peeked) != 1 || peeked[0]["payload"] != "test "+source.Name {
		t.Fatalf("peek at %s = %v, want the message", source.Name, peeked)
	}
	for queueDepth(t, ch, dead.Name) == 0 {
		if time.Since(sent) > ttl+testHangSlack {
			t.Fatalf("hung: the message never dead-lettered: %s holds %d", source.Name, queueDepth(t, ch, source.Name))
		}
		time.Sleep(10 * time.Millisecond)
	}
	deadLettered := time.Since(sent)
	t.Logf("TTL %s: peeked %s to %s, dead-lettered %s after the publish", ttl,
		peekStarted.Sub(sent).Round(time.Millisecond), peekEnded.Sub(sent).Round(time.Millisecond), deadLettered.Round(time.Millisecond))
	if deadLettered < ttl-messaging.BrokerClock {
		t.Errorf("dead-lettered %s after the publish, before its TTL of %s", deadLettered, ttl)
	}
	msg, ok, err := ch.Get(dead.Name, true)
	if err != nil || !ok {
		t.Fatalf("Get(%s) = %v, %v; want the message", dead.Name, ok, err)
	}
	if string(msg.Body) != "test "+source.Name {
		t.Errorf("the dead-lettered message is %q, want %q", msg.Body, "test "+source.Name)
	}
	if depth := queueDepth(t, ch, source.Name); depth != 0 {
		t.Errorf("%s holds %d messages after the dead-lettering, want 0", source.Name, depth)
	}
	// A peek that restarted the TTL would have kept the message until at
	// least the peek's start and the TTL.
	return deadLettered < peekStarted.Sub(sent)+ttl
}

// requestLog records the requests a client sends through a proxy in front
// of the test broker, as "METHOD path" with the path escaped.
type requestLog struct {
	mu       sync.Mutex
	requests []string
}

// take returns the requests recorded since the last take.
func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	requests := l.requests
	l.requests = nil
	return requests
}

// recordingClient is a client of the test broker whose requests go through
// a proxy that records them.
func recordingClient(t *testing.T) (*broker.Client, *requestLog) {
	t.Helper()
	accClient(t) // skips unless TF_ACC=1
	target, err := url.Parse(accEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	log := &requestLog{}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.requests = append(log.requests, r.Method+" "+r.URL.EscapedPath())
		log.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	client, err := broker.New(broker.Config{Endpoint: server.URL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	return client, log
}

// awaitStatistics waits until the management statistics count want
// messages in queue, calling the broker hung after testHangSlack.
func awaitStatistics(t *testing.T, client *broker.Client, queue string, want int64) {
	t.Helper()
	started := time.Now()
	for {
		counts, err := client.QueueMessages(t.Context(), accVHost, []string{queue})
		if err != nil {
			t.Fatal(err)
		}
		if counts[queue] == want {
			t.Logf("the statistics counted %d message(s) in %s after %s", want, queue, time.Since(started).Round(time.Millisecond))
			return
		}
		if time.Since(started) > testHangSlack {
			t.Fatalf("hung: the statistics count %d messages in %s after %s, want %d", counts[queue], queue, testHangSlack, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestAccQuorumDeletionCheckReadsTheQueueAlone checks, through a proxy that
// records every request, that the check before deleting a quorum queue
// reads that queue alone (its statistics, again while it waits for them,
// then a peek if they count none and a peek is no delivery there), never a
// listing of its vhost, whose cost grows with every queue the vhost holds;
// and that it refuses a queue holding a message in each place a message
// can be: ready, delivered and unacknowledged, or waiting for at-least-once
// dead-lettering.
func TestAccQuorumDeletionCheckReadsTheQueueAlone(t *testing.T) {
	client, log := recordingClient(t)
	peeksAtQuorum := peeksAtQuorumQueues(t, client)
	// checkOnly checks the requests of the deletion: the if-empty guard the
	// broker refuses, the statistics (more than once while the check waits
	// for them: a new queue's first, or fresh ones where it may not peek,
	// after it made sure no binding leads into the queue), a peek where a
	// peek is no delivery unless they counted a message, and the unguarded
	// delete if deleted.
	checkOnly := func(t *testing.T, queue string, counted, deleted bool) {
		t.Helper()
		path := "/api/queues/" + url.PathEscape(accVHost) + "/" + url.PathEscape(queue)
		got := log.take()
		// The client's reads of the broker's listeners and cluster name, the
		// listing of connections that proves its AMQP connection, and the
		// vhost's policies, for its first count through a queue's leader
		// over AMQP, are not the queue's statistics; nor are the reads of
		// its Raft log that compare it with its declaration's mark.
		got = slices.DeleteFunc(got, func(r string) bool {
			return strings.HasPrefix(r, "GET /api/overview") || strings.HasPrefix(r, "GET /api/connections") ||
				strings.HasPrefix(r, "GET /api/policies") || strings.HasPrefix(r, "GET /api/operator-policies") ||
				strings.HasPrefix(r, "GET /api/queues/quorum/")
		})
		if !peeksAtQuorum && !counted {
			// Without a peek, the check lists the queue's bindings (to delete
			// any left) right after its first read, then reads it again: its
			// statistics, or, where its leader counts it, the leader's state.
			if len(got) < 3 || got[2] != "GET "+path+"/bindings" {
				t.Errorf("requests of the deletion %q: want the listing of the queue's bindings third", got)
			} else {
				got = slices.Delete(got, 2, 3)
			}
		}
		reads := 1
		for reads+1 < len(got) && got[reads+1] == "GET "+path {
			reads++
		}
		want := append([]string{"DELETE " + path}, slices.Repeat([]string{"GET " + path}, reads)...)
		peeked := peeksAtQuorum && !counted && (deleted || slices.Contains(got, "POST "+path+"/get"))
		if peeked {
			// Unless the statistics caught the message at once, as now
			// and then they do: then the check needs no peek.
			want = append(want, "POST "+path+"/get")
		}
		if deleted {
			want = append(want, "DELETE "+path)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("requests of the deletion (-want +got):\n%s", diff)
		}
	}
	// refusedByStatistics: only the statistics, which lag, see the message,
	// so the refusal says that the queue may hold it; the queue stays, and
	// nothing peeked where a peek counts as a delivery.
	refusedByStatistics := func(t *testing.T, queue string, err error) {
		t.Helper()
		path := "/api/queues/" + url.PathEscape(accVHost) + "/" + url.PathEscape(queue)
		got := log.take()
		if len(got) == 0 || got[0] != "DELETE "+path {
			t.Fatalf("requests of the deletion %q: want the guarded attempt first", got)
		}
		if got = got[1:]; slices.Contains(got, "DELETE "+path) || !peeksAtQuorum && slices.Contains(got, "POST "+path+"/get") {
			t.Errorf("requests of the deletion %q: want neither an unguarded deletion nor, where it counts, a peek", got)
		}
		var stale *broker.UncountedError
		if !errors.As(err, &stale) || stale.Queue != queue || stale.Messages != 1 {
			t.Errorf("Apply(delete) error = %v, want an *UncountedError for %s's 1 message counted by statistics", err, queue)
		}
		if !queueExists(t, queue) {
			t.Errorf("%s is gone after a refused delete", queue)
		}
	}
	refused := func(t *testing.T, queue string, err error) {
		t.Helper()
		var notEmpty *broker.QueueNotEmptyError
		if !errors.As(err, &notEmpty) || notEmpty.Queue != queue || notEmpty.Messages != 1 {
			t.Errorf("Apply(delete) error = %v, want a *QueueNotEmptyError for %s with 1 message", err, queue)
		}
		if !queueExists(t, queue) {
			t.Errorf("%s is gone after a refused delete", queue)
		}
	}
	// One at a time: the log is the client's.

	t.Run("an empty queue is deleted", func(t *testing.T) {
		queue := quorumQueue(uniqueName(t))
		createObjects(t, client, nil, []topology.Queue{queue}, nil)
		log.take()
		if err := deleteQueue(t, client, queue.Name, broker.ApplyOptions{}); err != nil {
			t.Fatalf("Apply(delete the empty queue) error = %v", err)
		}
		checkOnly(t, queue.Name, false, true)
		if queueExists(t, queue.Name) {
			t.Errorf("the empty queue %s is still there after its delete", queue.Name)
		}
	})

	t.Run("a ready message is refused", func(t *testing.T) {
		queue := quorumQueue(uniqueName(t))
		createObjects(t, client, nil, []topology.Queue{queue}, nil)
		awaitQueueStatistics(t, client, queue.Name)
		publish(t, amqpChannel(t), "", queue.Name)
		log.take()
		err := deleteQueue(t, client, queue.Name, broker.ApplyOptions{})
		checkOnly(t, queue.Name, false, false)
		refused(t, queue.Name, err)
	})

	t.Run("an unacknowledged message is refused", func(t *testing.T) {
		queue := quorumQueue(uniqueName(t))
		createObjects(t, client, nil, []topology.Queue{queue}, nil)
		ch := amqpChannel(t)
		publish(t, ch, "", queue.Name)
		deliveries, err := ch.Consume(queue.Name, "", false, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-deliveries: // held, never acknowledged: the peek cannot see it
		case <-time.After(5 * time.Second):
			t.Fatal("the consumer got no message")
		}
		awaitStatistics(t, client, queue.Name, 1)
		log.take()
		err = deleteQueue(t, client, queue.Name, broker.ApplyOptions{})
		refusedByStatistics(t, queue.Name, err)
	})

	t.Run("a message waiting for at-least-once dead-lettering is refused", func(t *testing.T) {
		base := uniqueName(t)
		queue := quorumQueue(base)
		queue.Arguments.MessageTTL = 1
		// An exchange that does not exist: the expired message waits in
		// messages_dlx, neither ready nor delivered.
		queue.Arguments.DeadLetterExchange = base + ".missing"
		queue.Arguments.DeadLetterStrategy = topology.AtLeastOnce
		queue.Arguments.Overflow = "reject-publish" // else the broker downgrades it to at-most-once
		createObjects(t, client, nil, []topology.Queue{queue}, nil)
		ch := amqpChannel(t)
		publish(t, ch, "", queue.Name)
		awaitStatistics(t, client, queue.Name, 1)
		if depth := queueDepth(t, ch, queue.Name); depth != 0 {
			t.Fatalf("%s holds %d ready messages, want 0: the message must have expired", queue.Name, depth)
		}
		log.take()
		err := deleteQueue(t, client, queue.Name, broker.ApplyOptions{})
		refusedByStatistics(t, queue.Name, err)
	})
}

// bindingKeysFrom is the routing keys of the bindings from exchange source
// to queue, as the broker lists them.
func bindingKeysFrom(t *testing.T, source, queue string) []string {
	t.Helper()
	resp := managementRequest(t, http.MethodGet, "/api/bindings/"+url.PathEscape(accVHost)+"/e/"+url.PathEscape(source)+"/q/"+url.PathEscape(queue), nil)
	defer resp.Body.Close()
	var bindings []struct {
		RoutingKey string `json:"routing_key"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&bindings); err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, b := range bindings {
		keys = append(keys, b.RoutingKey)
	}
	return keys
}
