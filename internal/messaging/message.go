package messaging

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// DefaultURL is the local broker of scripts/rabbitmq.sh.
const DefaultURL = "amqp://guest:guest@127.0.0.1:5672/"

// URLEnv names the environment variable that overrides [DefaultURL].
const URLEnv = "RABBITMQ_AMQP_URL"

// URLFromEnv is $RABBITMQ_AMQP_URL, or [DefaultURL] when it is unset.
func URLFromEnv() string {
	if url := os.Getenv(URLEnv); url != "" {
		return url
	}
	return DefaultURL
}

// ContentType is the content type of every message body this package writes.
const ContentType = "application/json"

// Message is what a published body says about itself.
type Message struct {
	// ID identifies the message across redeliveries; unique per run.
	ID string
	// PublishedAt is the publisher's clock just before the publish.
	PublishedAt time.Time
	// Delay is the delay the publisher asked for, before rounding up to ticks.
	Delay time.Duration
}

// wireMessage is the JSON layout of a body. Nanosecond integers keep the
// times exact; the field names say their unit.
type wireMessage struct {
	ID              string `json:"id"`
	PublishedAtNano int64  `json:"published_at_unix_ns"`
	DelayNano       int64  `json:"delay_ns"`
}

// Encode returns the message's JSON body.
func (m Message) Encode() ([]byte, error) {
	if m.ID == "" {
		return nil, errors.New("message has no id")
	}
	if m.Delay < 0 {
		return nil, fmt.Errorf("message %s: negative delay %s", m.ID, m.Delay)
	}
	return json.Marshal(wireMessage{ID: m.ID, PublishedAtNano: m.PublishedAt.UnixNano(), DelayNano: int64(m.Delay)})
}

// DecodeMessage parses a body written by [Message.Encode]. It refuses bodies
// that are not such a document, so a stray message on a queue is reported
// instead of being measured.
func DecodeMessage(body []byte) (Message, error) {
	var wire wireMessage
	if err := json.Unmarshal(body, &wire); err != nil {
		return Message{}, fmt.Errorf("body is not a delay message: %w", err)
	}
	if wire.ID == "" || wire.PublishedAtNano == 0 {
		return Message{}, fmt.Errorf("body is not a delay message: id and published_at_unix_ns are required, got %q", body)
	}
	if wire.DelayNano < 0 {
		return Message{}, fmt.Errorf("message %s: negative delay_ns %d", wire.ID, wire.DelayNano)
	}
	return Message{ID: wire.ID, PublishedAt: time.Unix(0, wire.PublishedAtNano), Delay: time.Duration(wire.DelayNano)}, nil
}

// Due is when the message may arrive at the earliest.
func (m Message) Due() time.Time { return m.PublishedAt.Add(m.Delay) }
