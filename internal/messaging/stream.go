package messaging

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultMaxInFlight bounds the unconfirmed messages of a [StreamPublisher]
// whose options name no bound.
const DefaultMaxInFlight = 10_000

// StreamOptions tune a [StreamPublisher].
type StreamOptions struct {
	// MaxInFlight bounds the messages sent but not yet confirmed: Publish
	// blocks while that many are. 0 means DefaultMaxInFlight.
	MaxInFlight int
	// OnConfirm, when set, is called once for every message sent, in the
	// order they were sent, from one goroutine, when the broker's answer
	// arrives (or the channel closes without one).
	OnConfirm func(Confirmation)
}

// Confirmation is what became of one message a [StreamPublisher] sent.
type Confirmation struct {
	Message    Message
	RoutingKey string
	// Acked is true when the broker took responsibility for the message.
	Acked       bool
	ConfirmedAt time.Time
	// Err says why a message was not acked: refused by the broker (nack),
	// or the channel closed before an answer came.
	Err error
}

// StreamPublisher publishes persistent messages in confirm mode without
// waiting for each confirm; a goroutine collects the confirms as they come.
// A paced load needs this: a publisher that waits for every batch's confirms
// is paced by the broker's confirm latency instead of by its schedule.
// Publish must not be called from several goroutines at once, nor while
// Close runs.
type StreamPublisher struct {
	exchange  string
	ch        *amqp.Channel
	closed    chan *amqp.Error
	onConfirm func(Confirmation)

	slots   chan struct{}    // one per message sent and not yet confirmed; capacity MaxInFlight
	pending chan sentMessage // sent, awaiting the confirm, in publish order
	done    chan struct{}    // closed when the confirm loop has drained pending

	mu          sync.Mutex
	outstanding int       // sent and not yet confirmed
	drained     sync.Cond // signalled whenever outstanding drops to 0
	closeReason *amqp.Error
	stopped     bool
}

type sentMessage struct {
	message    Message
	routingKey string
	confirm    *amqp.DeferredConfirmation
}

// NewStreamPublisher opens a confirm-mode channel on conn for publishing to
// exchange ("" is the default exchange).
func NewStreamPublisher(conn *amqp.Connection, exchange string, options StreamOptions) (*StreamPublisher, error) {
	if options.MaxInFlight <= 0 {
		options.MaxInFlight = DefaultMaxInFlight
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open a publishing channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("put the publishing channel in confirm mode: %w", err)
	}
	p := &StreamPublisher{
		exchange:  exchange,
		ch:        ch,
		closed:    ch.NotifyClose(make(chan *amqp.Error, 1)),
		onConfirm: options.OnConfirm,
		slots:     make(chan struct{}, options.MaxInFlight),
		pending:   make(chan sentMessage, options.MaxInFlight),
		done:      make(chan struct{}),
	}
	p.drained.L = &p.mu
	go p.confirmLoop()
	return p, nil
}

// Publish stamps m's publish time, sends it with routingKey and returns
// without waiting for the broker's confirm. It blocks while MaxInFlight
// messages await theirs, or while the broker's flow control holds the
// connection, so a caller that keeps time sees when the broker cannot keep up.
func (p *StreamPublisher) Publish(ctx context.Context, routingKey string, m Message) (Message, error) {
	if m.ID == "" {
		return Message{}, errors.New("message has no id")
	}
	p.mu.Lock()
	stopped := p.stopped
	p.mu.Unlock()
	if stopped {
		return Message{}, errors.New("publish on a closed stream publisher")
	}
	// Take a slot before sending, so that a full window holds the message
	// back rather than putting it on the wire.
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return Message{}, fmt.Errorf("message %s not sent: %d messages await their confirm: %w", m.ID, cap(p.slots), context.Cause(ctx))
	}
	p.mu.Lock()
	p.outstanding++
	p.mu.Unlock()
	// Stamped after the wait for a slot: the wait is the publisher's, not the broker's.
	m.PublishedAt = time.Now()
	body, err := m.Encode()
	if err != nil {
		p.settle()
		return Message{}, err
	}
	confirm, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, p.exchange, routingKey, false, false, amqp.Publishing{
		ContentType:  ContentType,
		DeliveryMode: amqp.Persistent,
		MessageId:    m.ID,
		Timestamp:    m.PublishedAt,
		Body:         body,
	})
	if err != nil {
		p.settle()
		return Message{}, fmt.Errorf("publish message %s to %q with routing key %q: %w", m.ID, p.exchange, routingKey, p.withCloseReason(err))
	}
	p.pending <- sentMessage{message: m, routingKey: routingKey, confirm: confirm} // never blocks: the slot bounds it
	return m, nil
}

// Flush waits until every message sent so far has its confirm, or ctx ends.
func (p *StreamPublisher) Flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.drained.Broadcast()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.outstanding > 0 {
		if ctx.Err() != nil {
			return fmt.Errorf("%d messages still await their confirm: %w", p.outstanding, context.Cause(ctx))
		}
		p.drained.Wait()
	}
	return nil
}

// Close closes the channel; messages still awaiting their confirm are
// reported to OnConfirm as not acked. It waits until they have been.
func (p *StreamPublisher) Close() error {
	p.mu.Lock()
	alreadyStopped := p.stopped
	p.stopped = true
	p.mu.Unlock()
	if alreadyStopped {
		<-p.done
		return nil
	}
	var err error
	if !p.ch.IsClosed() {
		err = p.ch.Close()
	}
	close(p.pending)
	<-p.done
	return err
}

// confirmLoop reports each sent message's confirm in publish order. A
// closed channel nacks every outstanding confirm, so Wait never hangs.
func (p *StreamPublisher) confirmLoop() {
	defer close(p.done)
	for sent := range p.pending {
		acked := sent.confirm.Wait()
		c := Confirmation{Message: sent.message, RoutingKey: sent.routingKey, Acked: acked, ConfirmedAt: time.Now()}
		if !acked {
			if p.ch.IsClosed() {
				c.Err = fmt.Errorf("message %s: channel closed before the confirm: %w", sent.message.ID, p.withCloseReason(amqp.ErrClosed))
			} else {
				c.Err = fmt.Errorf("message %s: the broker refused it (nack) on %q with routing key %q", sent.message.ID, p.exchange, sent.routingKey)
			}
		}
		if p.onConfirm != nil {
			p.onConfirm(c)
		}
		p.settle()
	}
}

// settle counts one message as no longer awaiting its confirm.
func (p *StreamPublisher) settle() {
	<-p.slots
	p.mu.Lock()
	defer p.mu.Unlock()
	p.outstanding--
	if p.outstanding == 0 {
		p.drained.Broadcast()
	}
}

// withCloseReason adds the broker's reason for closing the channel to err
// when there is one; the reason arrives asynchronously.
func (p *StreamPublisher) withCloseReason(err error) error {
	p.mu.Lock()
	reason := p.closeReason
	p.mu.Unlock()
	if reason == nil && p.ch.IsClosed() {
		select {
		case r, ok := <-p.closed:
			if ok && r != nil {
				reason = r
				p.mu.Lock()
				p.closeReason = r
				p.mu.Unlock()
			}
		case <-time.After(time.Second):
		}
	}
	if reason != nil {
		return fmt.Errorf("%w (channel closed: %v)", err, reason)
	}
	return err
}

// ReadyMessages returns how many messages queue holds ready for delivery,
// as the broker counts them at this moment (a passive declare), unlike the
// management API's statistics, which lag by seconds.
func ReadyMessages(conn *amqp.Connection, queue string) (int, error) {
	var ready int
	err := withChannel(conn, func(ch *amqp.Channel) error {
		q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
		ready = q.Messages
		return err
	}, "count the messages of queue %q", queue)
	return ready, err
}
