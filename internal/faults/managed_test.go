package faults

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// managedNode is the script's node of TestFaultManagedBroker.
const managedNode = 6

// The managed-broker profile: what Amazon MQ and most hosted brokers give
// a tenant.
const (
	managedVHost    = "managed"
	managedUser     = "terraform"
	managedPassword = "managed-profile-secret-1f3a"
	// managedPolicy is the operator policy on every queue of the vhost.
	managedPolicy        = "tenant-limits"
	managedMaxLength     = 20
	managedDeliveryLimit = 3

	// The README's kind of set, small: binary levels of 1 s, quorum,
	// at-most-once (delays up to 31 s); then radix 16, one level of 2 s
	// (up to 30 s).
	managedLevels          = 5
	managedResolution      = time.Second
	managedRadix           = 16
	managedRadixLevels     = 1
	managedRadixResolution = 2 * time.Second
	managedKey             = restartKey // flight.publish sends with it

	// managedRefusals is how many destroys are refused while a message is
	// held: more than the delivery limit, so that checks which counted as
	// deliveries would dead-letter it early.
	managedRefusals = managedDeliveryLimit + 1
	// managedMessages are spread over each set's delays; fewer than the
	// limit, so no level queue fills.
	managedMessages = 12
	// managedOverflow is how many messages of one delay go beyond the limit.
	managedOverflow = 5
	// managedOverflowDelay is their delay: one queue of the radix-16 level.
	managedOverflowDelay = 10 * time.Second

	// managedMarkdownEnv names the results file the test writes its
	// version's section of when it passed (MANAGED_MARKDOWN).
	managedMarkdownEnv = "MANAGED_MARKDOWN"
	// lengthLimitWarning is the summary of the provider's plan-time warning.
	lengthLimitWarning = "Queue Length Limit Sends Delayed Messages Early"
)

// TestFaultManagedBroker runs the provider as a tenant of a managed broker
// as hosted brokers configure RabbitMQ (operator policies, a quorum default
// queue type, a management-tag user, TLS with cacert_file): create, delayed
// messages, a refused destroy, a switch to radix 16, a queue filled past its
// limit, destroy. Nothing may be early, lost or duplicated but what a full
// queue pushed out, and the plan must warn of the limit. It writes what it
// saw to MANAGED_MARKDOWN (benchmarks/managed-broker.md).
func TestFaultManagedBroker(t *testing.T) {
	requireFaults(t)
	for _, env := range []string{"RABBITMQ_INSECURE", "RABBITMQ_CACERT", "RABBITMQ_CLIENTCERT", "RABBITMQ_CLIENTKEY", "RABBITMQ_PROXY"} {
		t.Setenv(env, "")
	}
	m := setUpManaged(t)
	started := time.Now()
	m.run(t)
	m.took = time.Since(started)
	if !t.Failed() {
		m.write(t)
	}
}

// managedRun is the profile's broker, set and what the test saw.
type managedRun struct {
	n           *node
	admin       *rabbithole.Client // guest, an administrator: the test's own eyes
	eyes        *broker.Client
	tlsEndpoint string
	caFile      string
	tenantURL   string // AMQP as the tenant, in its vhost
	name        string
	routeQueue  string
	warnings    *warningLog
	steps       []managedStep
	findings    []string
	rows        []faultRow
	took        time.Duration
	loadAtStart string
	// amqpsEndpoint is the node's AMQP over TLS, where the provider counts.
	amqpsEndpoint string
}

// managedStep is one line of the results' step table.
type managedStep struct {
	Step, Result string
	Took         time.Duration
}

func setUpManaged(t *testing.T) *managedRun {
	t.Helper()
	files := writeTLSFiles(t)
	described := describeNode(t, managedNode)
	tlsPort := described.ManagementTLSPort
	plainAMQP, err := url.Parse(described.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	amqpPort, err := strconv.Atoi(plainAMQP.Port())
	if err != nil {
		t.Fatal(err)
	}
	// verify_none, no client certificate: as hosted brokers serve their API,
	// and AMQP over TLS too (Amazon MQ's 5671), where the provider asks a
	// quorum queue's leader for its count.
	n := startNodes(t, nodeConfig{Conf: fmt.Sprintf(`management.ssl.ip = 127.0.0.1
management.ssl.port = %d
management.ssl.cacertfile = %s
management.ssl.certfile = %s
management.ssl.keyfile = %s
listeners.ssl.default = 127.0.0.1:%d
ssl_options.cacertfile = %[2]s
ssl_options.certfile = %[3]s
ssl_options.keyfile = %[4]s
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false`, tlsPort, files.CA, files.ServerCert, files.ServerKey, amqpPort+10)}, managedNode)[0]
	admin, err := rabbithole.NewClient(n.ManagementURL, "guest", "guest")
	if err != nil {
		t.Fatal(err)
	}
	m := &managedRun{
		n: n, admin: admin, eyes: brokerClient(t, n.ManagementURL), caFile: files.CA,
		tlsEndpoint: fmt.Sprintf("https://127.0.0.1:%d", tlsPort), amqpsEndpoint: fmt.Sprintf("amqps://127.0.0.1:%d", amqpPort+10),
		name: "managed-" + strings.ToLower(acctest.RandString(6)), warnings: &warningLog{},
	}
	m.routeQueue = m.name + ".work"
	m.loadAtStart = loadAverage()
	amqpURL, err := url.Parse(n.AMQPURL)
	if err != nil {
		t.Fatal(err)
	}
	amqpURL.User, amqpURL.Path = url.UserPassword(managedUser, managedPassword), "/"+managedVHost
	m.tenantURL = amqpURL.String()
	m.configureTenant(t)
	return m
}

// configureTenant makes the vhost, the tenant's user and the operator
// policy, as the broker's operator would, and declares the route's queue
// as an application would: without a queue type.
func (m *managedRun) configureTenant(t *testing.T) {
	t.Helper()
	all := rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}
	setup := []struct {
		what string
		call func() (*http.Response, error)
	}{
		{"the vhost, default queue type quorum", func() (*http.Response, error) {
			return m.admin.PutVhost(managedVHost, rabbithole.VhostSettings{DefaultQueueType: "quorum"})
		}},
		{"the tenant's user, tag management", func() (*http.Response, error) {
			return m.admin.PutUser(managedUser, rabbithole.UserSettings{Password: managedPassword, Tags: rabbithole.UserTags{"management"}})
		}},
		{"the tenant's permissions", func() (*http.Response, error) { return m.admin.UpdatePermissionsIn(managedVHost, managedUser, all) }},
		{"guest's permissions", func() (*http.Response, error) { return m.admin.UpdatePermissionsIn(managedVHost, "guest", all) }},
		{"the operator policy", func() (*http.Response, error) {
			return m.admin.PutOperatorPolicy(managedVHost, managedPolicy, rabbithole.OperatorPolicy{
				Pattern: ".*", ApplyTo: "queues",
				Definition: rabbithole.PolicyDefinition{"delivery-limit": managedDeliveryLimit, "max-length": managedMaxLength},
			})
		}},
	}
	for _, step := range setup {
		resp, err := step.call()
		if err == nil && resp.StatusCode >= 300 {
			err = fmt.Errorf("status %s", resp.Status)
		}
		if resp != nil {
			_ = resp.Body.Close()
		}
		if err != nil {
			t.Fatalf("configuring %s: %v", step.what, err)
		}
	}
	conn, err := messaging.Dial(m.tenantURL, 10*time.Second)
	if err != nil {
		t.Fatalf("the tenant's AMQP connection: %v", err)
	}
	defer func() { _ = conn.Close() }()
	if err := messaging.DeclareQueue(conn, m.routeQueue); err != nil {
		t.Fatal(err)
	}
	q, err := m.admin.GetQueue(managedVHost, m.routeQueue)
	if err != nil {
		t.Fatal(err)
	}
	if q.Type != "quorum" {
		t.Fatalf("the route's queue, declared without a type in a vhost whose default is quorum, is %q", q.Type)
	}
	m.findings = append(m.findings, fmt.Sprintf("The route's queue, declared by the application without `x-queue-type`, is a "+
		"%s queue (the vhost's default); the set's own queues name their type.", q.Type))
}

// providerBlock is the tenant's provider block: the TLS endpoint, verified
// with the CA file, and the management user.
// AMQP over TLS sits on a port of the test's own, not the standard 5671,
// which the provider would guess for a user shown no listeners: named.
func (m *managedRun) providerBlock() string {
	return fmt.Sprintf(`provider "rabbitmq" {
  endpoint      = %q
  username      = %q
  password      = %q
  cacert_file   = %q
  amqp_endpoint = %q
}`, m.tlsEndpoint, managedUser, managedPassword, m.caFile, m.amqpsEndpoint)
}

// setConfig is the README's kind of set (radix 2) or the radix-16 one.
func (m *managedRun) setConfig(radix, levels int, resolution time.Duration) string {
	return fmt.Sprintf(`%s

resource "rabbitmq_delay_queue_set" "test" {
  name                 = %q
  vhost                = %q
  radix                = %d
  levels               = %d
  resolution           = %q
  queue_type           = "quorum"
  dead_letter_strategy = "at-most-once"

  route {
    destination = %q
    key         = %q
  }
}
`, m.providerBlock(), m.name, managedVHost, radix, levels, topology.FormatDuration(resolution), m.routeQueue, managedKey)
}

func (m *managedRun) run(t *testing.T) {
	binary := m.setConfig(topology.DefaultRadix, managedLevels, managedResolution)
	radix16 := m.setConfig(managedRadix, managedRadixLevels, managedRadixResolution)
	var f *flight
	t.Cleanup(func() { f.close() })
	var ingest string
	var stepStarted time.Time
	begin := func() { stepStarted = time.Now() }
	done := func(step, result string) {
		m.steps = append(m.steps, managedStep{Step: step, Result: result, Took: time.Since(stepStarted)})
	}
	readIngest := func(s *terraform.State) error {
		res, ok := s.RootModule().Resources["rabbitmq_delay_queue_set.test"]
		if !ok {
			return fmt.Errorf("no rabbitmq_delay_queue_set.test in the state")
		}
		ingest = res.Primary.Attributes["ingest_exchange"]
		return nil
	}
	var spread, held, overflow []messaging.Message
	steps := []resource.TestStep{{
		PreConfig: begin,
		Config:    binary,
		Check: func(s *terraform.State) error {
			if err := readIngest(s); err != nil {
				return err
			}
			if err := m.checkQueues(t, managedLevels+1); err != nil {
				return err
			}
			done(fmt.Sprintf("create the README's kind of set (%d binary levels of %s, quorum, at-most-once)", managedLevels,
				topology.FormatDuration(managedResolution)), "applied; the plan warned: "+m.warnings.summary(lengthLimitWarning))
			if err := m.expectWarning(lengthLimitWarning); err != nil {
				return err
			}
			return m.tenantReads(t)
		},
	}}
	refusal := func(i int) string {
		return fmt.Sprintf("destroy while a queue holds a message (%d of %d)", i, managedRefusals)
	}
	for i := range managedRefusals {
		steps = append(steps, resource.TestStep{
			PreConfig: func() {
				if i == 0 {
					f = newFlight(t, m.tenantNode(), m.name, m.routeQueue)
					held, spread = m.publishBinary(t, f, ingest)
				} else {
					done(refusal(i), "refused: Delay Queues Hold Messages")
				}
				if time.Until(held[0].Due()) < 3*time.Second {
					t.Errorf("refusal %d began %s before the held message was due: too late to tell an early one", i+1, time.Until(held[0].Due()))
				}
				begin()
			},
			Config: binary, Destroy: true, ExpectError: regexp.MustCompile(`Delay Queues Hold Messages`),
		})
	}
	steps = append(steps, resource.TestStep{
		PreConfig: func() {
			done(refusal(managedRefusals), "refused: Delay Queues Hold Messages")
			m.settle(t, f, "README's kind of set: messages of 1–31 s, and the one held through the refused destroys", append(held, spread...), nil)
			m.findings = append(m.findings, fmt.Sprintf("delivery-limit %d: the message held through %d refused destroys "+
				"arrived, none early, lost or parked (%s late at most): no check before a deletion counted as a delivery.",
				managedDeliveryLimit, managedRefusals, seconds(m.rows[len(m.rows)-1].Max)))
			begin()
		},
		Config: radix16,
		Check: func(s *terraform.State) error {
			if err := readIngest(s); err != nil {
				return err
			}
			if err := m.checkQueues(t, managedRadix-1+1); err != nil {
				return err
			}
			done(fmt.Sprintf("switch the empty set to radix %d (%d level of %s)", managedRadix, managedRadixLevels,
				topology.FormatDuration(managedRadixResolution)), "applied; the old generation deleted")
			return nil
		},
	}, resource.TestStep{
		PreConfig: func() {
			set := messaging.Set{IngestExchange: ingest, Levels: managedRadixLevels, Resolution: managedRadixResolution, Radix: managedRadix}
			var delays []time.Duration
			for d := managedRadixResolution; d < managedRadix*managedRadixResolution; d += managedRadixResolution {
				if d != managedOverflowDelay {
					delays = append(delays, d)
				}
			}
			before := len(f.sent)
			if err := f.publish(set, delays); err != nil {
				t.Fatal(err)
			}
			spread = f.sent[before:]
			burst := make([]time.Duration, managedMaxLength+managedOverflow)
			for i := range burst {
				burst[i] = managedOverflowDelay
			}
			if err := f.publish(set, burst); err != nil {
				t.Fatal(err)
			}
			overflow = f.sent[before+len(spread):]
			m.settle(t, f, fmt.Sprintf("radix 16: one message of each delay of 2–30 s but %s", topology.FormatDuration(managedOverflowDelay)), spread, nil)
			m.settle(t, f, fmt.Sprintf("radix 16: %d messages of %s into one queue of max-length %d", len(burst),
				topology.FormatDuration(managedOverflowDelay), managedMaxLength), overflow, m.expectOverflow)
			// 4.0–4.2 count a message that left a queue for up to
			// StatisticsLag after: a destroy right away is refused.
			time.Sleep(broker.StatisticsLag)
			begin()
		},
		Config:  radix16,
		Destroy: true,
	}, resource.TestStep{
		// The destroy's time, and that nothing of the set is left.
		PreConfig: func() {
			done(fmt.Sprintf("destroy the empty radix-%d set", managedRadix), "destroyed")
			if err := checkSetGoneIn(m.eyes, managedVHost, m.name); err != nil {
				t.Error(err)
			}
		},
		Config:   m.providerBlock(),
		PlanOnly: true,
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: m.warnings.factories(),
		CheckDestroy:             func(*terraform.State) error { return checkSetGoneIn(m.eyes, managedVHost, m.name) },
		Steps:                    steps,
	})
}

// publishBinary sends, through the README's kind of set, one message of
// its longest delay, which the refused destroys find held, and
// managedMessages spread over its delays, once the broker has confirmed
// them; then it waits until the statistics count them: the check before
// any change reads statistics on 4.0–4.2, and issue 42 makes it see a
// message published a moment before.
func (m *managedRun) publishBinary(t *testing.T, f *flight, ingest string) (held, spread []messaging.Message) {
	set := messaging.Set{IngestExchange: ingest, Levels: managedLevels, Resolution: managedResolution}
	maxDelay := topology.MaxDelayFor(managedLevels, managedResolution)
	if err := f.publish(set, []time.Duration{maxDelay}); err != nil {
		t.Fatal(err)
	}
	held = f.sent
	delays := spreadDelays(managedMessages, managedResolution, maxDelay, managedResolution, rand.New(rand.NewPCG(42, 6)))
	if err := f.publish(set, delays); err != nil {
		t.Fatal(err)
	}
	spread = f.sent[len(held):]
	time.Sleep(broker.StatisticsLag)
	return held, spread
}

// tenantReads notes what the tenant's user may read through the TLS
// endpoint, as the provider reads it: the vhost's policies (the plan's
// warning needs them), the feature flags (4.3's checks peek only when
// they show rabbitmq_4.3.0 enabled) and the nodes (placement's OS pid).
func (m *managedRun) tenantReads(t *testing.T) error {
	tenant, err := broker.New(broker.Config{Endpoint: m.tlsEndpoint, Username: managedUser, Password: managedPassword,
		CACertFile: m.caFile, Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	policies, readable, err := tenant.VHostPolicies(t.Context(), managedVHost)
	if err != nil || !readable || len(policies.OperatorPolicies) != 1 {
		return fmt.Errorf("the tenant's user read the vhost's policies: readable %v, %d operator policies, %v; want the one", readable,
			len(policies.OperatorPolicies), err)
	}
	flags := "could not read the feature flags"
	if store := tenant.MetadataStore(t.Context()); store != "" {
		flags = "read the feature flags (so on 4.3 the checks may peek)"
	}
	node, err := tenant.Node(t.Context())
	if err != nil {
		return err
	}
	nodes := "could not list the nodes (`GET /api/nodes` needs the `monitoring` tag)"
	if node.OSPID != 0 {
		nodes = "listed the nodes"
	}
	m.findings = append(m.findings, fmt.Sprintf("The tenant's user (tag `management` alone, over TLS verified with `cacert_file`) "+
		"created, refreshed, switched and destroyed the set; it read the vhost's policies and operator policies "+
		"(`GET /api/policies/%s`, `/api/operator-policies/%s`), which the plan's warning needs, %s, and %s, which the provider "+
		"does without.", managedVHost, managedVHost, flags, nodes))
	return nil
}

// tenantNode is the node as the tenant reaches it over AMQP.
func (m *managedRun) tenantNode() *node {
	n := *m.n
	n.AMQPURL = m.tenantURL
	return &n
}

// checkQueues asks the broker for the set's queues: want of them, each a
// quorum queue under the operator policy, its delivery limit the policy's.
func (m *managedRun) checkQueues(t *testing.T, want int) error {
	actual, err := m.eyes.ReadSet(t.Context(), managedVHost, m.name)
	if err != nil {
		return err
	}
	if len(actual.Queues) != want {
		return fmt.Errorf("the broker holds %d queues of %s, want %d", len(actual.Queues), m.name, want)
	}
	for _, q := range actual.Queues {
		info, err := m.admin.GetQueue(managedVHost, q.Name)
		if err != nil {
			return err
		}
		if info.Type != "quorum" {
			return fmt.Errorf("queue %s is %s, want quorum", q.Name, info.Type)
		}
	}
	return nil
}

// settle waits for sent (calling a message lost lossWindow after the last
// was due), adds their row, and checks it: nothing lost, parked, duplicated
// or early; or, when judge is not nil, what judge says of the row.
func (m *managedRun) settle(t *testing.T, f *flight, scenario string, sent []messaging.Message, judge func(faultRow) error) {
	t.Helper()
	ctx, cancel := context.WithDeadlineCause(t.Context(), lastDue(sent).Add(lossWindow), errHung)
	defer cancel()
	err := f.arrivals.waitForAll(ctx, sent)
	if err != nil && judge == nil {
		t.Error(err)
	}
	f.arrivals.settle(t.Context(), 2*time.Second)
	row := f.arrivals.row(scenario, sent, f.parked, 0)
	row.Duplicated = duplicatesOf(f.arrivals, sent)
	row.Test, row.Strategy = t.Name(), topology.AtMostOnce
	// Not in the fault table of FAULTS_MARKDOWN, whose write-up counts
	// every early message as a fault's: the profile's own file holds them.
	m.rows = append(m.rows, row)
	t.Logf("%s: %d lost, %d parked, %d duplicated, %d early; lateness p99 %s, max %s", scenario,
		row.Lost, row.Parked, row.Duplicated, row.Early, row.P99.Round(time.Millisecond), row.Max.Round(time.Millisecond))
	if judge != nil {
		if err := judge(row); err != nil {
			t.Error(err)
		}
		return
	}
	if row.Lost > 0 || row.Parked > 0 || row.Early > 0 || row.Duplicated > 0 {
		t.Errorf("%s: %d lost, %d parked, %d early, %d duplicated of %d messages", scenario,
			row.Lost, row.Parked, row.Early, row.Duplicated, row.Messages)
	}
}

// expectOverflow judges the messages sent into one queue past its limit:
// the broker drops the oldest from the full queue's head (overflow
// drop-head) and dead-letters them, at-most-once, to the next level at
// once, so exactly managedOverflow of them arrive early, none lost.
func (m *managedRun) expectOverflow(row faultRow) error {
	if row.Early != managedOverflow || row.Lost > 0 || row.Parked > 0 || row.Duplicated > 0 {
		return fmt.Errorf("%d messages past max-length %d: %d early, %d lost, %d parked, %d duplicated; want %d early and no other",
			row.Messages, managedMaxLength, row.Early, row.Lost, row.Parked, row.Duplicated, managedOverflow)
	}
	m.findings = append(m.findings, fmt.Sprintf("max-length %d on a TTL queue: of %d messages of one delay, the broker dropped "+
		"the %d oldest from the full queue's head and dead-lettered them on: they arrived early, none lost. The plan warned "+
		"of it (%q).", managedMaxLength, row.Messages, row.Early, lengthLimitWarning))
	return nil
}

// duplicatesOf counts the second arrivals of sent alone.
func duplicatesOf(l *ledger, sent []messaging.Message) int {
	ids := map[string]bool{}
	for _, m := range sent {
		ids[m.ID] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, d := range l.duplicates {
		if ids[d.Message.ID] {
			n++
		}
	}
	return n
}

// expectWarning fails unless a plan warned with summary.
func (m *managedRun) expectWarning(summary string) error {
	if m.warnings.summary(summary) == "" {
		return fmt.Errorf("no plan warned %q; warnings: %q", summary, m.warnings.all())
	}
	return nil
}

// checkSetGoneIn asks the broker that nothing of the set is left in vhost.
func checkSetGoneIn(client *broker.Client, vhost, name string) error {
	actual, err := client.ReadSet(context.Background(), vhost, name)
	if err != nil {
		return err
	}
	if n := len(actual.Exchanges) + len(actual.Queues) + len(actual.Bindings); n > 0 {
		return fmt.Errorf("%d objects of the set %q remain after destroy", n, name)
	}
	return nil
}

// warningLog records the warnings the provider returns to terraform, which
// terraform-plugin-testing does not show a test, from every provider
// instance the steps start.
type warningLog struct {
	mu       sync.Mutex
	warnings []*tfprotov6.Diagnostic
}

func (w *warningLog) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	serve := providerserver.NewProtocol6WithError(provider.New("test")())
	return map[string]func() (tfprotov6.ProviderServer, error){
		"rabbitmq": func() (tfprotov6.ProviderServer, error) {
			server, err := serve()
			if err != nil {
				return nil, err
			}
			return &warningRecorder{ProviderServer: server, log: w}, nil
		},
	}
}

func (w *warningLog) note(diagnostics []*tfprotov6.Diagnostic) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range diagnostics {
		if d != nil && d.Severity == tfprotov6.DiagnosticSeverityWarning {
			w.warnings = append(w.warnings, d)
		}
	}
}

// summary is the detail of the first warning with summary, "" if none.
func (w *warningLog) summary(summary string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.warnings {
		if d.Summary == summary {
			return d.Summary
		}
	}
	return ""
}

// detail is the detail of the first warning with summary, "" if none.
func (w *warningLog) detail(summary string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.warnings {
		if d.Summary == summary {
			return d.Detail
		}
	}
	return ""
}

func (w *warningLog) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, len(w.warnings))
	for i, d := range w.warnings {
		out[i] = d.Summary
	}
	return out
}

// warningRecorder is the provider's server, noting the warnings of plans
// and applies on their way to terraform.
type warningRecorder struct {
	tfprotov6.ProviderServer
	log *warningLog
}

func (r *warningRecorder) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := r.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		r.log.note(resp.Diagnostics)
	}
	return resp, err
}

func (r *warningRecorder) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := r.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		r.log.note(resp.Diagnostics)
	}
	return resp, err
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}

// The results file holds a section per RabbitMQ version, each written by
// its own run between these markers; a run replaces its version's and
// keeps the others.
const (
	managedSectionBegin = "<!-- managed-broker %s: written by TestFaultManagedBroker -->\n"
	managedSectionEnd   = "<!-- end managed-broker %s -->\n"
)

// managedIntro opens the results file.
const managedIntro = "# The managed-broker profile\n\n" +
	"The provider as a tenant of a managed broker, configured as Amazon MQ and most hosted brokers configure RabbitMQ: an " +
	"operator policy on every queue of the vhost (`delivery-limit` 3, `max-length` 20), a vhost whose default queue " +
	"type is quorum, a user with the `management` tag alone (permissions `.*` on its vhost) that the provider and the " +
	"applications use, and the management API over TLS, verified with `cacert_file`. `TestFaultManagedBroker` " +
	"(`internal/faults`) drives a real `terraform` through the README's kind of set (quorum, at-most-once, here 5 binary " +
	"levels of 1 s), a destroy refused while a queue holds a message (more times than the delivery limit), a switch to " +
	"radix 16 (one level of 2 s) and a destroy of the empty set, sends delayed messages through both, and fills one " +
	"queue past `max-length`. Each section below was written by its version's run, with the commit, machine, versions " +
	"and load of that run; never edit it by hand.\n\n" +
	"```sh\nmake test-faults RABBITMQ_VERSION=4.0 TESTARGS='-run TestFaultManagedBroker' MANAGED_MARKDOWN=benchmarks/managed-broker.md\n" +
	"make test-faults RABBITMQ_VERSION=4.3 TESTARGS='-run TestFaultManagedBroker' MANAGED_MARKDOWN=benchmarks/managed-broker.md\n```\n"

// write replaces this version's section of MANAGED_MARKDOWN, when set.
func (m *managedRun) write(t *testing.T) {
	path := os.Getenv(managedMarkdownEnv)
	if path == "" {
		return
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(repositoryRoot, path)
	}
	version := cmp.Or(os.Getenv("RABBITMQ_VERSION"), "4.3")
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	sections := managedSections(string(old))
	sections[version] = m.section(version)
	var b strings.Builder
	b.WriteString(managedIntro)
	for _, v := range slices.Sorted(maps.Keys(sections)) {
		b.WriteString("\n" + sections[v])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: wrote the RabbitMQ %s section of %s", managedMarkdownEnv, version, path)
}

// managedSections are the sections of a results file, by version, each
// with its markers.
func managedSections(text string) map[string]string {
	sections := map[string]string{}
	begin := regexp.MustCompile(`<!-- managed-broker (\S+): written by TestFaultManagedBroker -->\n`)
	for _, loc := range begin.FindAllStringSubmatchIndex(text, -1) {
		version := text[loc[2]:loc[3]]
		end := fmt.Sprintf(managedSectionEnd, version)
		if i := strings.Index(text[loc[0]:], end); i >= 0 {
			sections[version] = text[loc[0] : loc[0]+i+len(end)]
		}
	}
	return sections
}

// section is this run's section: provenance, steps, messages, findings.
func (m *managedRun) section(version string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := machine.Collect(ctx, repositoryRoot)
	p.RabbitMQ, p.Erlang, p.MetadataStore = report.broker()
	if terraform := os.Getenv(terraformPathEnv); terraform != "" {
		p.Terraform, _ = machine.TerraformVersion(ctx, terraform)
	}
	var b strings.Builder
	fmt.Fprintf(&b, managedSectionBegin, version)
	fmt.Fprintf(&b, "## RabbitMQ %s\n\n", p.RabbitMQ)
	b.WriteString(p.Markdown())
	fmt.Fprintf(&b, "\nLoad average (1, 5, 15 min): %s at the start, %s at the end. Written by `make test-faults RABBITMQ_VERSION=%s "+
		"TESTARGS='-run TestFaultManagedBroker' MANAGED_MARKDOWN=…`; the test took %s.\n\n", m.loadAtStart, loadAverage(), version,
		roundSeconds(m.took))
	b.WriteString("| step (terraform, as the tenant, over TLS) | result | took |\n|---|---|---:|\n")
	for _, s := range m.steps {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", s.Step, s.Result, seconds(s.Took))
	}
	b.WriteString("\nThe messages (lateness = arrival − publish time − delay; early = arrived before its delay was over):\n\n")
	b.WriteString(faultTable(m.rows))
	b.WriteString("\nWhat the profile showed:\n\n")
	for _, f := range m.findings {
		b.WriteString("- " + f + "\n")
	}
	if detail := m.warnings.detail(lengthLimitWarning); detail != "" {
		fmt.Fprintf(&b, "\nThe plan's warning, as terraform shows it:\n\n> **%s**\n>\n", lengthLimitWarning)
		for _, line := range strings.Split(detail, "\n") {
			b.WriteString(strings.TrimSpace("> "+line) + "\n")
		}
	}
	fmt.Fprintf(&b, managedSectionEnd, version)
	return b.String()
}
