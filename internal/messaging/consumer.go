package messaging

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Arrival is one delivery of a message the consumer recognised.
type Arrival struct {
	Message    Message
	RoutingKey string
	ArrivedAt  time.Time
	// Lateness is ArrivedAt − PublishedAt − Delay: negative when the
	// message came before its delay was over.
	Lateness    time.Duration
	Redelivered bool
	// Path is the queues the message was dead-lettered from (its x-death
	// header), the last one last: where a late message spent its time. The
	// broker keeps the most recent first but not the order of the others.
	Path []string
	// Deaths is the message's x-death header as the broker wrote it, one
	// entry per queue and reason, the most recent first. RabbitMQ 3.10
	// reorders the older entries each time it adds one (see Death for what
	// tells their order anyway).
	Deaths []Death
}

// Death is one entry of a message's x-death header: the broker
// dead-lettered it Count times from Queue for Reason ("expired", when a TTL
// ran out). Exchange is the exchange the message had been routed through
// into Queue: the one it was published to before its first death, and the
// dead-letter exchange of the queue before for the others. So each death
// names the hop before it, which orders a path of distinct queues whatever
// order the header lists them in.
type Death struct {
	Queue, Reason, Exchange string
	Count                   int64
	RoutingKeys             []string
}

// BrokerClock is the granularity of the broker's message expiry. A quorum
// queue stamps a message's expiry from a clock of whole milliseconds, so a
// message can leave a TTL queue up to 1 ms before its TTL has passed since
// the publisher's clock read the publish time
// (TestQuorumQueueExpiryClock measures it); along a chain of queues the
// error does not add up, since each expiry is a whole number of
// milliseconds after the previous one.
const BrokerClock = time.Millisecond

// Early reports whether the message arrived earlier than the layout
// allows: more than the broker's clock granularity before its delay was
// over.
func (a Arrival) Early() bool { return a.Lateness <= -BrokerClock }

// WithinClock reports whether the message arrived before its delay was
// over, but by less than the broker's clock granularity.
func (a Arrival) WithinClock() bool { return a.Lateness < 0 && !a.Early() }

// Foreign is a delivery the consumer did not count: a body that is not a
// [Message], or one whose id lacks the consumer's prefix (left over from
// another run).
type Foreign struct {
	RoutingKey string
	ArrivedAt  time.Time
	Body       []byte
	Reason     string
}

// ConsumerOptions tune a [Consumer].
type ConsumerOptions struct {
	// IDPrefix, when set, makes the consumer count only messages whose id
	// starts with it; others are recorded as [Foreign].
	IDPrefix string
	// Prefetch bounds unacknowledged deliveries; 0 means 256.
	Prefetch int
	// OnArrival, when set, is called for every counted delivery, duplicates
	// included, from the consumer's goroutine.
	OnArrival func(a Arrival, duplicate bool)
}

// Consumer consumes a queue on its own channel and records every delivery:
// first arrivals, duplicates (an id seen before) and foreign messages. Each
// delivery is acknowledged after it is recorded.
type Consumer struct {
	queue   string
	options ConsumerOptions
	ch      *amqp.Channel

	mu         sync.Mutex
	arrivals   []Arrival // first arrivals, in arrival order
	duplicates []Arrival
	foreign    []Foreign
	seen       map[string]struct{}
	changed    chan struct{} // closed and replaced on every recorded delivery
	stopped    error         // why deliveries stopped, once they have

	done chan struct{} // closed when the delivery loop ends
}

// NewConsumer starts consuming queue on a new channel of conn.
func NewConsumer(conn *amqp.Connection, queue string, options ConsumerOptions) (*Consumer, error) {
	if options.Prefetch == 0 {
		options.Prefetch = 256
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open a consuming channel: %w", err)
	}
	if err := ch.Qos(options.Prefetch, 0, false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("set prefetch %d: %w", options.Prefetch, err)
	}
	deliveries, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("consume queue %q: %w", queue, err)
	}
	c := &Consumer{
		queue:   queue,
		options: options,
		ch:      ch,
		seen:    map[string]struct{}{},
		changed: make(chan struct{}),
		done:    make(chan struct{}),
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	go c.loop(deliveries, closed)
	return c, nil
}

func (c *Consumer) loop(deliveries <-chan amqp.Delivery, closed <-chan *amqp.Error) {
	defer close(c.done)
	for d := range deliveries {
		arrivedAt := time.Now()
		c.record(d, arrivedAt)
		if err := d.Ack(false); err != nil {
			c.stop(fmt.Errorf("ack a delivery from %q: %w", c.queue, err))
			return
		}
	}
	reason := fmt.Errorf("consumer of %q stopped: channel closed", c.queue)
	select {
	case amqpErr, ok := <-closed:
		if ok && amqpErr != nil {
			reason = fmt.Errorf("consumer of %q stopped: %w", c.queue, amqpErr)
		}
	case <-time.After(time.Second):
	}
	c.stop(reason)
}

func (c *Consumer) record(d amqp.Delivery, arrivedAt time.Time) {
	message, err := DecodeMessage(d.Body)
	var arrival Arrival
	counted := false
	c.mu.Lock()
	switch {
	case err != nil:
		c.foreign = append(c.foreign, Foreign{RoutingKey: d.RoutingKey, ArrivedAt: arrivedAt, Body: d.Body, Reason: err.Error()})
	case !strings.HasPrefix(message.ID, c.options.IDPrefix):
		c.foreign = append(c.foreign, Foreign{RoutingKey: d.RoutingKey, ArrivedAt: arrivedAt, Body: d.Body,
			Reason: fmt.Sprintf("id %q lacks the prefix %q", message.ID, c.options.IDPrefix)})
	default:
		counted = true
		died := deaths(d.Headers)
		arrival = Arrival{
			Message:     message,
			RoutingKey:  d.RoutingKey,
			ArrivedAt:   arrivedAt,
			Lateness:    arrivedAt.Sub(message.Due()),
			Redelivered: d.Redelivered,
			Path:        deathPath(died),
			Deaths:      died,
		}
	}
	duplicate := false
	if counted {
		_, duplicate = c.seen[message.ID]
		if duplicate {
			c.duplicates = append(c.duplicates, arrival)
		} else {
			c.seen[message.ID] = struct{}{}
			c.arrivals = append(c.arrivals, arrival)
		}
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	if counted && c.options.OnArrival != nil {
		c.options.OnArrival(arrival, duplicate)
	}
}

// deathPath is the queues a message was dead-lettered from, by its x-death
// header (deaths), which the broker keeps most recent first, one entry per
// queue and reason with a count; a queue passed twice appears twice.
func deathPath(deaths []Death) []string {
	var path []string
	for i := len(deaths) - 1; i >= 0; i-- {
		for range max(deaths[i].Count, 1) {
			path = append(path, deaths[i].Queue)
		}
	}
	return path
}

// deaths reads a message's x-death header, in its order; nil without one.
func deaths(headers amqp.Table) []Death {
	entries, _ := headers["x-death"].([]interface{})
	var out []Death
	for _, entry := range entries {
		death, _ := entry.(amqp.Table)
		d := Death{}
		d.Queue, _ = death["queue"].(string)
		d.Reason, _ = death["reason"].(string)
		d.Exchange, _ = death["exchange"].(string)
		d.Count, _ = death["count"].(int64)
		keys, _ := death["routing-keys"].([]interface{})
		for _, key := range keys {
			if k, ok := key.(string); ok {
				d.RoutingKeys = append(d.RoutingKeys, k)
			}
		}
		out = append(out, d)
	}
	return out
}

func (c *Consumer) stop(reason error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped == nil {
		c.stopped = reason
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// Close cancels the consumer and closes its channel; messages not yet
// acknowledged go back to the queue.
func (c *Consumer) Close() error {
	var err error
	if !c.ch.IsClosed() {
		err = c.ch.Close()
	}
	<-c.done
	return err
}

// Arrivals returns the first arrival of every counted message, in arrival order.
func (c *Consumer) Arrivals() []Arrival {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Arrival(nil), c.arrivals...)
}

// Duplicates returns every arrival of an id that had arrived before.
func (c *Consumer) Duplicates() []Arrival {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Arrival(nil), c.duplicates...)
}

// Foreign returns the deliveries that were not counted.
func (c *Consumer) Foreign() []Foreign {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Foreign(nil), c.foreign...)
}

// WaitFor waits until n distinct messages have arrived. It fails when ctx
// ends first, or when the consumer stops (its channel or connection closed),
// saying how many arrived.
func (c *Consumer) WaitFor(ctx context.Context, n int) error {
	return c.waitUntil(ctx, func() bool { return len(c.arrivals) >= n },
		func() string { return fmt.Sprintf("%d of %d messages arrived on %q", len(c.arrivals), n, c.queue) })
}

// WaitForIDs waits until every id has arrived, and on failure names the
// missing ones (up to 20).
func (c *Consumer) WaitForIDs(ctx context.Context, ids []string) error {
	missing := func() []string {
		var out []string
		for _, id := range ids {
			if _, ok := c.seen[id]; !ok {
				out = append(out, id)
			}
		}
		return out
	}
	return c.waitUntil(ctx, func() bool { return len(missing()) == 0 }, func() string {
		m := missing()
		shown := m[:min(len(m), 20)]
		return fmt.Sprintf("%d of %d messages missing on %q: %s", len(m), len(ids), c.queue, strings.Join(shown, ", "))
	})
}

// Settle waits until no delivery has been recorded for quiet, so late
// duplicates have a chance to show, or until ctx ends; it returns ctx's
// error in that case, or why the consumer stopped.
func (c *Consumer) Settle(ctx context.Context, quiet time.Duration) error {
	for {
		c.mu.Lock()
		changed, stopped := c.changed, c.stopped
		c.mu.Unlock()
		if stopped != nil {
			return stopped
		}
		timer := time.NewTimer(quiet)
		select {
		case <-timer.C:
			return nil
		case <-changed:
			timer.Stop()
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

// waitUntil waits until done() holds, checked under mu after every delivery.
func (c *Consumer) waitUntil(ctx context.Context, done func() bool, progress func() string) error {
	for {
		c.mu.Lock()
		finished, changed, stopped := done(), c.changed, c.stopped
		var state string
		if !finished && (stopped != nil || ctx.Err() != nil) {
			state = progress()
		}
		c.mu.Unlock()
		switch {
		case finished:
			return nil
		case stopped != nil:
			return fmt.Errorf("%s: %w", state, stopped)
		case ctx.Err() != nil:
			return fmt.Errorf("%s: %w", state, context.Cause(ctx))
		}
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
}

// Get takes one message from queue with basic.get, polling until one is
// there or ctx ends. The message is acknowledged. It suits queues nothing
// consumes, such as a set's unroutable queue.
func Get(ctx context.Context, conn *amqp.Connection, queue string) (amqp.Delivery, error) {
	ch, err := conn.Channel()
	if err != nil {
		return amqp.Delivery{}, fmt.Errorf("open a channel to get from %q: %w", queue, err)
	}
	defer func() { _ = ch.Close() }()
	poll := 10 * time.Millisecond
	for {
		delivery, ok, err := ch.Get(queue, true)
		if err != nil {
			return amqp.Delivery{}, fmt.Errorf("get from %q: %w", queue, err)
		}
		if ok {
			return delivery, nil
		}
		select {
		case <-ctx.Done():
			return amqp.Delivery{}, fmt.Errorf("no message in %q: %w", queue, context.Cause(ctx))
		case <-time.After(poll):
		}
		poll = min(2*poll, 200*time.Millisecond)
	}
}

// ErrQueueNotFound is returned by [CheckQueue] for a queue that does not exist.
var ErrQueueNotFound = errors.New("queue not found")

// DeclareQueue declares a durable classic queue without arguments, such as a
// route's destination (the provider does not manage plain queues). It is a
// no-op for a queue that exists with the same properties.
func DeclareQueue(conn *amqp.Connection, queue string) error {
	return withChannel(conn, func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclare(queue, true, false, false, false, nil)
		return err
	}, "declare queue %q", queue)
}

// CheckQueue returns nil when queue exists, [ErrQueueNotFound] when it does not.
func CheckQueue(conn *amqp.Connection, queue string) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open a channel to check queue %q: %w", queue, err)
	}
	defer func() { _ = ch.Close() }()
	if _, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil); err != nil {
		var amqpErr *amqp.Error
		if errors.As(err, &amqpErr) && amqpErr.Code == amqp.NotFound {
			return fmt.Errorf("%q: %w", queue, ErrQueueNotFound)
		}
		return fmt.Errorf("check queue %q: %w", queue, err)
	}
	return nil
}

// PurgeQueue drops every ready message of queue and returns how many.
func PurgeQueue(conn *amqp.Connection, queue string) (int, error) {
	var purged int
	err := withChannel(conn, func(ch *amqp.Channel) error {
		var err error
		purged, err = ch.QueuePurge(queue, false)
		return err
	}, "purge queue %q", queue)
	return purged, err
}

// DeleteQueue deletes queue and the messages in it; a missing queue is not an error.
func DeleteQueue(conn *amqp.Connection, queue string) error {
	return withChannel(conn, func(ch *amqp.Channel) error {
		_, err := ch.QueueDelete(queue, false, false, false)
		return err
	}, "delete queue %q", queue)
}

// withChannel runs f on a short-lived channel; a failed operation closes the
// channel on the broker's side, which must not affect other channels.
func withChannel(conn *amqp.Connection, f func(*amqp.Channel) error, format string, args ...any) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf(format+": open a channel: %w", append(args, err)...)
	}
	defer func() { _ = ch.Close() }()
	if err := f(ch); err != nil {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	return nil
}
