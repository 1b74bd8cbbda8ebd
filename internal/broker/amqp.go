package broker

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
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

// amqpDialTimeout bounds the opening of an AMQP connection.
const amqpDialTimeout = 5 * time.Second

// amqpDeclareTimeout bounds a passive declaration, unless the client's
// timeout is shorter: the broker answers within its leader's 250 ms, and a
// check that gives up counts by the statistics instead.
const amqpDeclareTimeout = 5 * time.Second

// amqpCloseWait bounds a connection's close handshake: past it the
// client closes the socket under it. Nobody waits for either.
const amqpCloseWait = time.Second

// amqpProbeWait bounds the channel.open by which the client tells, after
// a declaration got no answer in time, a broken connection from a slow
// answer.
const amqpProbeWait = 5 * time.Second

// amqpProofWait bounds how long a new connection waits for the management
// API to list it: a broker lists a connection once it has collected its
// statistics, within one collect_statistics_interval (5 s by default).
const amqpProofWait = StatisticsLag

// amqpConnectionName is the connection_name of the client's AMQP
// connections, followed by each one's nonce.
const amqpConnectionName = "terraform-provider-rabbitmq (message counts)"

// amqpCounts holds what the counter needs to ask a quorum queue's leader for
// its count over AMQP: where (a URL without credentials, discovered from the
// broker's listeners unless configured), how, and one connection per vhost.
// Its mutex guards its maps and fields; no network call is made under it.
type amqpCounts struct {
	configured string // Config.AMQPEndpoint
	disabled   bool   // Config.DisableAMQPCounts
	username   string
	password   string
	tls        *tls.Config
	timeout    time.Duration
	// proofWait replaces amqpProofWait when set (unit tests).
	proofWait time.Duration

	mu        sync.Mutex
	resolved  bool
	resolving chan struct{} // closed when a discovery in flight ends
	endpoint  string        // "" when there is none to use
	conns     map[string]*amqpConnection
	// failed remembers, by vhost, a connection that could not be opened
	// or was not proven to reach the management API's cluster: the client
	// counts by statistics there from then on, rather than wait for a port
	// a firewall drops, or ask a broker it cannot tell apart, at every check.
	failed map[string]error
}

// amqpConnection is one vhost's connection. Its fields but idle are set
// before opened closes, and not changed after.
type amqpConnection struct {
	vhost  string
	opened chan struct{}
	conn   *amqp.Connection
	raw    net.Conn // the socket under conn, closed when its close hangs
	err    error    // the dial's or the proof's failure
	idle   *time.Timer
	// probing is set while a probe of the connection runs.
	probing   atomic.Bool
	closeOnce sync.Once
}

// errNoAMQP says that the client has no AMQP endpoint to count through: it
// then counts by the statistics alone.
var errNoAMQP = errors.New("no AMQP endpoint to count through")

// unprovenAMQPError is an AMQP connection not proven to reach the cluster
// that the management API serves: its counts may be another broker's
// queue's (a wrong amqp_endpoint, or a load balancer in front of two
// clusters), so none is believed.
type unprovenAMQPError struct {
	Endpoint, VHost string
	Reason          string
}

func (e *unprovenAMQPError) Error() string {
	return fmt.Sprintf("the AMQP connection to %s (vhost %q) is not proven to reach the broker that the management API serves, "+
		"so its counts are not believed: %s", e.Endpoint, e.VHost, e.Reason)
}

// leaderAnswer is what a passive queue.declare answered.
type leaderAnswer struct {
	ready     int64
	consumers int64
	// took is the round trip of the declaration alone, which bounds how
	// long the broker waited for the leader's answer.
	took time.Duration
}

// declare makes a passive declaration of queue on open: its ready count,
// its consumers, and the round trip. It returns within
// amqpDeclareTimeout (less with a shorter timeout), or when ctx ends,
// whatever the peer does: a declaration left unanswered gives up its own
// channel, closed once the peer answers, never the connection, unless that
// proves broken.
func (a *amqpCounts) declare(ctx context.Context, open *amqpConnection, queue string) (leaderAnswer, error) {
	done := make(chan declared, 1)
	go open.declare(queue, done)
	bound := min(a.timeout, amqpDeclareTimeout)
	timeout := time.NewTimer(bound)
	defer timeout.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			if r.broken {
				a.drop(open)
			}
			return leaderAnswer{}, fmt.Errorf("AMQP passive declaration of queue %q: %w", queue, r.err)
		}
		return leaderAnswer{ready: int64(r.queue.Messages), consumers: int64(r.queue.Consumers), took: r.took}, nil
	case <-ctx.Done():
		return leaderAnswer{}, context.Cause(ctx)
	case <-timeout.C:
		go a.probe(open)
		return leaderAnswer{}, fmt.Errorf("AMQP passive declaration of queue %q: no answer within %s", queue, bound)
	}
}

// declared is what a declaration's goroutine hands back.
type declared struct {
	queue amqp.Queue
	took  time.Duration
	err   error
	// broken tells a failure of the connection, not of the declaration.
	broken bool
}

// declare makes a passive declaration of queue on a channel of its own,
// sends the outcome to done, then closes the channel: whoever asked may
// have stopped waiting, and the connection stays usable for the others.
func (open *amqpConnection) declare(queue string, done chan<- declared) {
	ch, err := open.conn.Channel()
	if err != nil {
		done <- declared{err: fmt.Errorf("opening an AMQP channel: %w", err), broken: true}
		return
	}
	started := time.Now()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	var amqpErr *amqp.Error
	broken := err != nil && (!errors.As(err, &amqpErr) || !amqpErr.Recover)
	done <- declared{queue: q, took: time.Since(started), err: err, broken: broken}
	_ = ch.Close() // a 404 has closed it already
}

// proveFunc proves that an AMQP connection, named with nonce, reaches the
// cluster that the management API serves (the counter's proveAMQP).
type proveFunc func(ctx context.Context, conn *amqp.Connection, endpoint, vhost, nonce string) error

// connection is the open AMQP connection to vhost, dialled and proven on
// first use. The dial and proof run on deadlines of their own: a caller
// that stops waiting leaves them to the next.
func (a *amqpCounts) connection(ctx context.Context, vhost, endpoint string, prove proveFunc) (*amqpConnection, error) {
	open, err := a.opening(ctx, vhost, endpoint, prove)
	if err != nil {
		return nil, err
	}
	select {
	case <-open.opened:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return a.inUse(open)
}

// connectionIfOpen is vhost's connection if it is open and proven already,
// else errAMQPNotYetOpen, once its dial and proof have begun: it never
// waits for them.
func (a *amqpCounts) connectionIfOpen(ctx context.Context, vhost, endpoint string, prove proveFunc) (*amqpConnection, error) {
	open, err := a.opening(ctx, vhost, endpoint, prove)
	if err != nil {
		return nil, err
	}
	select {
	case <-open.opened:
		return a.inUse(open)
	default:
		return nil, errAMQPNotYetOpen
	}
}

// errAMQPNotYetOpen: the connection's dial or proof is still under way.
var errAMQPNotYetOpen = errors.New("the AMQP connection is not open yet")

// opening is vhost's connection, opened or being opened (a new one's dial
// and proof begin), or the failure remembered for vhost.
func (a *amqpCounts) opening(ctx context.Context, vhost, endpoint string, prove proveFunc) (*amqpConnection, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.failed[vhost]; err != nil {
		return nil, err
	}
	open := a.conns[vhost]
	if open == nil || open.closed() {
		open = &amqpConnection{vhost: vhost, opened: make(chan struct{})}
		if a.conns == nil {
			a.conns = map[string]*amqpConnection{}
		}
		a.conns[vhost] = open
		go a.open(context.WithoutCancel(ctx), open, endpoint, prove)
	}
	return open, nil
}

// inUse is opened connection open, or its failure; in use, it stays open
// amqpIdle longer.
func (a *amqpCounts) inUse(open *amqpConnection) (*amqpConnection, error) {
	if open.err != nil {
		return nil, open.err
	}
	a.mu.Lock()
	open.idle.Reset(amqpIdle)
	a.mu.Unlock()
	return open, nil
}

// closed tells an opened connection that has closed since.
func (open *amqpConnection) closed() bool {
	select {
	case <-open.opened:
		return open.err == nil && open.conn.IsClosed()
	default:
		return false
	}
}

// open dials open's vhost and proves the connection, then publishes the
// outcome: a remembered failure, or the connection.
func (a *amqpCounts) open(ctx context.Context, open *amqpConnection, endpoint string, prove proveFunc) {
	ctx, cancel := context.WithTimeout(ctx, amqpDialTimeout+a.proof()+2*a.timeout)
	defer cancel()
	nonce, err := newNonce()
	if err == nil {
		open.conn, open.raw, err = a.dial(endpoint, open.vhost, nonce)
	}
	remember := err != nil
	if err == nil {
		err = prove(ctx, open.conn, endpoint, open.vhost, nonce)
		var unproven *unprovenAMQPError
		remember = errors.As(err, &unproven)
		if err != nil {
			open.close()
		}
	}
	a.mu.Lock()
	if err != nil {
		if a.conns[open.vhost] == open {
			delete(a.conns, open.vhost)
		}
		if remember {
			if a.failed == nil {
				a.failed = map[string]error{}
			}
			a.failed[open.vhost] = err
		}
	} else {
		open.idle = time.AfterFunc(amqpIdle, func() { a.drop(open) })
	}
	open.err = err
	a.mu.Unlock()
	close(open.opened)
}

func newNonce() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("drawing an AMQP connection's nonce: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func (a *amqpCounts) proof() time.Duration {
	if a.proofWait > 0 {
		return a.proofWait
	}
	return amqpProofWait
}

// dial opens an AMQP connection to vhost, named with nonce, and returns
// the socket under it too.
func (a *amqpCounts) dial(endpoint, vhost, nonce string) (*amqp.Connection, net.Conn, error) {
	tlsConfig := a.tls.Clone()
	if u, err := url.Parse(endpoint); err == nil && tlsConfig.ServerName == "" {
		tlsConfig.ServerName = u.Hostname()
	}
	var raw net.Conn
	dial := amqp.DefaultDial(min(a.timeout, amqpDialTimeout))
	conn, err := amqp.DialConfig(endpoint, amqp.Config{
		SASL:            []amqp.Authentication{&amqp.PlainAuth{Username: a.username, Password: a.password}},
		Vhost:           vhost,
		TLSClientConfig: tlsConfig,
		Dial: func(network, addr string) (net.Conn, error) {
			conn, err := dial(network, addr)
			raw = conn
			return conn, err
		},
		Properties: amqp.Table{"connection_name": amqpConnectionName + " " + nonce},
	})
	if err != nil {
		if raw != nil {
			_ = raw.Close()
		}
		// The error names the endpoint, never the credentials (they are not in it).
		return nil, nil, fmt.Errorf("connecting to %s (vhost %q) to count messages: %w", endpoint, vhost, err)
	}
	return conn, raw, nil
}

// listedConnection is one connection as GET /api/connections lists it.
type listedConnection struct {
	Name         string `json:"name"`
	ProvidedName string `json:"user_provided_name"`
}

// parseConnections reads a listing of connections: a plain array, or a
// page of them (the paged query proveAMQP asks first).
func parseConnections(raw json.RawMessage) ([]listedConnection, error) {
	var listed []listedConnection
	if json.Unmarshal(raw, &listed) == nil {
		return listed, nil
	}
	var page struct {
		Items []listedConnection `json:"items"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, fmt.Errorf("decoding the management API's connections: %w", err)
	}
	return page.Items, nil
}

// probe tells, after a declaration on open got no answer in time, whether
// the connection still answers: a channel opened within amqpProbeWait.
// One that does not is dropped, and its declarations end with it.
func (a *amqpCounts) probe(open *amqpConnection) {
	if !open.probing.CompareAndSwap(false, true) {
		return
	}
	defer open.probing.Store(false)
	answered := make(chan error, 1)
	go func() {
		ch, err := open.conn.Channel()
		answered <- err
		if err == nil {
			_ = ch.Close()
		}
	}()
	select {
	case err := <-answered:
		if err != nil {
			a.drop(open)
		}
	case <-time.After(min(a.timeout, amqpProbeWait)):
		a.drop(open)
	}
}

// drop forgets open, if it is still its vhost's, and closes it.
func (a *amqpCounts) drop(open *amqpConnection) {
	a.mu.Lock()
	if a.conns[open.vhost] == open {
		delete(a.conns, open.vhost)
	}
	if open.idle != nil {
		open.idle.Stop()
	}
	a.mu.Unlock()
	open.close()
}

// close closes the connection in the background: its close handshake,
// then its socket if the peer has not answered within amqpCloseWait, which
// ends whatever still waits on the connection.
func (open *amqpConnection) close() {
	open.closeOnce.Do(func() {
		go func() {
			closed := make(chan struct{})
			go func() {
				_ = open.conn.CloseDeadline(time.Now().Add(amqpCloseWait))
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(amqpCloseWait):
			}
			_ = open.raw.Close()
		}()
	})
}

// resolve is the AMQP URL to count through, learned once by discover ("":
// none, errNoAMQP). One discovery runs at a time, the others wait for it;
// a failed one is not remembered, so a broker that was down is asked again.
func (a *amqpCounts) resolve(ctx context.Context, discover func(context.Context) (string, error)) (string, error) {
	for {
		a.mu.Lock()
		resolved, endpoint, resolving := a.resolved, a.endpoint, a.resolving
		if !resolved && resolving == nil {
			a.resolving = make(chan struct{})
		}
		a.mu.Unlock()
		switch {
		case resolved && endpoint == "":
			return "", errNoAMQP
		case resolved:
			return endpoint, nil
		case resolving != nil:
			select {
			case <-resolving:
				continue
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
		}
		endpoint, err := discover(ctx)
		a.mu.Lock()
		if err == nil {
			a.endpoint, a.resolved = endpoint, true
		}
		close(a.resolving)
		a.resolving = nil
		a.mu.Unlock()
		if err != nil {
			return "", err
		}
	}
}

// unproven is why no count over AMQP is believed in vhost, when its
// connection there was not proven to reach the management API's cluster
// (nil otherwise), for the error of a check that ends uncounted.
func (a *amqpCounts) unproven(vhost string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var unproven *unprovenAMQPError
	if err := a.failed[vhost]; errors.As(err, &unproven) {
		return unproven
	}
	return nil
}

// amqpListenerURL is the URL of the AMQP listener that overview (GET
// /api/overview's listeners) shows on management's host, or "". A user
// without the monitoring or administrator tag, or a broker without
// management metrics, shows no listeners (an empty answer). No port is
// guessed then: another broker may listen on the same host, and its count
// of a queue of the same name would be believed.
func amqpListenerURL(management *url.URL, overview json.RawMessage) string {
	var shown struct {
		Listeners []struct {
			Protocol string `json:"protocol"`
			Port     int    `json:"port"`
		} `json:"listeners"`
	}
	if json.Unmarshal(overview, &shown) != nil {
		return ""
	}
	scheme, protocol := "amqp", "amqp"
	if management.Scheme == "https" {
		scheme, protocol = "amqps", "amqp/ssl"
	}
	for _, l := range shown.Listeners {
		if l.Protocol == protocol && l.Port > 0 {
			return (&url.URL{Scheme: scheme, Host: net.JoinHostPort(management.Hostname(), strconv.Itoa(l.Port)), Path: "/"}).String()
		}
	}
	return ""
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
