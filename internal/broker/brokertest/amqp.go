package brokertest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// AMQPPeer is a fake AMQP 0-9-1 broker on 127.0.0.1, for the client's
// leader counts: it opens connections (with ClusterName in its server
// properties), opens and closes channels, and answers a passive
// queue.declare of a queue of Ready with its count, of any other with a
// 404. With Hang set it heartbeats but answers nothing more, not even
// connection.close, as a broker that is stuck. It records the
// connection_name of every connection, the declarations it was asked, and
// any method that could change a broker (Changes).
// Set its fields before the first connection; Hang at any time.
type AMQPPeer struct {
	ClusterName string
	// Ready is each queue's count of ready messages.
	Ready map[string]int
	// Answer, when not nil, is waited for before each declaration's
	// answer (closed: answer at once).
	Answer <-chan struct{}
	// Hang makes the peer answer nothing from now on but heartbeats.
	Hang atomic.Bool

	listener  net.Listener
	mu        sync.Mutex
	names     []string
	addresses []string
	declared  []string
	changes   []string
}

// StartAMQPPeer starts peer until the test ends and returns its URL.
func StartAMQPPeer(t testing.TB, peer *AMQPPeer) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	peer.listener = listener
	var wg sync.WaitGroup
	var conns sync.Map
	t.Cleanup(func() {
		_ = listener.Close()
		conns.Range(func(c, _ any) bool {
			if conn, ok := c.(net.Conn); ok {
				_ = conn.Close()
			}
			return true
		})
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			conns.Store(conn, true)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conns.Delete(conn)
				defer conn.Close()
				peer.serve(conn)
			}()
		}
	}()
	return "amqp://" + listener.Addr().String() + "/"
}

// ConnectionNames are the connection_name client properties of the
// connections opened so far.
func (p *AMQPPeer) ConnectionNames() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.names)
}

// ConnectionAddresses name the connections opened so far as RabbitMQ
// names them: "client address -> peer address".
func (p *AMQPPeer) ConnectionAddresses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.addresses)
}

// Declared are the queues that passive declarations asked for, in order.
func (p *AMQPPeer) Declared() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.declared)
}

// Changes are the methods the peer was sent, as "class.method", other
// than those that open and close connections and channels and a passive
// queue.declare: whatever could change a broker.
func (p *AMQPPeer) Changes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.changes)
}

// AMQP 0-9-1 classes and methods the peer speaks.
const (
	frameMethod    = 1
	frameHeartbeat = 8
	frameEnd       = 0xCE

	classConnection = 10
	classChannel    = 20
	classQueue      = 50
)

type peerFrame struct {
	kind    byte
	channel uint16
	payload []byte
}

// peerConn is one connection the peer serves; writes are serialised.
type peerConn struct {
	conn net.Conn
	mu   sync.Mutex
}

func (c *peerConn) write(kind byte, channel uint16, payload []byte) {
	var b bytes.Buffer
	b.WriteByte(kind)
	_ = binary.Write(&b, binary.BigEndian, channel)
	_ = binary.Write(&b, binary.BigEndian, uint32(len(payload)))
	b.Write(payload)
	b.WriteByte(frameEnd)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.conn.Write(b.Bytes())
}

func (c *peerConn) method(channel uint16, class, method uint16, args []byte) {
	payload := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, class), method)
	c.write(frameMethod, channel, append(payload, args...))
}

func readFrame(r *bufio.Reader) (peerFrame, error) {
	var header [7]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return peerFrame{}, err
	}
	payload := make([]byte, binary.BigEndian.Uint32(header[3:])+1)
	if _, err := io.ReadFull(r, payload); err != nil {
		return peerFrame{}, err
	}
	if payload[len(payload)-1] != frameEnd {
		return peerFrame{}, errors.New("frame without its end octet")
	}
	return peerFrame{kind: header[0], channel: binary.BigEndian.Uint16(header[1:]), payload: payload[:len(payload)-1]}, nil
}

func (p *AMQPPeer) serve(conn net.Conn) {
	r := bufio.NewReader(conn)
	protocol := make([]byte, 8)
	if _, err := io.ReadFull(r, protocol); err != nil || string(protocol) != "AMQP\x00\x00\x09\x01" {
		return
	}
	c := &peerConn{conn: conn}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // heartbeats every 500 ms, the client's interval being 1 s
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				c.write(frameHeartbeat, 0, nil)
			}
		}
	}()
	properties := table(map[string]string{"product": "RabbitMQ", "version": "4.0.5", "cluster_name": p.ClusterName})
	c.method(0, classConnection, 10, slices.Concat([]byte{0, 9}, properties, longString("PLAIN"), longString("en_US")))
	for {
		f, err := readFrame(r)
		if err != nil {
			return
		}
		if f.kind != frameMethod || len(f.payload) < 4 || p.Hang.Load() {
			continue
		}
		class, method, args := binary.BigEndian.Uint16(f.payload), binary.BigEndian.Uint16(f.payload[2:]), f.payload[4:]
		switch {
		case class == classConnection && method == 11: // start-ok
			p.mu.Lock()
			p.names = append(p.names, connectionName(args))
			p.addresses = append(p.addresses, conn.RemoteAddr().String()+" -> "+conn.LocalAddr().String())
			p.mu.Unlock()
			// channel-max 2047, frame-max 128 KiB, heartbeat 1 s
			c.method(0, classConnection, 30, []byte{0x07, 0xff, 0, 2, 0, 0, 0, 1})
		case class == classConnection && method == 40: // open
			c.method(0, classConnection, 41, shortString(""))
		case class == classConnection && method == 50: // close
			c.method(0, classConnection, 51, nil)
			return
		case class == classChannel && method == 10: // open
			c.method(f.channel, classChannel, 11, longString(""))
		case class == classChannel && method == 40: // close
			c.method(f.channel, classChannel, 41, nil)
		case class == classQueue && method == 10 && passive(args): // declare
			go p.answerDeclare(c, f.channel, args)
		case !opensOrCloses(class, method):
			p.mu.Lock()
			p.changes = append(p.changes, fmt.Sprintf("%d.%d", class, method))
			p.mu.Unlock()
		}
	}
}

// answerDeclare answers a passive declaration: its count, or a 404 that
// closes the channel.
func (p *AMQPPeer) answerDeclare(c *peerConn, channel uint16, args []byte) {
	queue := ""
	if len(args) > 2 {
		queue, _ = readShortString(args[2:])
	}
	p.mu.Lock()
	p.declared = append(p.declared, queue)
	p.mu.Unlock()
	if p.Answer != nil {
		<-p.Answer
	}
	if p.Hang.Load() {
		return
	}
	ready, ok := p.Ready[queue]
	if !ok {
		args := slices.Concat(binary.BigEndian.AppendUint16(nil, 404), shortString("NOT_FOUND - no queue '"+queue+"'"),
			[]byte{0, classQueue, 0, 10})
		c.method(channel, classChannel, 40, args)
		return
	}
	counts := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(ready)), 0)
	c.method(channel, classQueue, 11, append(shortString(queue), counts...))
}

// opensOrCloses tells the methods that open or close a connection or a
// channel, and the acknowledgements of those.
func opensOrCloses(class, method uint16) bool {
	switch class {
	case classConnection:
		return slices.Contains([]uint16{11, 31, 40, 50, 51}, method)
	case classChannel:
		return slices.Contains([]uint16{10, 40, 41}, method)
	}
	return false
}

// passive tells a queue.declare whose passive bit is set: its arguments
// are a reserved short, the queue's name, then the bits, passive first.
func passive(args []byte) bool {
	if len(args) < 3 {
		return false
	}
	_, rest := readShortString(args[2:])
	return len(rest) > 0 && rest[0]&1 == 1
}

func shortString(s string) []byte { return append([]byte{byte(len(s))}, s...) }

func longString(s string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(s))), s...)
}

func readShortString(b []byte) (string, []byte) {
	if len(b) == 0 || len(b) < 1+int(b[0]) {
		return "", nil
	}
	return string(b[1 : 1+int(b[0])]), b[1+int(b[0]):]
}

// table encodes a field table of long strings.
func table(fields map[string]string) []byte {
	var body []byte
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		body = append(append(append(body, shortString(k)...), 'S'), longString(fields[k])...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// connectionName reads the connection_name of start-ok's client
// properties, a table of the types amqp091-go sends there.
func connectionName(args []byte) string {
	if len(args) < 4 {
		return ""
	}
	size := binary.BigEndian.Uint32(args)
	b := args[4:min(len(args), 4+int(size))]
	for len(b) > 0 {
		var key string
		key, b = readShortString(b)
		if len(b) == 0 {
			return ""
		}
		kind := b[0]
		b = b[1:]
		switch kind {
		case 'S', 'F', 'x':
			if len(b) < 4 || len(b) < 4+int(binary.BigEndian.Uint32(b)) {
				return ""
			}
			n := int(binary.BigEndian.Uint32(b))
			if kind == 'S' && key == "connection_name" {
				return string(b[4 : 4+n])
			}
			b = b[4+n:]
		case 't', 'b', 'B':
			b = b[1:]
		case 'I', 'i':
			b = b[4:]
		case 'l', 'L':
			b = b[8:]
		default:
			return ""
		}
	}
	return ""
}
