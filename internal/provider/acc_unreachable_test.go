package provider

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// testBrokerProxy stands between the provider and the real broker's
// management API, so that a test can take the broker away at a chosen
// request and bring it back on the same address. It forwards HTTP requests
// rather than bytes, so that it can count them.
type testBrokerProxy struct {
	t       *testing.T
	addr    string // host:port, the same for the proxy's whole life
	forward *httputil.ReverseProxy

	mu      sync.Mutex
	server  *http.Server  // nil while the broker is "down"
	release chan struct{} // closed to free hung requests
	fault   testProxyFault
	changes int       // changes forwarded since the fault was set
	hungAt  time.Time // when the first request hung
	hangs   []*testHang
}

// testHang is one request the proxy held.
type testHang struct {
	started, ended time.Time // ended is zero while the proxy holds it
	givenUp        bool      // ended by the client, not by release or testHangCap
}

// testProxyFault says which requests fail and how.
type testProxyFault struct {
	// hang, when set, holds every request from the first one it matches on
	// (not forwarded, never answered), until the client gives up.
	hang func(*http.Request) bool
	// cut > 0 forwards cut−1 changes normally; the cut-th change is
	// forwarded too but its answer is lost, because the proxy then closes
	// every connection and stops listening: later requests are refused.
	cut int
}

// testHangCap ends a hung request that its client never gives up on, so a
// provider that ignores its timeout fails checkGaveUp instead of hanging
// the test.
const testHangCap = 2 * time.Minute

func testNewBrokerProxy(t *testing.T) *testBrokerProxy {
	t.Helper()
	target, err := url.Parse(os.Getenv("RABBITMQ_ENDPOINT"))
	if err != nil || target.Host == "" {
		t.Fatalf("RABBITMQ_ENDPOINT %q is not a URL: %v", os.Getenv("RABBITMQ_ENDPOINT"), err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &testBrokerProxy{t: t, addr: listener.Addr().String(), forward: httputil.NewSingleHostReverseProxy(target),
		release: make(chan struct{})}
	p.serve(listener)
	t.Cleanup(p.close)
	return p
}

// endpoint is the URL the provider under test is given.
func (p *testBrokerProxy) endpoint() string { return "http://" + p.addr }

func (p *testBrokerProxy) serve(listener net.Listener) {
	server := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	p.server = server
	go func() { _ = server.Serve(listener) }()
}

// isChange tells a request that changes the broker from one that reads it
// (a peek at a queue's head is a POST that changes nothing).
func isChange(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && !strings.HasSuffix(r.URL.Path, "/get")
}

func (p *testBrokerProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	hang := p.fault.hang != nil && (!p.hungAt.IsZero() || p.fault.hang(r))
	cut := false
	if hang && p.hungAt.IsZero() {
		p.hungAt = time.Now()
	}
	cutOff := p.fault.cut > 0 && p.changes >= p.fault.cut // a request that raced the cut
	if !hang && !cutOff && isChange(r) {
		p.changes++
		cut = p.fault.cut > 0 && p.changes == p.fault.cut
	}
	release := p.release
	p.mu.Unlock()

	if cutOff {
		testDropConnection(w)
		return
	}
	if hang {
		h := &testHang{started: time.Now()}
		p.mu.Lock()
		p.hangs = append(p.hangs, h)
		p.mu.Unlock()
		// The server notices the client closing the connection only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		givenUp := false
		select {
		case <-r.Context().Done(): // the client gave up
			givenUp = true
		case <-release:
		case <-time.After(testHangCap):
		}
		p.mu.Lock()
		h.ended, h.givenUp = time.Now(), givenUp
		p.mu.Unlock()
		return
	}
	// A request the broker has received runs to its end even when the cut
	// closes the provider's side: aborting a quorum queue's declaration
	// half-way leaves RabbitMQ 3.10 with a queue that never answers (see
	// TestAccDelayQueueSet_interruptedApply), a broker fault this proxy does
	// not simulate. The writer is wrapped to hide its CloseNotifier, which
	// the reverse proxy would otherwise watch instead of the context.
	r = r.WithContext(context.WithoutCancel(r.Context()))
	if !cut {
		p.forward.ServeHTTP(struct{ http.ResponseWriter }{w}, r)
		return
	}
	// The broker makes the change; the client never hears of it.
	p.forward.ServeHTTP(&discardingResponseWriter{header: http.Header{}}, r)
	p.down()
}

// testDropConnection closes a request's connection without an answer.
func testDropConnection(w http.ResponseWriter) {
	hijacker, ok := w.(http.Hijacker)
	if !ok {
		panic("the broker proxy's connections cannot be hijacked")
	}
	conn, _, err := hijacker.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// discardingResponseWriter drops an answer on the floor.
type discardingResponseWriter struct{ header http.Header }

func (w *discardingResponseWriter) Header() http.Header         { return w.header }
func (w *discardingResponseWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardingResponseWriter) WriteHeader(int)             {}

// down closes every connection and stops listening.
func (p *testBrokerProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.server != nil {
		_ = p.server.Close()
		p.server = nil
	}
}

// set clears the last fault, brings the proxy up if it is down, and sets fault.
func (p *testBrokerProxy) set(fault testProxyFault) {
	p.t.Helper()
	p.mu.Lock()
	close(p.release)
	p.release = make(chan struct{})
	p.fault, p.changes, p.hungAt, p.hangs = fault, 0, time.Time{}, nil
	down := p.server == nil
	p.mu.Unlock()
	if !down {
		return
	}
	listener, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("the broker proxy cannot listen on %s again: %v", p.addr, err)
	}
	p.mu.Lock()
	p.serve(listener)
	p.mu.Unlock()
}

func (p *testBrokerProxy) restore() { p.set(testProxyFault{}) }

func (p *testBrokerProxy) close() {
	p.mu.Lock()
	close(p.release)
	p.release = make(chan struct{})
	p.mu.Unlock()
	p.down()
}

// checkGaveUp checks, after an operation failed on hung requests, that the
// provider gave up on each of them itself, and that it held them all at
// once: an operation that waited for its requests in turns, each turn a
// whole timeout, would send one after giving up on another. How long each
// took is logged: a figure, not a bound.
func (p *testBrokerProxy) checkGaveUp(t *testing.T, operation string, timeout time.Duration) {
	t.Helper()
	// The proxy notices a closed connection a moment after terraform returns.
	for deadline := time.Now().Add(testHangSlack); ; time.Sleep(50 * time.Millisecond) {
		p.mu.Lock()
		held := slices.ContainsFunc(p.hangs, func(h *testHang) bool { return h.ended.IsZero() })
		p.mu.Unlock()
		if !held {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("hung: %s: the proxy still holds a request %s after terraform returned", operation, testHangSlack)
			return
		}
	}
	p.mu.Lock()
	hungAt, hangs := p.hungAt, slices.Clone(p.hangs)
	p.mu.Unlock()
	if hungAt.IsZero() {
		t.Errorf("%s: no request hung: the fault never struck", operation)
		return
	}
	elapsed := time.Since(hungAt)
	longest, firstGivenUp, givenUp, afterGivingUp := time.Duration(0), time.Time{}, 0, 0
	for _, h := range hangs {
		longest = max(longest, h.ended.Sub(h.started))
		if h.givenUp {
			givenUp++
			if firstGivenUp.IsZero() || h.ended.Before(firstGivenUp) {
				firstGivenUp = h.ended
			}
		}
	}
	for _, h := range hangs {
		if !firstGivenUp.IsZero() && h.started.After(firstGivenUp) {
			afterGivingUp++
		}
	}
	t.Logf("%s: %d hung request(s), the longest given up after %s; terraform returned %s after the first hung (timeout %s)",
		operation, len(hangs), longest.Round(time.Millisecond), elapsed.Round(time.Millisecond), timeout)
	if givenUp != len(hangs) {
		t.Errorf("%s: the provider gave up on %d of the %d hung requests; the proxy ended the others", operation, givenUp, len(hangs))
	}
	if afterGivingUp > 0 {
		t.Errorf("%s: %d request(s) sent after the provider had given up on another: it waits for them in turns", operation, afterGivingUp)
	}
}

// testProviderBlock points the provider at endpoint with a request timeout;
// the credentials come from RABBITMQ_USERNAME and RABBITMQ_PASSWORD.
func testProviderBlock(endpoint string, timeout time.Duration) string {
	return fmt.Sprintf("provider \"rabbitmq\" {\n  endpoint = %q\n  timeout  = %q\n}\n", endpoint, timeout)
}

// testUnreachable matches the diagnostic of a broker that did not answer:
// its summary, the endpoint, and why.
func testUnreachable(endpoint, why string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)Cannot Reach RabbitMQ.*` + regexp.QuoteMeta(endpoint) + `.*` + why)
}

// TestAccDelayQueueSet_brokerUnreachable makes the broker stop answering
// during create, refresh, update and destroy in turn: each fails with a
// diagnostic naming the endpoint, no later than the provider's timeout, and
// the next apply, with the broker back, converges.
func TestAccDelayQueueSet_brokerUnreachable(t *testing.T) {
	client := testBrokerClient(t)
	proxy := testNewBrokerProxy(t)
	name := testSetName(t)
	testCleanupSet(t, "/", name)
	const timeout = 5 * time.Second
	provider := testProviderBlock(proxy.endpoint(), timeout)
	two := provider + testSetConfig(name, "  levels = 2")
	four := provider + testSetConfig(name, "  levels = 4")
	noAnswer := fmt.Sprintf(`no\s+answer\s+within\s+%s`, timeout)
	firstChange := testProxyFault{hang: isChange}
	gaveUp := func(operation string) func() {
		return func() {
			proxy.checkGaveUp(t, operation, timeout)
			proxy.restore()
		}
	}

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{
				// Create reads the (absent) set, then its first declarations hang.
				PreConfig:   func() { proxy.set(firstChange) },
				Config:      two,
				ExpectError: testUnreachable(proxy.endpoint(), noAnswer),
			},
			{
				// Nothing reached the broker, so the set is planned afresh.
				PreConfig: gaveUp("create"),
				Config:    two,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionCreate)},
				},
				Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 2, Resolution: time.Second}),
			},
			{
				PreConfig:    func() { proxy.set(testProxyFault{hang: func(*http.Request) bool { return true }}) },
				RefreshState: true,
				ExpectError:  testUnreachable(proxy.endpoint(), noAnswer),
			},
			{
				// The refresh before the update reads the set; the update's first change hangs.
				PreConfig: func() {
					gaveUp("refresh")()
					proxy.set(firstChange)
				},
				Config:      four,
				ExpectError: testUnreachable(proxy.endpoint(), noAnswer),
			},
			{
				PreConfig: gaveUp("update"),
				Config:    four,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
				},
				Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 4, Resolution: time.Second}),
			},
			{
				// Destroy checks that the queues are empty first: that peek hangs.
				PreConfig: func() {
					proxy.set(testProxyFault{hang: func(r *http.Request) bool { return r.Method != http.MethodGet }})
				},
				Config:      four,
				Destroy:     true,
				ExpectError: testUnreachable(proxy.endpoint(), noAnswer),
			},
			{
				// The set is intact; the test's own destroy then succeeds.
				PreConfig: gaveUp("destroy"),
				Config:    four,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: testCheckSetMatchesPlan(client, topology.Spec{Name: name, VHost: "/", Levels: 4, Resolution: time.Second}),
			},
		},
	})
}

// TestAccDelayQueueSet_interruptedApply cuts the broker off in the middle of
// a create, an update and a destroy, at a chosen change whose answer is lost
// although the broker made it. With the broker back, the next apply
// converges to exactly the planned objects, none left over and none twice.
//
// The cut lets every request the broker received finish. When a quorum
// queue's declaration is instead aborted half-way (the client's connection
// closes while the broker declares it), RabbitMQ 3.10.8 can keep the queue
// without ever starting its leader: listed as "live", it never answers a
// get or a publish, and only a delete without if-empty removes it, after
// the broker's own 5 s timeout. The provider cannot tell such a queue holds
// no message, so destroy refuses it until force_destroy is set.
func TestAccDelayQueueSet_interruptedApply(t *testing.T) {
	client := testBrokerClient(t)
	// The create of 3 levels makes 21 changes: 6 exchanges, 4 queues, then 11 bindings.
	for cutName, cut := range map[string]int{"first exchange": 1, "queues": 9, "bindings": 15} {
		t.Run("create cut at "+cutName, func(t *testing.T) {
			proxy := testNewBrokerProxy(t)
			name := testSetName(t)
			testCleanupSet(t, "/", name)
			config := testProviderBlock(proxy.endpoint(), 5*time.Second) + testSetConfig(name, "  levels = 3")
			spec := topology.Spec{Name: name, VHost: "/", Levels: 3, Resolution: time.Second}
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             testCheckOnlyPlanned(client, topology.Spec{Name: name, VHost: "/"}),
				Steps: []resource.TestStep{
					{
						PreConfig:   func() { proxy.set(testProxyFault{cut: cut}) },
						Config:      config,
						ExpectError: testUnreachable(proxy.endpoint(), `(?i)partly\s+created.*tainted`),
					},
					{
						// The partial set is tainted: the next apply deletes what exists, then creates.
						PreConfig: func() {
							testLogPartialSet(t, client, name, proxy)
							proxy.restore()
						},
						Config: config,
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionDestroyBeforeCreate)},
						},
						Check: testCheckOnlyPlanned(client, spec),
					},
					{Config: config, PlanOnly: true},
				},
			})
		})
	}

	t.Run("update and destroy", func(t *testing.T) {
		proxy := testNewBrokerProxy(t)
		name := testSetName(t)
		testCleanupSet(t, "/", name)
		provider := testProviderBlock(proxy.endpoint(), 5*time.Second)
		three, five := provider+testSetConfig(name, "  levels = 3"), provider+testSetConfig(name, "  levels = 5")
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { testAccPreCheck(t) },
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			CheckDestroy:             testCheckOnlyPlanned(client, topology.Spec{Name: name, VHost: "/"}),
			Steps: []resource.TestStep{
				{Config: three},
				{
					// 3 → 5 levels adds 2 exchanges, 2 queues and 13 bindings: cut among the bindings.
					PreConfig:   func() { proxy.set(testProxyFault{cut: 8}) },
					Config:      five,
					ExpectError: testUnreachable(proxy.endpoint(), `(?i)next\s+apply`),
				},
				{
					PreConfig: func() {
						testLogPartialSet(t, client, name, proxy)
						proxy.restore()
					},
					Config: five,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate)},
					},
					Check: testCheckOnlyPlanned(client, topology.Spec{Name: name, VHost: "/", Levels: 5, Resolution: time.Second}),
				},
				{
					// The destroy of 5 levels (topology.Teardown) deletes the ingest exchange, then
					// the level queues (each with its bindings, which a check that may not peek deletes
					// first), then the other exchanges and the parking lot: cut among the queues.
					PreConfig:   func() { proxy.set(testProxyFault{cut: 3}) },
					Config:      five,
					Destroy:     true,
					ExpectError: testUnreachable(proxy.endpoint(), `(?i)destroy\s+again`),
				},
				{
					PreConfig: func() {
						testLogPartialSet(t, client, name, proxy)
						proxy.restore()
					},
					Config:  five,
					Destroy: true,
				},
			},
		})
	})
}

// testLogPartialSet logs how much of the set a cut left on the broker.
func testLogPartialSet(t *testing.T, client *broker.Client, name string, proxy *testBrokerProxy) {
	t.Helper()
	actual, err := client.ReadSet(context.Background(), "/", name)
	if err != nil {
		t.Errorf("reading the set after the cut: %v", err)
		return
	}
	proxy.mu.Lock()
	cut := proxy.fault.cut
	proxy.mu.Unlock()
	t.Logf("cut at change %d: the broker holds %d exchanges, %d queues and %d bindings of %s",
		cut, len(actual.Exchanges), len(actual.Queues), len(actual.Bindings), name)
}

// testCheckOnlyPlanned asks the broker that the set is exactly the plan of
// spec (nothing at all for a spec without levels) and that the vhost holds
// no other exchange or queue whose name starts with the set's name and a dot.
func testCheckOnlyPlanned(client *broker.Client, spec topology.Spec) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		if spec.Levels == 0 {
			if err := testCheckSetGoneIn(client, spec.VHost, spec.Name)(s); err != nil {
				return err
			}
			return testCheckOnly(client, spec.Name, topology.Topology{VHost: spec.VHost})(s)
		}
		desired, err := testPlan(spec)
		if err != nil {
			return err
		}
		return testCheckOnly(client, spec.Name, desired)(s)
	}
}

// testCheckOnly asks the broker that set name is exactly desired and that
// the vhost holds no other exchange or queue whose name starts with the
// set's name and a dot.
func testCheckOnly(client *broker.Client, name string, desired topology.Topology) resource.TestCheckFunc {
	return func(*terraform.State) error {
		actual, err := client.ReadSet(context.Background(), desired.VHost, name)
		if err != nil {
			return err
		}
		if changes := topology.Diff(desired, actual); len(changes) > 0 {
			return fmt.Errorf("the broker differs from the plan of %q by %d changes, the first: %s", name, len(changes), changes[0].Reason)
		}
		want := map[string]bool{}
		for _, x := range desired.Exchanges {
			want["exchange "+x.Name] = true
		}
		for _, q := range desired.Queues {
			want["queue "+q.Name] = true
		}
		found, err := testObjectsWithPrefix(desired.VHost, name+".")
		if err != nil {
			return err
		}
		var extra []string
		for _, object := range found {
			if !want[object] {
				extra = append(extra, object)
			}
		}
		if len(extra) > 0 {
			return fmt.Errorf("the broker holds objects named after the set %q that its plan does not: %s", name, strings.Join(extra, ", "))
		}
		return nil
	}
}
