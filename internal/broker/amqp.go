package broker

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The leader's own count of a quorum queue's ready messages, through AMQP
// 0-9-1: a passive queue.declare answers it (rabbit_channel calls
// rabbit_quorum_queue:stat/1, a local query of the leader's state). It is no
// delivery, so it serves the brokers where a peek would count as one
// (RabbitMQ 4.0–4.2), in milliseconds where fresh statistics take three
// samples. Its 0 is not always an answer: see leaderCount.

// amqpIdle is how long an AMQP connection the client opened stays open
// unused: the checks of one apply reuse it, and a provider that is done
// leaves none open on the broker.
const amqpIdle = 20 * time.Second

// amqpCounts holds what the client needs to ask a quorum queue's leader for
// its count over AMQP: where (a URL without credentials, discovered from the
// broker's listeners unless configured), how, and one connection per vhost.
type amqpCounts struct {
	configured string // Config.AMQPEndpoint
	disabled   bool   // Config.DisableAMQPCounts
	username   string
	password   string
	tls        *tls.Config
	timeout    time.Duration

	mu       sync.Mutex
	resolved bool
	endpoint string // "" when there is none to use
	conns    map[string]*amqpConnection
	// failed remembers, by vhost, a connection that could not be opened:
	// the client counts by statistics there from then on, rather than
	// wait for a port a firewall drops at every check.
	failed map[string]error
}

// amqpDialTimeout bounds the opening of an AMQP connection.
const amqpDialTimeout = 5 * time.Second

type amqpConnection struct {
	conn *amqp.Connection
	idle *time.Timer
}

// errNoAMQP says that the client has no AMQP endpoint to count through: it
// then counts by the statistics alone.
var errNoAMQP = errors.New("no AMQP endpoint to count through")

// leaderAnswer is what a passive queue.declare answered.
type leaderAnswer struct {
	ready     int64
	consumers int64
	// took is the round trip of the declaration alone, which bounds how
	// long the broker waited for the leader's answer.
	took time.Duration
}

// declarePassive asks the broker, over AMQP, how many ready messages the
// queue holds and how many consumers it has. errNoAMQP when there is no
// endpoint to ask.
func (c *Client) declarePassive(ctx context.Context, vhost, queue string) (answer leaderAnswer, err error) {
	conn, err := c.amqpConnection(ctx, vhost)
	if err != nil {
		return answer, err
	}
	ch, err := conn.Channel()
	if err != nil {
		c.amqp.forget(vhost, conn)
		return answer, fmt.Errorf("opening an AMQP channel: %w", err)
	}
	type result struct {
		queue amqp.Queue
		took  time.Duration
		err   error
	}
	done := make(chan result, 1)
	go func() {
		started := time.Now()
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		done <- result{q, time.Since(started), err}
	}()
	select {
	case r := <-done:
		_ = ch.Close() // a 404 has closed it already
		var amqpErr *amqp.Error
		switch {
		case errors.As(r.err, &amqpErr) && amqpErr.Code == amqp.NotFound:
			// Not "gone": the management API found the queue, so this
			// AMQP endpoint may be another broker's. Nothing is believed.
			return answer, fmt.Errorf("AMQP passive declaration of queue %q: not found at %s, though the management API "+
				"has it: is amqp_endpoint this broker's?", queue, c.amqp.endpoint)
		case r.err != nil:
			return answer, fmt.Errorf("AMQP passive declaration of queue %q: %w", queue, r.err)
		}
		return leaderAnswer{ready: int64(r.queue.Messages), consumers: int64(r.queue.Consumers), took: r.took}, nil
	case <-ctx.Done():
		c.amqp.forget(vhost, conn)
		return answer, context.Cause(ctx)
	case <-time.After(c.amqp.timeout):
		c.amqp.forget(vhost, conn)
		return answer, fmt.Errorf("AMQP passive declaration of queue %q: no answer within %s", queue, c.amqp.timeout)
	}
}

// amqpConnection is the client's open AMQP connection to vhost, opened on
// first use.
func (c *Client) amqpConnection(ctx context.Context, vhost string) (*amqp.Connection, error) {
	endpoint, err := c.amqpEndpoint(ctx)
	if err != nil {
		return nil, err
	}
	a := &c.amqp
	a.mu.Lock()
	defer a.mu.Unlock()
	if open := a.conns[vhost]; open != nil && !open.conn.IsClosed() {
		open.idle.Reset(amqpIdle)
		return open.conn, nil
	}
	if err := a.failed[vhost]; err != nil {
		return nil, err
	}
	tlsConfig := a.tls.Clone()
	if u, err := url.Parse(endpoint); err == nil && tlsConfig.ServerName == "" {
		tlsConfig.ServerName = u.Hostname()
	}
	conn, err := amqp.DialConfig(endpoint, amqp.Config{
		SASL:            []amqp.Authentication{&amqp.PlainAuth{Username: a.username, Password: a.password}},
		Vhost:           vhost,
		TLSClientConfig: tlsConfig,
		Dial:            amqp.DefaultDial(min(a.timeout, amqpDialTimeout)),
		Properties:      amqp.Table{"connection_name": "terraform-provider-rabbitmq (message counts)"},
	})
	if err != nil {
		// The error names the endpoint, never the credentials (they are not in it).
		err = fmt.Errorf("connecting to %s (vhost %q) to count messages: %w", endpoint, vhost, err)
		if a.failed == nil {
			a.failed = map[string]error{}
		}
		a.failed[vhost] = err
		return nil, err
	}
	if a.conns == nil {
		a.conns = map[string]*amqpConnection{}
	}
	open := &amqpConnection{conn: conn}
	open.idle = time.AfterFunc(amqpIdle, func() { a.forget(vhost, conn) })
	a.conns[vhost] = open
	return conn, nil
}

// forget closes conn and drops it, if it is still vhost's.
func (a *amqpCounts) forget(vhost string, conn *amqp.Connection) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if open := a.conns[vhost]; open != nil && open.conn == conn {
		open.idle.Stop()
		delete(a.conns, vhost)
	}
	_ = conn.Close()
}

// amqpEndpoint is the AMQP URL to count through, learned once: the
// configured one, else the management endpoint's host with the port of the
// broker's own AMQP listener (amqps for an https endpoint: the credentials
// never travel in clear where the management API's do not). None when
// counts over AMQP are disabled, when a proxy carries the management API
// (AMQP would not go through it), or when the broker shows the user no such
// listener.
func (c *Client) amqpEndpoint(ctx context.Context) (string, error) {
	a := &c.amqp
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.resolved {
		endpoint, err := c.discoverAMQP(ctx)
		if err != nil {
			return "", err // not remembered: a broker that was down is asked again
		}
		a.endpoint, a.resolved = endpoint, true
	}
	if a.endpoint == "" {
		return "", errNoAMQP
	}
	return a.endpoint, nil
}

func (c *Client) discoverAMQP(ctx context.Context) (string, error) {
	a := &c.amqp
	switch {
	case a.disabled:
		return "", nil
	case a.configured != "":
		return a.configured, nil
	}
	// New parsed the endpoint already; a proxy that carries the management
	// API, or a proxy setting that fails, means no AMQP.
	management, parseErr := url.Parse(c.endpoint)
	if parseErr != nil {
		return "", nil //nolint:nilerr // no endpoint to count through: counts by statistics
	}
	if proxy, proxyErr := c.proxy(&http.Request{URL: management}); proxyErr != nil || proxy != nil {
		return "", nil //nolint:nilerr // as above
	}
	var overview struct {
		Listeners []struct {
			Protocol string `json:"protocol"`
			Port     int    `json:"port"`
		} `json:"listeners"`
	}
	var raw json.RawMessage
	if err := c.call(ctx, http.MethodGet, apiPath("overview"), url.Values{"columns": {"listeners"}}, nil, &raw); err != nil {
		return "", fmt.Errorf("reading the broker's listeners: %w", err)
	}
	scheme, protocol := "amqp", "amqp"
	if management.Scheme == "https" {
		scheme, protocol = "amqps", "amqp/ssl"
	}
	// A user without the monitoring or administrator tag, or a broker
	// without management metrics, shows no listeners (an empty answer). No
	// port is guessed then: another broker may listen on the same host, and
	// its count of a queue of the same name would be believed.
	if json.Unmarshal(raw, &overview) != nil {
		return "", nil //nolint:nilerr // no listeners shown: no AMQP, counts by statistics
	}
	for _, l := range overview.Listeners {
		if l.Protocol == protocol && l.Port > 0 {
			return (&url.URL{Scheme: scheme, Host: net.JoinHostPort(management.Hostname(), strconv.Itoa(l.Port)), Path: "/"}).String(), nil
		}
	}
	return "", nil
}

// parseAMQPEndpoint checks a configured AMQP endpoint: amqp or amqps, a
// host, and no credentials (they are the management API's), judged on the
// raw string as parseEndpoint does.
func parseAMQPEndpoint(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	if scheme := urlScheme(raw); scheme != "amqp" && scheme != "amqps" {
		return "", fmt.Errorf("invalid AMQP endpoint %q: the scheme must be amqp or amqps, e.g. amqps://broker.example:5671", RedactURL(raw))
	}
	if _, _, _, found := splitUserinfo(raw); found {
		return "", fmt.Errorf("invalid AMQP endpoint %q: the credentials are the management API's; give none in the URL", RedactURL(raw))
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("invalid AMQP endpoint %q: %s", RedactURL(raw), parseProblem(raw, err))
	case u.Host == "":
		return "", fmt.Errorf("invalid AMQP endpoint %q: it names no host", RedactURL(raw))
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return "", fmt.Errorf("invalid AMQP endpoint %q: it must have no vhost, query or fragment (each set's vhost is used)", RedactURL(raw))
	}
	u.Path = "/"
	return u.String(), nil
}
