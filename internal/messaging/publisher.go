package messaging

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Dial connects to an AMQP URL such as [DefaultURL], giving up after timeout.
func Dial(amqpURL string, timeout time.Duration) (*amqp.Connection, error) {
	config := amqp.Config{Dial: amqp.DefaultDial(timeout), Properties: amqp.NewConnectionProperties()}
	config.Properties.SetClientConnectionName("terraform-provider-rabbitmq messaging")
	conn, err := amqp.DialConfig(amqpURL, config)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", RedactURL(amqpURL), err)
	}
	return conn, nil
}

// RedactURL hides the password of an AMQP URL, for error messages and logs.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") {
		return "the AMQP URL"
	}
	return u.Redacted()
}

// Set says where and how a set takes delayed messages: its ingest exchange
// and the levels, radix and resolution its routing keys are written with.
type Set struct {
	IngestExchange string
	Levels         int
	Resolution     time.Duration
	// Radix is the base of the delay digits, 2 when zero, as in [topology.Spec].
	Radix int
	// Layout is the set's layout, the default one when empty. In a
	// library's, a message is published as the library publishes it: its
	// key format ([topology.KeyFormat]) and its entry exchange
	// ([topology.Spec.EntryExchange]), which for NServiceBus depends on the
	// delay; IngestExchange and the other fields are then not used.
	Layout topology.Layout
}

// KeyFormat is how the set's routing keys write a delay.
func (s Set) KeyFormat() topology.KeyFormat {
	return topology.KeyFormat{Levels: s.Levels, Radix: s.Radix, Resolution: s.Resolution, Layout: s.Layout}
}

// Exchange is the exchange a message delayed by delay is published to.
func (s Set) Exchange(delay time.Duration) (string, error) {
	if s.Layout.OrDefault() == topology.LayoutDefault {
		return s.IngestExchange, nil
	}
	return topology.Spec{Layout: s.Layout}.EntryExchange(delay)
}

// RoutingKey is the routing key that delays a message with key by delay in
// the set: [topology.KeyFormat.Encode] of its format. A [StreamPublisher],
// which takes routing keys as they are, publishes with it.
func (s Set) RoutingKey(key string, delay time.Duration) (string, error) {
	return s.KeyFormat().Encode(key, delay)
}

// Publisher publishes persistent delayed messages on its own channel in
// confirm mode. It is safe for concurrent use; each publish is confirmed
// before Publish and PublishBatch return.
type Publisher struct {
	set Set
	ch  *amqp.Channel

	mu sync.Mutex // serialises publishes, so each deferred confirm matches its message

	closed      chan *amqp.Error // delivers the channel's close reason once
	closeReason *amqp.Error      // the reason, once received; guarded by mu
}

// NewPublisher opens a confirm-mode channel on conn for publishing to set.
func NewPublisher(conn *amqp.Connection, set Set) (*Publisher, error) {
	if _, err := set.KeyFormat().Encode("", 0); err != nil && set.Layout.OrDefault() == topology.LayoutDefault {
		return nil, fmt.Errorf("publisher for %q: %w", set.IngestExchange, err)
	}
	return openPublisher(conn, set)
}

// NewHeadersPublisher opens a confirm-mode channel on conn for publishing
// with PublishWithHeaders alone: to a delayed exchange, whose delay is a
// header and whose routing keys say nothing of it.
func NewHeadersPublisher(conn *amqp.Connection) (*Publisher, error) {
	return openPublisher(conn, Set{})
}

func openPublisher(conn *amqp.Connection, set Set) (*Publisher, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open a publishing channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("put the publishing channel in confirm mode: %w", err)
	}
	return &Publisher{set: set, ch: ch, closed: ch.NotifyClose(make(chan *amqp.Error, 1))}, nil
}

// Close closes the publisher's channel.
func (p *Publisher) Close() error {
	if p.ch.IsClosed() {
		return nil
	}
	return p.ch.Close()
}

// Delayed is one message to publish: its id, the message key (the routing
// key without the delay digits) and the delay.
type Delayed struct {
	ID    string
	Key   string
	Delay time.Duration
}

// Publish sends one delayed message and waits for the broker's confirm.
func (p *Publisher) Publish(ctx context.Context, d Delayed) (Message, error) {
	sent, err := p.PublishBatch(ctx, []Delayed{d})
	if len(sent) == 1 {
		return sent[0], err
	}
	return Message{}, err
}

// PublishBatch sends the messages in order, then waits until the broker has
// confirmed every one. It returns the messages as published, with their
// publish times; an error means at least one message was refused (nacked),
// could not be sent, or was not confirmed before ctx ended, and names them.
// Routing keys are checked before anything is sent.
func (p *Publisher) PublishBatch(ctx context.Context, batch []Delayed) ([]Message, error) {
	exchanges := make([]string, len(batch))
	keys := make([]string, len(batch))
	for i, d := range batch {
		key, err := p.set.RoutingKey(d.Key, d.Delay)
		if err != nil {
			return nil, fmt.Errorf("message %s: %w", d.ID, err)
		}
		if exchanges[i], err = p.set.Exchange(d.Delay); err != nil {
			return nil, fmt.Errorf("message %s: %w", d.ID, err)
		}
		keys[i] = key
	}
	messages := make([]Message, len(batch))
	for i, d := range batch {
		messages[i] = Message{ID: d.ID, Delay: d.Delay}
	}
	return p.publish(ctx, exchanges, keys, messages, nil)
}

// PublishWithRoutingKey sends a message with a routing key taken literally,
// such as a malformed one, and waits for the confirm. The body still says
// the message's id and delay, so a consumer can recognise it.
func (p *Publisher) PublishWithRoutingKey(ctx context.Context, routingKey string, m Message) (Message, error) {
	sent, err := p.publish(ctx, []string{p.set.IngestExchange}, []string{routingKey}, []Message{m}, nil)
	if len(sent) == 1 {
		return sent[0], err
	}
	return Message{}, err
}

// PublishWithHeaders sends a message to exchange with routingKey and
// headers, all taken literally (an x-delay of any AMQP type, or none), and
// waits for the confirm.
func (p *Publisher) PublishWithHeaders(ctx context.Context, exchange, routingKey string, headers amqp.Table, m Message) (Message, error) {
	sent, err := p.publish(ctx, []string{exchange}, []string{routingKey}, []Message{m}, []amqp.Table{headers})
	if len(sent) == 1 {
		return sent[0], err
	}
	return Message{}, err
}

// publish sends messages[i] to exchanges[i] with keys[i] (and headers[i]
// when headers is not nil), stamping each publish time, then waits for all
// confirms.
func (p *Publisher) publish(ctx context.Context, exchanges, keys []string, messages []Message, headers []amqp.Table) ([]Message, error) {
	p.mu.Lock()
	defer p.mu.Unlock()

	confirms := make([]*amqp.DeferredConfirmation, 0, len(messages))
	var sendErr error
	for i := range messages {
		messages[i].PublishedAt = time.Now()
		body, err := messages[i].Encode()
		if err != nil {
			sendErr = err
			break
		}
		var table amqp.Table
		if headers != nil {
			table = headers[i]
		}
		confirm, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, exchanges[i], keys[i], false, false, amqp.Publishing{
			Headers:      table,
			ContentType:  ContentType,
			DeliveryMode: amqp.Persistent,
			MessageId:    messages[i].ID,
			Timestamp:    messages[i].PublishedAt,
			Body:         body,
		})
		if err != nil {
			sendErr = fmt.Errorf("publish message %s to %q with routing key %q: %w", messages[i].ID, exchanges[i], keys[i], p.withCloseReason(err))
			break
		}
		confirms = append(confirms, confirm)
	}
	// Wait for what was sent even after a send error: those messages are on
	// their way and the caller must know whether the broker took them.
	var problems []error
	if sendErr != nil {
		problems = append(problems, sendErr)
	}
	for i, confirm := range confirms {
		acked, err := confirm.WaitContext(ctx)
		switch {
		case err != nil:
			problems = append(problems, fmt.Errorf("message %s: no publisher confirm: %w", messages[i].ID, err))
		case !acked && p.ch.IsClosed():
			problems = append(problems, fmt.Errorf("message %s: channel closed before the confirm: %w", messages[i].ID, p.withCloseReason(amqp.ErrClosed)))
		case !acked:
			problems = append(problems, fmt.Errorf("message %s: the broker refused it (nack) on %q with routing key %q", messages[i].ID, exchanges[i], keys[i]))
		}
		if len(problems) > 10 {
			problems = append(problems, fmt.Errorf("… and possibly more of the %d messages", len(messages)))
			break
		}
	}
	return messages[:len(confirms)], errors.Join(problems...)
}

// withCloseReason adds the broker's reason for closing the channel (such as
// "NOT_FOUND - no exchange") to err when there is one. The reason arrives
// asynchronously, so a closed channel gets a moment to deliver it.
func (p *Publisher) withCloseReason(err error) error {
	if p.closeReason == nil && p.ch.IsClosed() {
		select {
		case reason, ok := <-p.closed:
			if ok {
				p.closeReason = reason
			}
		case <-time.After(time.Second):
		}
	}
	if p.closeReason != nil {
		return fmt.Errorf("%w (channel closed: %v)", err, p.closeReason)
	}
	return err
}
