// Package faultproxy is a TCP proxy on 127.0.0.1 for fault tests, between
// the provider and a real broker. It forwards each connection it accepts
// to its backend and, at the test's command, delays what it forwards
// ([Proxy.Delay]), hangs ([Proxy.Hang]: connections stay open and nothing
// more is forwarded; for AMQP 0-9-1 it can keep heartbeats going, so that
// the client sees a live peer that never answers), cuts every connection
// ([Proxy.Cut]), sends new connections to another backend
// ([Proxy.Switch]), or lets the test look at what each client sends before
// it is forwarded, hold it there, and keep the backend's answer from the
// client ([Proxy.Inspect]). [Start] starts one; [Proxy.Close] stops it.
//
// Only tests import it: the provider's binary holds none of it.
package faultproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Options say what a proxy forwards.
type Options struct {
	// AMQP makes the proxy forward what the backend sends as whole AMQP
	// 0-9-1 frames, so that a hang falls between two frames and heartbeat
	// frames may be sent in their place. Not for TLS.
	AMQP bool
}

// Proxy is a running proxy. Its methods are safe for concurrent use.
type Proxy struct {
	listener net.Listener
	options  Options

	mu         sync.Mutex
	backend    string
	delay      time.Duration
	hung       bool
	heartbeats bool
	inspect    func(sent []byte) Verdict
	links      map[*link]struct{}
	accepted   int
	closed     bool

	wg sync.WaitGroup
}

// heartbeatEvery is how often a hung AMQP link sends the client a
// heartbeat: RabbitMQ's clients give up after missing two or three of
// their interval's (10 s by default in amqp091-go).
const heartbeatEvery = time.Second

// heartbeatFrame is AMQP 0-9-1's heartbeat: type 8, channel 0, no payload.
var heartbeatFrame = []byte{8, 0, 0, 0, 0, 0, 0, 0xCE}

// Start listens on 127.0.0.1, on a port of its own, and forwards to
// backend (host:port).
func Start(backend string, options Options) (*Proxy, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{listener: listener, options: options, backend: backend, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.listener.Addr().String() }

// Delay makes every later write of either side wait d first; 0 ends it.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Hang stops all forwarding, on the connections open and on new ones,
// which are accepted and kept open but never reach the backend. What
// either side sends is read and dropped. With heartbeats (AMQP only), a
// connection that reached its backend gets a heartbeat frame every
// second.
func (p *Proxy) Hang(heartbeats bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hung, p.heartbeats = true, heartbeats && p.options.AMQP
	for l := range p.links {
		l.wake()
	}
}

// Resume forwards again what is sent from now on, on the connections
// that reached their backend and on new ones.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hung, p.heartbeats = false, false
}

// Cut closes every open connection, both ways; new ones are forwarded as
// before.
func (p *Proxy) Cut() {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
}

// Switch sends new connections to backend; open ones stay where they are.
func (p *Proxy) Switch(backend string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backend = backend
}

// Verdict is what the proxy does with what a client sent, as the test's
// Inspect function decides.
type Verdict int

const (
	// Forward forwards it, as without an Inspect function.
	Forward Verdict = iota
	// ForwardUnanswered forwards it, then drops whatever the backend sends
	// on that connection: the backend acts on the request, and the client
	// never hears its answer, nor that the backend closed the connection.
	// The proxy's other connections go on as before.
	ForwardUnanswered
)

// Inspect has inspect called with what each client sends, before it is
// forwarded: a read's worth, which on 127.0.0.1 is one write of the
// client's (an HTTP/1.1 request without a body, an AMQP method frame). It
// runs on the connection's own goroutine, so the connection forwards
// nothing more from its client until it returns: a test may hold a request
// back while it acts on the broker. sent is the proxy's buffer: inspect
// must not keep it. nil ends it. Not called while the proxy hangs.
func (p *Proxy) Inspect(inspect func(sent []byte) Verdict) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inspect = inspect
}

// Accepted is how many connections the proxy has accepted.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Close stops listening, cuts every connection, and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.listener.Close()
	p.Cut()
	p.wg.Wait()
	return err
}

// state is what a link's pumps read before each write.
func (p *Proxy) state() (delay time.Duration, hung, heartbeats bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay, p.hung, p.heartbeats
}

// verdict is the Inspect function's verdict on sent: Forward without one.
func (p *Proxy) verdict(sent []byte) Verdict {
	p.mu.Lock()
	inspect := p.inspect
	p.mu.Unlock()
	if inspect == nil {
		return Forward
	}
	return inspect(sent)
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = client.Close()
			return
		}
		p.accepted++
		l := &link{client: client, woken: make(chan struct{}, 1)}
		p.links[l] = struct{}{}
		backend, hung := p.backend, p.hung
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			p.serve(l, backend, hung)
			p.mu.Lock()
			delete(p.links, l)
			p.mu.Unlock()
		}()
	}
}

// serve forwards l until either side closes; a link accepted while the
// proxy hangs reads and drops what the client sends.
func (p *Proxy) serve(l *link, backend string, hung bool) {
	defer l.close()
	if hung {
		_, _ = io.Copy(io.Discard, l.client)
		return
	}
	server, err := net.DialTimeout("tcp", backend, 5*time.Second)
	if err != nil {
		return
	}
	l.setServer(server)
	var pumps sync.WaitGroup
	pumps.Add(3)
	go func() { defer pumps.Done(); defer l.close(); p.pump(l, l.client, server, fromClient) }()
	go func() {
		defer pumps.Done()
		defer l.close()
		from := fromBackend
		if p.options.AMQP {
			from = fromAMQPBackend
		}
		p.pump(l, server, l.client, from)
		if _, hung, _ := p.state(); hung || l.isMuted() {
			<-l.done() // a hung peer's close is not forwarded either, nor an unanswered one's
		}
	}()
	go func() { defer pumps.Done(); p.heartbeat(l) }()
	pumps.Wait()
}

// side is where a pump reads from.
type side int

const (
	fromClient side = iota
	fromBackend
	fromAMQPBackend // a frame at a time
)

// pump copies from src to dst, a frame at a time from an AMQP backend,
// waiting the delay before each write and dropping what comes while the
// proxy hangs. What the client sends goes through the Inspect function
// first; what the backend sends after a ForwardUnanswered is dropped.
func (p *Proxy) pump(l *link, src io.Reader, dst net.Conn, from side) {
	read := chunks(src)
	if from == fromAMQPBackend {
		read = amqpFrames(src)
	}
	for {
		b, err := read()
		if err != nil {
			return
		}
		delay, hung, _ := p.state()
		switch {
		case hung:
			continue
		case from != fromClient && l.isMuted():
			continue
		case from == fromClient && p.verdict(b) == ForwardUnanswered:
			l.mute()
		}
		if delay > 0 {
			time.Sleep(delay)
			if _, hung, _ := p.state(); hung {
				continue
			}
		}
		if l.write(dst, b) != nil {
			return
		}
	}
}

// heartbeat sends the client heartbeat frames while the proxy hangs with
// heartbeats, until the link closes.
func (p *Proxy) heartbeat(l *link) {
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-l.done():
			return
		case <-tick.C:
		case <-l.woken:
		}
		if _, hung, heartbeats := p.state(); hung && heartbeats {
			if l.write(l.client, heartbeatFrame) != nil {
				return
			}
		}
	}
}

func chunks(src io.Reader) func() ([]byte, error) {
	buf := make([]byte, 32<<10)
	return func() ([]byte, error) {
		n, err := src.Read(buf)
		if n > 0 {
			return buf[:n], nil
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		return nil, err
	}
}

// amqpFrames reads whole AMQP 0-9-1 frames: type, channel, size, payload,
// end octet. A backend that refuses the protocol answers with a protocol
// header instead, which ends the link.
func amqpFrames(src io.Reader) func() ([]byte, error) {
	r := bufio.NewReader(src)
	return func() ([]byte, error) {
		header := make([]byte, 7)
		if _, err := io.ReadFull(r, header); err != nil {
			return nil, err
		}
		if string(header[:4]) == "AMQP" {
			return nil, errors.New("the backend refused the protocol")
		}
		frame := make([]byte, 7+int(binary.BigEndian.Uint32(header[3:]))+1)
		copy(frame, header)
		if _, err := io.ReadFull(r, frame[7:]); err != nil {
			return nil, err
		}
		return frame, nil
	}
}

// link is one accepted connection and its backend's.
type link struct {
	client net.Conn
	woken  chan struct{}

	mu       sync.Mutex
	server   net.Conn
	closed   bool
	muted    bool // the backend's answers are dropped (ForwardUnanswered)
	finished chan struct{}
	writeMu  sync.Mutex // whole frames and heartbeats never interleave
}

func (l *link) setServer(server net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.server = server
	if l.closed {
		_ = server.Close()
	}
}

func (l *link) write(dst net.Conn, b []byte) error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	_, err := dst.Write(b)
	return err
}

func (l *link) mute() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.muted = true
}

func (l *link) isMuted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.muted
}

// wake makes the heartbeat goroutine look at the proxy's state now.
func (l *link) wake() {
	select {
	case l.woken <- struct{}{}:
	default:
	}
}

func (l *link) done() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.finished == nil {
		l.finished = make(chan struct{})
		if l.closed {
			close(l.finished)
		}
	}
	return l.finished
}

func (l *link) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	_ = l.client.Close()
	if l.server != nil {
		_ = l.server.Close()
	}
	if l.finished != nil {
		close(l.finished)
	}
}
