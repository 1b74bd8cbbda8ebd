package faultproxy_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/faults/faultproxy"
)

// echoServer answers every line it reads with name, ": " and the line.
func echoServer(t *testing.T, name string) string {
	t.Helper()
	return recordingEchoServer(t, name, nil)
}

// recordingEchoServer is an echoServer that also sends each line it reads
// to lines, unless lines is nil.
func recordingEchoServer(t *testing.T, name string, lines chan<- string) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				scanner := bufio.NewScanner(conn)
				for scanner.Scan() {
					if lines != nil {
						lines <- scanner.Text()
					}
					if _, err := io.WriteString(conn, name+": "+scanner.Text()+"\n"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return listener.Addr().String()
}

func startProxy(t *testing.T, backend string, options faultproxy.Options) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.Start(backend, options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func dial(t *testing.T, p *faultproxy.Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, bufio.NewReader(conn)
}

// ask sends line and returns the answer's line.
func ask(t *testing.T, conn net.Conn, r *bufio.Reader, line string) string {
	t.Helper()
	if _, err := io.WriteString(conn, line+"\n"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	answer, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", line, err)
	}
	return answer
}

// silent tells that nothing arrives on conn for a while, and that conn
// stays open meanwhile.
func silent(t *testing.T, conn net.Conn, r *bufio.Reader) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	got, err := r.ReadString('\n')
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %q, %v; want nothing, the connection open", got, err)
	}
}

func TestProxyForwardsDelaysAndSwitches(t *testing.T) {
	t.Parallel()
	p := startProxy(t, echoServer(t, "a"), faultproxy.Options{})
	conn, r := dial(t, p)
	if got := ask(t, conn, r, "one"); got != "a: one\n" {
		t.Errorf("answer = %q, want a's", got)
	}
	p.Delay(20 * time.Millisecond)
	if got := ask(t, conn, r, "two"); got != "a: two\n" {
		t.Errorf("delayed answer = %q, want a's, whole", got)
	}
	p.Delay(0)
	p.Switch(echoServer(t, "b"))
	if got := ask(t, conn, r, "three"); got != "a: three\n" {
		t.Errorf("after a switch, an open connection's answer = %q, want a's", got)
	}
	other, otherReader := dial(t, p)
	if got := ask(t, other, otherReader, "four"); got != "b: four\n" {
		t.Errorf("after a switch, a new connection's answer = %q, want b's", got)
	}
	if n := p.Accepted(); n != 2 {
		t.Errorf("Accepted() = %d, want 2", n)
	}
}

func TestProxyHangsAndResumes(t *testing.T) {
	t.Parallel()
	p := startProxy(t, echoServer(t, "a"), faultproxy.Options{})
	conn, r := dial(t, p)
	if got := ask(t, conn, r, "before"); got != "a: before\n" {
		t.Fatalf("answer = %q", got)
	}
	p.Hang(false)
	if _, err := io.WriteString(conn, "during\n"); err != nil {
		t.Fatal(err)
	}
	silent(t, conn, r)
	late, lateReader := dial(t, p) // accepted, never forwarded
	if _, err := io.WriteString(late, "late\n"); err != nil {
		t.Fatal(err)
	}
	silent(t, late, lateReader)
	p.Resume()
	if got := ask(t, conn, r, "after"); got != "a: after\n" {
		t.Errorf("answer after Resume = %q, want a's to what was sent after it", got)
	}
}

func TestProxyCuts(t *testing.T) {
	t.Parallel()
	p := startProxy(t, echoServer(t, "a"), faultproxy.Options{})
	conn, r := dial(t, p)
	ask(t, conn, r, "before")
	p.Cut()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := r.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Errorf("read after Cut = %q, %v; want EOF", got, err)
	}
	again, againReader := dial(t, p)
	if got := ask(t, again, againReader, "again"); got != "a: again\n" {
		t.Errorf("a new connection after Cut: %q, want a's answer", got)
	}
}

// frame is an AMQP 0-9-1 frame of type kind on channel 1.
func frame(kind byte, payload string) []byte {
	b := []byte{kind, 0, 1, 0, 0, 0, byte(len(payload))}
	return append(append(b, payload...), 0xCE)
}

// TestProxyHangsAMQPWithHeartbeats: with AMQP frames, a hang falls between
// whole frames, and the client gets heartbeats instead of the backend's
// frames.
func TestProxyHangsAMQPWithHeartbeats(t *testing.T) {
	t.Parallel()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	send := make(chan []byte)
	go func() {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		for b := range send {
			if _, err := conn.Write(b); err != nil {
				return
			}
		}
	}()
	p := startProxy(t, listener.Addr().String(), faultproxy.Options{AMQP: true})
	conn, r := dial(t, p)
	first := frame(1, "method")
	send <- first
	got := make([]byte, len(first))
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("first frame = %q, %v; want %q", got, err, first)
	}
	p.Hang(true)
	held := frame(1, "held back")
	send <- held[:5] // half a frame, then the rest
	send <- held[5:]
	close(send) // the backend closes too: the client sees no more of it
	heartbeat := make([]byte, 8)
	for range 3 {
		if _, err := io.ReadFull(r, heartbeat); err != nil || !bytes.Equal(heartbeat, []byte{8, 0, 0, 0, 0, 0, 0, 0xCE}) {
			t.Fatalf("while hung, read %q, %v; want heartbeat frames alone", heartbeat, err)
		}
	}
}

// TestProxyInspects: the Inspect function sees each line before it is
// forwarded and holds the connection while it runs; after
// ForwardUnanswered the backend still gets the line, and the client hears
// nothing more on that connection, while another goes on.
func TestProxyInspects(t *testing.T) {
	t.Parallel()
	received := make(chan string, 8)
	p := startProxy(t, recordingEchoServer(t, "a", received), faultproxy.Options{})
	seen := make(chan string, 8)
	release := make(chan struct{})
	p.Inspect(func(sent []byte) faultproxy.Verdict {
		seen <- string(sent)
		switch string(sent) {
		case "held\n":
			<-release
		case "unanswered\n":
			return faultproxy.ForwardUnanswered
		}
		return faultproxy.Forward
	})
	conn, r := dial(t, p)
	if got := ask(t, conn, r, "one"); got != "a: one\n" || <-seen != "one\n" {
		t.Errorf("answer = %q, want a's after the Inspect function saw it", got)
	}
	if _, err := io.WriteString(conn, "held\n"); err != nil {
		t.Fatal(err)
	}
	<-seen
	silent(t, conn, r)
	close(release)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "a: held\n" {
		t.Errorf("the held line's answer = %q, %v; want a's once released", got, err)
	}

	if _, err := io.WriteString(conn, "unanswered\n"); err != nil {
		t.Fatal(err)
	}
	<-seen
	silent(t, conn, r)
	if got := lastReceived(t, received); got != "unanswered" {
		t.Errorf("the backend's last line = %q, want the unanswered one", got)
	}
	other, otherReader := dial(t, p)
	if got := ask(t, other, otherReader, "other"); got != "a: other\n" {
		t.Errorf("another connection's answer = %q, want a's", got)
	}
	p.Inspect(nil)
	if _, err := io.WriteString(conn, "later\n"); err != nil {
		t.Fatal(err)
	}
	silent(t, conn, r)
}

// lastReceived is the last line a recordingEchoServer has read so far.
func lastReceived(t *testing.T, lines <-chan string) string {
	t.Helper()
	var last string
	for {
		select {
		case line := <-lines:
			last = line
		default:
			return last
		}
	}
}

// TestProxyUnansweredHidesTheBackendsClose: a backend that answers, then
// closes the connection (as an HTTP server does with an idle one), shows
// neither to a client whose request was forwarded unanswered.
func TestProxyUnansweredHidesTheBackendsClose(t *testing.T) {
	t.Parallel()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	closed := make(chan struct{})
	go func() {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		line, _ := bufio.NewReader(conn).ReadString('\n')
		_, _ = io.WriteString(conn, "answer to "+line)
		_ = conn.Close()
		close(closed)
	}()
	p := startProxy(t, listener.Addr().String(), faultproxy.Options{})
	p.Inspect(func([]byte) faultproxy.Verdict { return faultproxy.ForwardUnanswered })
	conn, r := dial(t, p)
	if _, err := io.WriteString(conn, "request\n"); err != nil {
		t.Fatal(err)
	}
	<-closed
	silent(t, conn, r)
}
