package broker_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// freshZero is statistics of q that prove a fresh 0 (three changes of the
// reductions, the last read twice).
var freshZero = []string{statistics("0", "10"), statistics("0", "10"), statistics("0", "20"), statistics("0", "30"), statistics("0", "40")}

const bindingFromX = `[{"source":"x","destination":"q","destination_type":"queue","routing_key":"k","properties_key":"k"}]`

// TestDeletionRestoresWhatItUnbound: whatever stops a quorum queue's
// checked deletion after its check unbound the queue, the bindings come
// back; only a deletion leaves them gone.
func TestDeletionRestoresWhatItUnbound(t *testing.T) {
	t.Parallel()
	quorum := topology.Queue{Name: "q", Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}
	t.Run("cancelled while a binding's deletion is in flight", func(t *testing.T) {
		t.Parallel()
		fake, client := steppedClient(t, rabbit405, freshZero...)
		fake.Bindings = bindingFromX
		ctx, cancel := context.WithCancel(t.Context())
		var cancelled atomic.Bool
		fake.Before = func(r *http.Request) {
			if r.Method == http.MethodDelete && strings.HasPrefix(r.URL.EscapedPath(), "/api/bindings/") && !cancelled.Swap(true) {
				cancel() // the broker deletes it, but the client never hears so
				<-r.Context().Done()
			}
		}
		err := client.Apply(ctx, "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &quorum}}, broker.ApplyOptions{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Apply() error = %v, want the cancellation", err)
		}
		if fake.Sent(rebindXQ) != 1 || fake.Sent(deleteQ) != 0 {
			t.Errorf("bound again %d times (want 1), deleted %d times (want 0): %v", fake.Sent(rebindXQ), fake.Sent(deleteQ), fake.Requests())
		}
	})
	t.Run("cancelled while waiting for the turn of quorum deletions", func(t *testing.T) {
		t.Parallel()
		// A cluster of its own: no other test's deletions share its turn.
		fake, client := steppedClient(t, brokertest.Identity{Version: "4.0.5", Node: "rabbit@a", ClusterName: "turn-test"}, freshZero...)
		fake.Bindings = bindingFromX
		// Learned first: the guarded attempt, made before the client knows
		// its broker, would wait for the turn too.
		if _, err := broker.PeeksAtQuorumQueues(t.Context(), client); err != nil {
			t.Fatal(err)
		}
		release, err := broker.HoldQuorumTurn(t.Context(), client)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			for fake.Sent(readQ) < len(freshZero)+1 { // the count is done: the deletion waits for its turn
				if t.Context().Err() != nil {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			cancel()
		}()
		err = client.Apply(ctx, "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &quorum}}, broker.ApplyOptions{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Apply() error = %v, want the cancellation", err)
		}
		if fake.Sent(unbindXQ) != 1 || fake.Sent(rebindXQ) != 1 || fake.Sent(deleteQ) != 0 {
			t.Errorf("unbound %d, bound again %d, deleted %d times; want 1, 1, 0: %v",
				fake.Sent(unbindXQ), fake.Sent(rebindXQ), fake.Sent(deleteQ), fake.Requests())
		}
	})
	t.Run("the deletion itself fails", func(t *testing.T) {
		t.Parallel()
		fake, client := steppedClient(t, rabbit405, freshZero...)
		fake.Bindings = bindingFromX
		fake.DeleteStatus = http.StatusInternalServerError
		err := client.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &quorum}}, broker.ApplyOptions{})
		if err == nil {
			t.Fatal("Apply() succeeded, want the deletion's failure")
		}
		if fake.Sent(rebindXQ) != 1 {
			t.Errorf("bound again %d times, want once: %v", fake.Sent(rebindXQ), fake.Requests())
		}
	})
	t.Run("deleted", func(t *testing.T) {
		t.Parallel()
		fake, client := steppedClient(t, rabbit405, freshZero...)
		fake.Bindings = bindingFromX
		if err := client.Apply(t.Context(), "/", []topology.Change{{Kind: topology.DeleteQueue, Queue: &quorum}}, broker.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		if fake.Sent(deleteQ) != 1 || fake.Sent(rebindXQ) != 0 {
			t.Errorf("deleted %d times, bound again %d times; want 1, 0: %v", fake.Sent(deleteQ), fake.Sent(rebindXQ), fake.Requests())
		}
	})
}

// TestHeldMessagesUncountsTheChecksItCuts: once one queue is found holding
// messages, HeldMessages stops the checks still waiting for fresh
// statistics; their queues are uncounted, never absent (absent reads as
// "holds none").
func TestHeldMessagesUncountsTheChecksItCuts(t *testing.T) {
	t.Parallel()
	client := brokertest.NewClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rabbit405.Serve(w, r) {
			return
		}
		switch r.URL.EscapedPath() {
		case "/api/queues/%2F/holding":
			_, _ = io.WriteString(w, strings.ReplaceAll(statistics("3", "10"), `"q"`, `"holding"`))
		case "/api/queues/%2F/waiting":
			// Statistics that never prove a fresh sample: its check waits.
			_, _ = io.WriteString(w, strings.ReplaceAll(statistics("0", "10"), `"q"`, `"waiting"`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}), broker.Config{})
	broker.SetCheckTiming(client, 10*time.Millisecond, time.Minute, time.Minute, time.Minute)
	held, err := client.HeldMessages(t.Context(), "/", []string{"holding", "waiting"})
	if !broker.IsUncounted(err) {
		t.Fatalf("HeldMessages() error = %v, want uncounted queues", err)
	}
	if held["waiting"] < 1 || held["holding"] < 1 {
		t.Errorf("HeldMessages() = %v, want both queues counted as holding", held)
	}
	if why := broker.Uncounted(err)["waiting"]; why == nil || !strings.Contains(why.Error(), "stopped") {
		t.Errorf("the cut check's reason = %v, want one saying it was stopped", why)
	}
}
