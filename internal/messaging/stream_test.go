package messaging

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStreamPublisherConfirmsInOrder publishes without waiting to a queue
// through the default exchange and checks that every message is confirmed
// once, in publish order, that Flush waits for all of them, and that the
// queue then holds them all.
func TestStreamPublisherConfirmsInOrder(t *testing.T) {
	conn := brokerConn(t)
	queue := uniqueName("messaging-stream")
	if err := DeclareQueue(conn, queue); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := DeleteQueue(conn, queue); err != nil {
			t.Error(err)
		}
	})
	var mu sync.Mutex
	var confirmed []Confirmation
	// A window smaller than the batch makes Publish wait for confirms.
	publisher, err := NewStreamPublisher(conn, "", StreamOptions{MaxInFlight: 50, OnConfirm: func(c Confirmation) {
		mu.Lock()
		defer mu.Unlock()
		confirmed = append(confirmed, c)
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 500
	for i := range n {
		sent, err := publisher.Publish(ctx, queue, Message{ID: fmt.Sprintf("m%03d", i), Delay: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if sent.PublishedAt.IsZero() {
			t.Fatalf("message %d has no publish time", i)
		}
	}
	if err := publisher.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]Confirmation(nil), confirmed...)
	mu.Unlock()
	if len(got) != n {
		t.Fatalf("%d confirmations after Flush, want %d", len(got), n)
	}
	for i, c := range got {
		if want := fmt.Sprintf("m%03d", i); c.Message.ID != want || !c.Acked || c.Err != nil || c.RoutingKey != queue {
			t.Fatalf("confirmation %d = %+v, want %s acked with routing key %s", i, c, want, queue)
		}
		if c.ConfirmedAt.Before(c.Message.PublishedAt) {
			t.Fatalf("message %s confirmed at %s, before it was published at %s", c.Message.ID, c.ConfirmedAt, c.Message.PublishedAt)
		}
	}
	if err := publisher.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := publisher.Publish(ctx, queue, Message{ID: "late"}); err == nil {
		t.Error("Publish after Close succeeded")
	}
	// The passive declare counts at once; allow the queue a moment to take the last ones.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ready, err := ReadyMessages(conn, queue)
		if err != nil {
			t.Fatal(err)
		}
		if ready == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue holds %d messages, want %d", ready, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStreamPublisherReportsClosedChannel publishes to an exchange that does
// not exist: the broker closes the channel, and the message is reported as
// not acked, with the broker's reason, instead of hanging Flush.
func TestStreamPublisherReportsClosedChannel(t *testing.T) {
	conn := brokerConn(t)
	var mu sync.Mutex
	var confirmed []Confirmation
	publisher, err := NewStreamPublisher(conn, uniqueName("no-such-exchange"), StreamOptions{OnConfirm: func(c Confirmation) {
		mu.Lock()
		defer mu.Unlock()
		confirmed = append(confirmed, c)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = publisher.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := publisher.Publish(ctx, "k", Message{ID: "lost"}); err != nil {
		t.Fatal(err) // the send itself succeeds; the broker answers asynchronously
	}
	if err := publisher.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(confirmed) != 1 || confirmed[0].Acked || confirmed[0].Err == nil || !strings.Contains(confirmed[0].Err.Error(), "NOT_FOUND") {
		t.Fatalf("confirmations %+v; want one, not acked, with an error naming NOT_FOUND", confirmed)
	}
}

func TestReadyMessagesOfMissingQueue(t *testing.T) {
	conn := brokerConn(t)
	if _, err := ReadyMessages(conn, uniqueName("no-such-queue")); err == nil || !strings.Contains(err.Error(), "NOT_FOUND") {
		t.Errorf("ReadyMessages of a missing queue = %v, want an error naming NOT_FOUND", err)
	}
}
