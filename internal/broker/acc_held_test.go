package broker_test

import (
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccHeldMessagesSeesWhatTheStatisticsDoNot checks the check the
// provider makes before a change that deletes queues: a message published
// less than a second earlier, which the statistics do not count yet, is
// reported in a quorum and in a classic queue; empty and missing queues are
// not; and the message stays where it was.
func TestAccHeldMessagesSeesWhatTheStatisticsDoNot(t *testing.T) {
	client := accClient(t) // its own: the test counts its requests
	t.Parallel()
	ch := amqpChannel(t)
	// The statistics catch a message within a second now and then: try
	// again, on new queues, until they have not.
	for attempt := 1; ; attempt++ {
		base := uniqueName(t)
		classic := topology.Queue{Name: base + ".classic", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}}
		emptyClassic := topology.Queue{Name: base + ".classic-empty", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeClassic}}
		quorum, emptyQuorum := quorumQueue(base+".quorum"), quorumQueue(base+".quorum-empty")
		createObjects(t, client, nil, []topology.Queue{classic, emptyClassic, quorum, emptyQuorum}, nil)
		queues := []string{classic.Name, emptyClassic.Name, quorum.Name, emptyQuorum.Name, base + ".missing"}

		publish(t, ch, "", classic.Name)
		publish(t, ch, "", quorum.Name)
		published := time.Now()
		counts, err := client.QueueMessages(t.Context(), accVHost, queues)
		if err != nil {
			t.Fatal(err)
		}
		if counts[classic.Name] > 0 || counts[quorum.Name] > 0 {
			if attempt == 3 {
				t.Fatalf("the statistics counted the messages at once three times out of three: %v", counts)
			}
			continue
		}
		before := client.Requests()
		held, err := client.HeldMessages(t.Context(), accVHost, queues)
		elapsed := time.Since(published)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("HeldMessages %s after the publish, the statistics reading %v: %v in %d requests",
			elapsed.Round(time.Millisecond), counts, held, client.Requests()-before)
		if elapsed >= time.Second {
			t.Errorf("the check came %s after the publish; the test needs it within a second, before the statistics show the messages", elapsed)
		}
		if want := map[string]int64{classic.Name: 1, quorum.Name: 1}; !gocmp.Equal(want, held) {
			t.Errorf("HeldMessages() = %v, want %v", held, want)
		}
		// Each queue read alone: its statistics and, since they count
		// nothing yet, a peek; only the statistics of the missing one, and
		// then a look at the vhost.
		if n, want := client.Requests()-before, int64(2*(len(queues)-1)+1+1); n != want {
			t.Errorf("HeldMessages made %d requests, want %d: two per queue, one for the missing one, one for the vhost", n, want)
		}

		for _, queue := range []string{classic.Name, quorum.Name} {
			awaitDepth(t, ch, queue, 1)
			msg, ok, err := ch.Get(queue, true)
			if err != nil || !ok {
				t.Fatalf("Get(%s) = %v, %v; want the message", queue, ok, err)
			}
			if string(msg.Body) != "test "+queue || !msg.Redelivered {
				t.Errorf("the message of %s is %q, redelivered = %v; want %q, redelivered by the peek", queue, msg.Body, msg.Redelivered, "test "+queue)
			}
		}
		for _, queue := range []string{emptyClassic.Name, emptyQuorum.Name} {
			if depth := queueDepth(t, ch, queue); depth != 0 {
				t.Errorf("%s holds %d messages, want 0", queue, depth)
			}
		}
		return
	}
}
