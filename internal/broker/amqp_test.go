package broker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// leaderAPI is a fake management API of RabbitMQ 4.0.5, cluster "rabbit@a",
// with quorum queue q, whose leader serves: it lists the connections of
// peer when lists is set, as a broker lists its own, and none otherwise,
// as the broker of another cluster does; own is how it answers the
// listing of the user's own connections. Other requests go to next.
type leaderAPI struct {
	peer  *brokertest.AMQPPeer
	lists bool
	own   ownListing
	next  http.Handler

	mu       sync.Mutex
	requests []string
}

// ownListing is how a fake answers GET /api/connections/username/guest.
type ownListing int

const (
	ownNotServed ownListing = iota // a 404, as a broker without the endpoint
	ownLists                       // the peer's connections by their addresses, as 4.0 and 4.3 do at once
	ownRefused                     // a 401, as to a user it does not let see them
	ownOthers                      // another connection only: a proxy stands between client and broker
	ownNamed                       // the peer's connections by the names the client provided, through a proxy
)

func (f *leaderAPI) served() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// serveOwn answers the listing of the user's own connections, as 4.x
// does: by name, never by the name the client provided.
func (f *leaderAPI) serveOwn(w http.ResponseWriter) {
	listed := []map[string]string{}
	switch f.own {
	case ownNotServed:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
		return
	case ownRefused:
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"not_authorised","reason":"User not authorised to access object"}`))
		return
	case ownLists:
		for _, name := range f.peer.ConnectionAddresses() {
			listed = append(listed, map[string]string{"name": name})
		}
	case ownOthers:
		listed = append(listed, map[string]string{"name": "10.0.0.1:1234 -> 10.0.0.2:5672"})
	case ownNamed:
		for _, name := range f.peer.ConnectionNames() {
			listed = append(listed, map[string]string{"name": "10.0.0.1:1234 -> 10.0.0.2:5672", "user_provided_name": name})
		}
	}
	_ = json.NewEncoder(w).Encode(listed)
}

const runningQ = `{"arguments":{"x-queue-type":"quorum","x-dead-letter-strategy":"at-most-once"},"leader":"rabbit@a","members":["rabbit@a"],"messages":0,` +
	`"name":"q","node":"rabbit@a","online":["rabbit@a"],"online":["rabbit@a"],"state":"running","state":"running","type":"quorum"}`

func (f *leaderAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.EscapedPath())
	f.mu.Unlock()
	switch r.URL.EscapedPath() {
	case "/api/connections/username/guest":
		f.serveOwn(w)
	case "/api/overview":
		_ = json.NewEncoder(w).Encode(map[string]string{"rabbitmq_version": "4.0.5", "node": "rabbit@a", "cluster_name": "rabbit@a"})
	case "/api/connections":
		listed := []map[string]string{}
		for _, name := range f.peer.ConnectionNames() {
			if f.lists {
				listed = append(listed, map[string]string{"name": "10.0.0.1:1234 -> 10.0.0.2:5672", "user_provided_name": name})
			}
		}
		_ = json.NewEncoder(w).Encode(listed)
	case "/api/queues/%2F/q":
		if f.next == nil {
			_, _ = w.Write([]byte(runningQ))
			return
		}
		fallthrough
	default:
		if f.next == nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		f.next.ServeHTTP(w, r)
	}
}

// logged records what a client logs.
type logged struct {
	mu       sync.Mutex
	messages []string
}

func (l *logged) logf(_ context.Context, msg string, fields map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	encoded, _ := json.Marshal(fields)
	l.messages = append(l.messages, msg+" "+string(encoded))
}

func (l *logged) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.messages, "\n")
}

// leaderClient is a client of api whose AMQP endpoint is peer's.
func leaderClient(t *testing.T, api http.Handler, peer *brokertest.AMQPPeer, timeout time.Duration, log *logged) *broker.Client {
	t.Helper()
	config := broker.Config{AMQPEndpoint: brokertest.StartAMQPPeer(t, peer), Username: "guest", Password: "guest", Timeout: timeout}
	if log != nil {
		config.Logf = log.logf
	}
	server := httptest.NewServer(api)
	t.Cleanup(server.Close)
	config.Endpoint = server.URL
	client, err := broker.New(config)
	if err != nil {
		t.Fatal(err)
	}
	broker.SetCheckTiming(client, 10*time.Millisecond, time.Second, time.Second, 50*time.Millisecond)
	broker.SetAMQPProofWait(client, 200*time.Millisecond)
	return client
}

// TestLeaderCountBelievesOnlyAProvenConnection: a leader's count is
// believed only through a connection that the management API lists, of a
// broker of its cluster; an AMQP endpoint of another cluster, or of one
// of the same name behind a load balancer, is never asked, and says why.
func TestLeaderCountBelievesOnlyAProvenConnection(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		cluster     string
		lists       bool
		ready       int
		wantTrusted bool
		wantReason  string
	}{
		"proven, empty":                  {cluster: "rabbit@a", lists: true, wantTrusted: true},
		"proven, 2 messages":             {cluster: "rabbit@a", lists: true, ready: 2, wantTrusted: true},
		"another cluster's":              {cluster: "rabbit@b", lists: true, wantReason: `cluster is "rabbit@b", the management API's "rabbit@a"`},
		"another cluster's, 2 messages":  {cluster: "rabbit@b", lists: true, ready: 2, wantReason: `"rabbit@b"`},
		"a cluster of the same name":     {cluster: "rabbit@a", wantReason: "listed no connection named"},
		"the same name, with 2 messages": {cluster: "rabbit@a", ready: 2, wantReason: "listed no connection named"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			peer := &brokertest.AMQPPeer{ClusterName: tt.cluster, Ready: map[string]int{"q": tt.ready}}
			log := &logged{}
			client := leaderClient(t, &leaderAPI{peer: peer, lists: tt.lists}, peer, 5*time.Second, log)
			count, trusted, err := broker.LeaderCount(t.Context(), client, "/", "q")
			if err != nil || trusted != tt.wantTrusted || trusted && count != int64(tt.ready) {
				t.Fatalf("LeaderCount() = %d, trusted %v, %v; want trusted %v (the peer holds %d)", count, trusted, err, tt.wantTrusted, tt.ready)
			}
			unproven := broker.AMQPUnproven(client, "/")
			if tt.wantTrusted {
				if unproven != nil {
					t.Errorf("AMQPUnproven() = %v, want nil", unproven)
				}
				return
			}
			if unproven == nil || !strings.Contains(unproven.Error(), tt.wantReason) {
				t.Errorf("AMQPUnproven() = %v, want a reason with %q", unproven, tt.wantReason)
			}
			if declared := peer.Declared(); len(declared) != 0 {
				t.Errorf("the unproven peer was asked for %v", declared)
			}
			if text := log.text(); !strings.Contains(text, "not proven to reach the management API's cluster") {
				t.Errorf("the log does not say why the count was not believed:\n%s", text)
			}
			// Remembered: the next check asks nothing of the peer.
			if _, trusted, err := broker.LeaderCount(t.Context(), client, "/", "q"); err != nil || trusted {
				t.Errorf("LeaderCount() again: trusted %v, %v; want untrusted", trusted, err)
			}
			if names := peer.ConnectionNames(); len(names) != 1 {
				t.Errorf("the peer saw %d connections, want 1 (an unproven connection is not opened again)", len(names))
			}
		})
	}
}

// TestAMQPProofByTheUsersConnections: the management API's listing of the
// user's own connections proves a connection by its addresses in one
// request; where it is refused, not served, or lists only other
// connections (a proxy between client and broker), the listings of every
// connection decide, and a connection none of them lists is never proven.
func TestAMQPProofByTheUsersConnections(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		own         ownListing
		lists       bool
		wantTrusted bool
		wantOnly    string // the one listing that proved it
	}{
		"listed by its addresses":                  {own: ownLists, wantTrusted: true, wantOnly: "GET /api/connections/username/guest"},
		"listed by its nonce":                      {own: ownNamed, wantTrusted: true, wantOnly: "GET /api/connections/username/guest"},
		"refused, the nonce listed":                {own: ownRefused, lists: true, wantTrusted: true},
		"not served, the nonce listed":             {own: ownNotServed, lists: true, wantTrusted: true},
		"only other connections, the nonce listed": {own: ownOthers, lists: true, wantTrusted: true},
		"refused, listed nowhere":                  {own: ownRefused},
		"only other connections, listed nowhere":   {own: ownOthers},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"q": 2}}
			api := &leaderAPI{peer: peer, lists: tt.lists, own: tt.own}
			client := leaderClient(t, api, peer, 5*time.Second, nil)
			count, trusted, err := broker.LeaderCount(t.Context(), client, "/", "q")
			if err != nil || trusted != tt.wantTrusted || trusted && count != 2 {
				t.Fatalf("LeaderCount() = %d, trusted %v, %v; want trusted %v (the peer holds 2)", count, trusted, err, tt.wantTrusted)
			}
			if !tt.wantTrusted {
				if declared := peer.Declared(); len(declared) != 0 {
					t.Errorf("the unproven peer was asked for %v", declared)
				}
				if unproven := broker.AMQPUnproven(client, "/"); unproven == nil || !strings.Contains(unproven.Error(), "listed no connection named") {
					t.Errorf("AMQPUnproven() = %v, want a connection listed nowhere", unproven)
				}
			}
			listings := slices.DeleteFunc(api.served(), func(r string) bool { return !strings.HasPrefix(r, "GET /api/connections") })
			if tt.wantOnly != "" && !slices.Equal(listings, []string{tt.wantOnly}) {
				t.Errorf("listings asked: %v, want only %s", listings, tt.wantOnly)
			}
		})
	}
}

// bounded runs f and fails the test with f's error, or if f has not
// returned within limit, many times what it may take: a hang, not
// slowness.
func bounded(t *testing.T, what string, limit time.Duration, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(limit):
		t.Fatalf("%s has not returned after %s: it hangs", what, limit)
	}
}

// TestLeaderCountOfASlowZero: a 0 answered no sooner than RabbitMQ 4.0's
// own timeout for a leader may be that timeout's, so it is asked again; a
// quick 0 after it is trusted, and three slow ones are not.
func TestLeaderCountOfASlowZero(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		slow        int // how many answers come late, first
		wantTrusted bool
		wantAsked   int
	}{
		"one slow, then a quick one": {slow: 1, wantTrusted: true, wantAsked: 2},
		"three slow":                 {slow: 3, wantTrusted: false, wantAsked: 3},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			answer := make(chan struct{})
			peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"q": 0}, Answer: answer}
			client := leaderClient(t, &leaderAPI{peer: peer, lists: true}, peer, time.Minute, nil)
			go func() {
				for i := 0; ; i++ {
					if i < tt.slow {
						time.Sleep(2 * broker.LeaderQueryTimeout)
					}
					select {
					case answer <- struct{}{}:
					case <-t.Context().Done():
						return
					}
				}
			}()
			_, trusted, err := broker.LeaderCount(t.Context(), client, "/", "q")
			if err != nil || trusted != tt.wantTrusted {
				t.Errorf("LeaderCount() trusted %v, %v; want trusted %v", trusted, err, tt.wantTrusted)
			}
			if asked := len(peer.Declared()); asked != tt.wantAsked {
				t.Errorf("the leader was asked %d times, want %d", asked, tt.wantAsked)
			}
		})
	}
}

// TestLeaderCountOfAHungPeer: a peer that heartbeats but answers nothing,
// not even connection.close, costs a check its timeout, then statistics;
// a Ctrl-C ends the wait at once; a deletion goes on without it.
func TestLeaderCountOfAHungPeer(t *testing.T) {
	t.Parallel()
	t.Run("mid-declaration", func(t *testing.T) {
		t.Parallel()
		peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"q": 0}}
		client := leaderClient(t, &leaderAPI{peer: peer, lists: true}, peer, time.Second, nil)
		if _, trusted, err := broker.LeaderCount(t.Context(), client, "/", "q"); err != nil || !trusted {
			t.Fatalf("LeaderCount() before the hang: trusted %v, %v", trusted, err)
		}
		peer.Hang.Store(true)
		for i := range 3 { // the hung connection, then the dials that follow it
			bounded(t, fmt.Sprintf("LeaderCount #%d of a hung peer", i+1), 30*time.Second, func() error {
				if _, trusted, err := broker.LeaderCount(t.Context(), client, "/", "q"); err != nil || trusted {
					return fmt.Errorf("trusted %v, %w; want untrusted, no error", trusted, err)
				}
				return nil
			})
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		never := make(chan struct{})
		peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"q": 0}, Answer: never}
		client := leaderClient(t, &leaderAPI{peer: peer, lists: true}, peer, time.Minute, nil)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			for len(peer.Declared()) == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			peer.Hang.Store(true) // nor will it answer connection.close
			cancel()
		}()
		bounded(t, "a cancelled LeaderCount", 20*time.Second, func() error {
			if _, _, err := broker.LeaderCount(ctx, client, "/", "q"); !errors.Is(err, context.Canceled) {
				return fmt.Errorf("%w, want context.Canceled", err)
			}
			return nil
		})
	})
	t.Run("deletion", func(t *testing.T) {
		t.Parallel()
		peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"q": 0}}
		// Fresh statistics: the reductions change at every read, then repeat.
		var answers []string
		for r := range 10 {
			answers = append(answers, statistics("0", strconv.Itoa(r)))
		}
		queue := &brokertest.SteppedQueue{Identity: rabbit405, Answers: append(answers, answers[len(answers)-1])}
		client := leaderClient(t, &leaderAPI{peer: peer, lists: true, next: queue}, peer, time.Second, nil)
		if _, err := broker.DeclarePassive(t.Context(), client, "/", "q"); err != nil {
			t.Fatalf("DeclarePassive() before the hang: %v", err)
		}
		peer.Hang.Store(true)
		deletion := []topology.Change{{Kind: topology.DeleteQueue, Queue: &topology.Queue{Name: "q",
			Arguments: topology.QueueArguments{QueueType: topology.QueueTypeQuorum}}}}
		bounded(t, "Apply(delete q), its statistics fresh and 0, the AMQP peer hung", time.Minute, func() error {
			return client.Apply(t.Context(), "/", deletion, broker.ApplyOptions{})
		})
		if queue.Sent("DELETE /api/queues/%2F/q") != 1 {
			t.Errorf("requests: %v; want one DELETE of q", queue.Requests())
		}
	})
}

// TestDeclarationsCancelledAmongMany: declarations that are cancelled
// give up their own channels, never the connection the others share.
func TestDeclarationsCancelledAmongMany(t *testing.T) {
	t.Parallel()
	answer := make(chan struct{})
	peer := &brokertest.AMQPPeer{ClusterName: "rabbit@a", Ready: map[string]int{"q": 3}, Answer: answer}
	client := leaderClient(t, &leaderAPI{peer: peer, lists: true}, peer, time.Minute, nil)
	const declarations, cancelled = 64, 8
	errs := make([]error, declarations)
	var cancels []context.CancelFunc
	var wg sync.WaitGroup
	cancelledDone := make(chan struct{}, cancelled)
	for i := range declarations {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		cancels = append(cancels, cancel)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ready int64
			ready, errs[i] = broker.DeclarePassive(ctx, client, "/", "q")
			if errs[i] == nil && ready != 3 {
				errs[i] = errors.New("a count other than 3")
			}
			if i < cancelled {
				cancelledDone <- struct{}{}
			}
		}()
	}
	bounded(t, "the declarations reaching the peer", 30*time.Second, func() error {
		for len(peer.Declared()) < declarations {
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})
	for _, cancel := range cancels[:cancelled] {
		cancel()
	}
	for range cancelled {
		<-cancelledDone
	}
	close(answer)
	wg.Wait()
	for i, err := range errs {
		switch {
		case i < cancelled && !errors.Is(err, context.Canceled):
			t.Errorf("cancelled declaration %d: %v, want context.Canceled", i, err)
		case i >= cancelled && err != nil:
			t.Errorf("declaration %d, not cancelled: %v", i, err)
		}
	}
	if names := peer.ConnectionNames(); len(names) != 1 {
		t.Errorf("the peer saw %d connections, want 1", len(names))
	}
}
