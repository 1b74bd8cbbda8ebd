package faults

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The top-level tests, as the write-up tells which ran.
const (
	restartTest  = "TestFaultBrokerRestart"
	drainingTest = "TestFaultRestartWhileDraining"
	nodeLossTest = "TestFaultClusterNodeLoss"
	tlsTest      = "TestFaultManagementTLS"
)

// brokerDefaultConfirmTimeout is RabbitMQ's default
// dead_letter_worker_publisher_confirm_timeout.
const brokerDefaultConfirmTimeout = 180 * time.Second

// markdown is the write-up of a run that passed, as benchmarks/faults.md
// holds it: the run's provenance, its fault table as the tests print it,
// what the scenarios do and what this run's figures show, the broker
// settings that follow, and the time of each phase. The prose is fixed
// but for its numbers, which come from the run or from the tests'
// settings; sections of tests that did not run, and the recommendations
// when no scenario with messages ran, are left out. ok is false
// when no fault test ran.
func (r *reportTables) markdown(run runInfo) (text string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.tests) == 0 {
		return "", false
	}
	w := writeUp{rows: r.rows}
	b := &w.b
	b.WriteString("# Faults: broker restart, node loss, management API over TLS\n\n")
	b.WriteString(run.Provenance.Markdown())
	command := "`make test-faults FAULTS_MARKDOWN=…`"
	if run.Filter != "" {
		command += fmt.Sprintf(" with `TESTARGS='-run %s'`", run.Filter)
	}
	fmt.Fprintf(b, "Written by %s (package `internal/faults`), which ran %s in %s: every figure below is that run's.\n\n",
		command, strings.Join(r.tests, ", "), roundSeconds(run.Took))

	b.WriteString("What happens to delayed messages in flight through a quorum delay queue set when its broker restarts or a cluster " +
		"node dies, and the broker settings that follow from it. The tests run real RabbitMQ nodes of their own on 127.0.0.1, " +
		"apply the set with the provider through a real `terraform`, publish persistent messages with publisher confirms, " +
		"break something, and count what arrives.\n")

	if len(r.rows) > 0 {
		w.faultTableSection()
	}
	b.WriteString("\n## What the scenarios do and what they show\n")
	if restart, found := w.find(func(row faultRow) bool { return row.Test == restartTest }); found {
		w.restartSection(restart)
	}
	if draining, found := w.find(func(row faultRow) bool { return row.Test == drainingTest }); found {
		w.drainingSection(draining)
	}
	if slices.Contains(r.tests, nodeLossTest) {
		w.nodeLossSection()
	}
	if slices.Contains(r.tests, tlsTest) {
		w.tlsSection()
	}
	if len(r.rows) > 0 {
		w.recommendations()
	}
	w.reproducing(r.phases)
	return b.String(), true
}

// writeUp builds the Markdown from the run's rows.
type writeUp struct {
	b    strings.Builder
	rows []faultRow
}

func (w *writeUp) find(match func(faultRow) bool) (faultRow, bool) {
	i := slices.IndexFunc(w.rows, match)
	if i < 0 {
		return faultRow{}, false
	}
	return w.rows[i], true
}

func (w *writeUp) lossRow(strategy topology.DeadLetterStrategy, destination string) (faultRow, bool) {
	return w.find(func(row faultRow) bool {
		return row.Test == nodeLossTest && row.Strategy == strategy && row.Destination == destination
	})
}

func (w *writeUp) faultTableSection() {
	b := &w.b
	b.WriteString("\n## The fault table\n\n")
	b.WriteString("`make test-faults` prints it last; here it is as printed. Every delay is a whole number of ticks of the set's " +
		"resolution, so lateness (arrival − publish time − delay, over the messages that arrived) is what the broker and the " +
		"fault add. *Parked* messages are in the set's `<name>.unroutable` queue instead of their destination; *lost* ones are " +
		"in neither; *duplicated* counts second arrivals, with those the broker flagged as redelivered in parentheses. " +
		"*Outage* is how long the broker or node was down, its boot included.\n\n")
	b.WriteString(faultTable(w.rows))
	early, duplicated := 0, 0
	for _, row := range w.rows {
		early += row.Early
		duplicated += row.Duplicated
	}
	fmt.Fprintf(b, "\n%s arrived early, %s arrived twice, and after every fault the set was still exactly its plan "+
		"(the tests' plan after the fault was empty).\n", messages(early, "No message"), messages(duplicated, "none"))
	if timeouts := w.confirmTimeouts(); len(timeouts) > 0 {
		fmt.Fprintf(b, "\nThe node-loss rows ran with `dead_letter_worker_publisher_confirm_timeout` at %s (the broker's default is %s; "+
			"`FAULTS_DLX_CONFIRM_TIMEOUT` sets it).\n", joinDurations(timeouts), wholeSeconds(brokerDefaultConfirmTimeout))
	}
}

func (w *writeUp) restartSection(row faultRow) {
	maxDelay := topology.MaxDelayFor(restartLevels, restartResolution)
	fmt.Fprintf(&w.b, "\n**Broker restart.** One node, a quorum set of %d levels at %s (delays up to %s), %s persistent messages "+
		"with delays spread over %s–%s; as soon as all are confirmed the node is stopped (`rabbitmqctl stop`) and started again. "+
		"Of the %s messages, %d were lost, %d parked and %d duplicated. A message whose level queue expired while the broker was down moves on "+
		"when it is back and then waits the full time of its next level, so its extra lateness is the part of the outage after "+
		"that expiry: in this run at most %s, for an outage of %s (a figure: the test fails on a message lost, parked or early, "+
		"not on lateness).\n",
		restartLevels, topology.FormatDuration(restartResolution), topology.FormatDuration(maxDelay), thousands(restartMessages),
		topology.FormatDuration(restartMinDelay), topology.FormatDuration(maxDelay), thousands(row.Messages), row.Lost,
		row.Parked, row.Duplicated, seconds(row.Max), seconds(row.Outage))
}

func (w *writeUp) drainingSection(row faultRow) {
	before := topology.MaxDelayFor(drainingLevels, restartResolution)
	fmt.Fprintf(&w.b, "\n**Broker restart while a generation drains.** One node, a quorum at-least-once set of %d levels at %s holding "+
		"%s messages (delays up to %s) changes its resolution to %s: the old generation drains through its own queues and "+
		"exchanges while new messages take the new one. Then %s more go to each (the old key format to the old ingest, the new "+
		"one to the new), and the node is stopped and started again. Of the %s messages, %d were lost, %d parked and %d "+
		"duplicated; extra lateness at most %s for an outage of %s, as for a set without a change. "+
		"The next apply deleted the "+
		"drained generation, and the plan after it was empty.\n",
		drainingLevels, topology.FormatDuration(restartResolution), thousands(restartMessages/2), topology.FormatDuration(before),
		topology.FormatDuration(restartResolution/2), thousands(restartMessages/4), thousands(row.Messages), row.Lost, row.Parked,
		row.Duplicated, seconds(row.Max), seconds(row.Outage))
}

func (w *writeUp) nodeLossSection() {
	b := &w.b
	var outages []time.Duration
	for _, row := range w.rows {
		if row.Test == nodeLossTest {
			outages = append(outages, row.Outage)
		}
	}
	fmt.Fprintf(b, "\n**Node loss.** A 3-node cluster (`scripts/rabbitmq-nodes.sh cluster 1 2 3`, joined with `join_cluster`) and "+
		"a quorum set of %d levels at %s; the provider applies the set through node 1's management API and declares its TTL "+
		"queues with `x-queue-leader-locator` `balanced` (`queue_leader_locator`, a new set's default), so their leaders "+
		"spread over the nodes, which the test checks, with no `rabbitmq-queues rebalance`. The node leading the "+
		"most level queues is killed with `kill -9` %s after the last publish, stays down %s, and is started again (outage %s, "+
		"boot included). The set routes to three destinations, %s messages each:\n\n",
		clusterLevels, topology.FormatDuration(clusterResolution), topology.FormatDuration(clusterKillAfter),
		topology.FormatDuration(clusterDownFor), secondsRange(outages), thousands(clusterMessagesEach))
	b.WriteString("- *a quorum queue with 3 replicas*: survives the loss; its leader moves.\n")
	fmt.Fprintf(b, "- *a classic queue on the lost node*: while its node is down the broker drops the queue's bindings, so messages "+
		"due then match no route and the set's alternate exchange parks them in `<name>.unroutable`%s. Someone has to move "+
		"them on (a shovel, or re-publishing).\n", w.perStrategy("classic", "parked", func(row faultRow) int { return row.Parked }))
	fmt.Fprintf(b, "- *a quorum queue with one replica, on the lost node*: it keeps its bindings but cannot take messages until the "+
		"node is back, as a quorum queue that lost its majority. Its messages are due %s after the last publish at the "+
		"earliest, after the kill.\n", topology.FormatDuration(clusterAwayMinDelay))

	replicated, okReplicated := w.lossRow(topology.AtMostOnce, "replicated")
	classic, okClassic := w.lossRow(topology.AtMostOnce, "classic")
	single, okSingle := w.lossRow(topology.AtMostOnce, "single")
	if okReplicated && okClassic && okSingle {
		fmt.Fprintf(b, "\nWith **at-most-once**, the set keeps moving and drops what it cannot deliver: of the messages to each "+
			"destination, %d of %d to the replicated queue, %d of %d to the classic queue and %d of %d to the single-replica "+
			"queue, which was away, were lost. Those that reached the replicated queue were at most %s late.\n",
			replicated.Lost, replicated.Messages, classic.Lost, classic.Messages, single.Lost, single.Messages, seconds(replicated.Max))
	}

	replicated, okReplicated = w.lossRow(topology.AtLeastOnce, "replicated")
	classic, okClassic = w.lossRow(topology.AtLeastOnce, "classic")
	single, okSingle = w.lossRow(topology.AtLeastOnce, "single")
	if !okReplicated || !okClassic || !okSingle {
		return
	}
	timeout := single.ConfirmTimeout
	fmt.Fprintf(b, "\nWith **at-least-once**, nothing is lost (%d, %d and %d here; the test fails on any), but the whole set waits. "+
		"The dead-letter worker of a level queue (`rabbit_fifo_dlx_worker`, on the queue's leader) publishes each expired "+
		"message to its target and settles it only on the target's confirm. A worker's first publish to a queue whose leader "+
		"is on the lost node is refused (the queue client asks that node first), and the worker publishes again only when its "+
		"timer fires, every `dead_letter_worker_publisher_confirm_timeout`; a message refused just after the timer started "+
		"waits for the second round. Meanwhile the refused messages fill the worker's prefetch "+
		"(`dead_letter_worker_consumer_prefetch`), and the worker takes no more messages from its level: messages for the "+
		"healthy destinations wait behind them. So after the node is back, messages come out up to two timeouts later. With "+
		"the timeout at %s, the longest any message arrived after it was due and the node was back was %s to the replicated "+
		"queue, %s to the classic one and %s to the single-replica one (two timeouts: 2 × %s; figures, which the test reports "+
		"and does not bound).\n",
		replicated.Lost, classic.Lost, single.Lost, wholeSeconds(timeout), seconds(replicated.AfterBack),
		seconds(classic.AfterBack), seconds(single.AfterBack), wholeSeconds(timeout))
}

func (w *writeUp) tlsSection() {
	w.b.WriteString("\n**Management API over TLS.** A node whose management listener uses TLS with a server certificate from a " +
		"CA the test makes, and requires a client certificate (`verify_peer`, `fail_if_no_peer_cert = true`). Through " +
		"`terraform`: `cacert_file` with `clientcert_file`/`clientkey_file` verifies the server and applies a set; a wrong CA " +
		"fails with `Cannot Reach RabbitMQ … certificate signed by unknown authority`; without a client certificate the " +
		"listener refuses the provider (`… certificate required`); `insecure = true` (with the client certificate) connects " +
		"and reads the set.\n")
}

func (w *writeUp) recommendations() {
	b := &w.b
	timeout := wholeSeconds(clusterConfirmTimeout)
	b.WriteString("\n## Recommended broker configuration\n\n")
	b.WriteString("For sets with the default `dead_letter_strategy = \"at-least-once\"`, bound how long the dead-letter worker " +
		"waits before publishing again. RabbitMQ 3.10 has no `rabbitmq.conf` key for it; it goes in `advanced.config`. The value " +
		"is the one the node-loss test runs with unless `FAULTS_DLX_CONFIRM_TIMEOUT` says otherwise:\n\n")
	fmt.Fprintf(b, "```erlang\n%%%% advanced.config\n[\n  {rabbit, [\n"+
		"    %%%% At-least-once dead-lettering (quorum queues): publish a dead-lettered message again after\n"+
		"    %%%% %s, not %s, when its target queue refused it or has not confirmed it. After a\n"+
		"    %%%% destination was away, delayed messages then resume within 2 × %s of its return.\n"+
		"    {dead_letter_worker_publisher_confirm_timeout, %d}\n  ]}\n].\n```\n\n",
		timeout, wholeSeconds(brokerDefaultConfirmTimeout), timeout, clusterConfirmTimeout.Milliseconds())
	b.WriteString("Keep it well above the time your cluster takes to confirm a publish under load: a message published again " +
		"while the first copy is merely slow to be confirmed arrives twice (at-least-once allows duplicates). Lowering the " +
		"timeout does not make an outage shorter, only the wait after it.\n\n")
	b.WriteString("And, from the scenarios:\n\n")
	b.WriteString("- **Route destinations should be quorum queues with replicas on several nodes** (or streams). A classic " +
		"queue on a node that goes down makes the set park its messages in `<name>.unroutable`; a destination that is away " +
		"with its bindings in place stalls an at-least-once set for up to two confirm timeouts after it returns, and loses " +
		"its messages with at-most-once.\n")
	b.WriteString("- **Three nodes or more**, so quorum queues keep a majority when one is lost.\n")
	b.WriteString("- **After a node comes back, run `rabbitmq-queues rebalance quorum`**: the restarted node leads nothing " +
		"until then.\n")
	b.WriteString("- **Expect a broker restart to delay messages in flight by about the outage**; quorum queues keep them all.\n")
}

func (w *writeUp) reproducing(phases []phase) {
	b := &w.b
	b.WriteString("\n## Reproducing\n\n")
	b.WriteString("```sh\nmake test-faults FAULTS_MARKDOWN=benchmarks/faults.md   # prints the fault table last and writes this file\n" +
		"FAULTS_DLX_CONFIRM_TIMEOUT=180s make test-faults TESTARGS='-run TestFaultClusterNodeLoss/at-least-once'\n```\n\n")
	b.WriteString("`make test-faults` needs root or passwordless sudo, and installs the RabbitMQ that `RABBITMQ_VERSION` picks " +
		"first (4.3, the default: Debian sid's package in the chroot of `scripts/rabbitmq.sh`; 3.10: Debian 12's package). " +
		"The tests start their own nodes of that version with `scripts/rabbitmq-nodes.sh` — node N is " +
		"`rabbit-fN@localhost` with AMQP on 127.0.0.1:568N, the management API on 1568N (1569N kept for a TLS listener) and " +
		"Erlang distribution on 2568N, its files in `/tmp/rabbitmq-nodes/VERSION/fN`; the cluster is nodes 1–3, the restart node 4, " +
		"the TLS node 5 — and stop them when they end (their directories stay after a failure, for the logs). The shared " +
		"broker on 5672/15672 is not used. Plain `go test ./...` and `make testacc` skip these tests; they need `TF_ACC=1` " +
		"and `RABBITMQ_FAULTS=1`, which the make target sets. The file is written only when every test passed.\n")
	if len(phases) > 0 {
		b.WriteString("\nTime per phase in this run, as the tests print it:\n\n")
		b.WriteString(phaseTable(phases))
	}
}

// confirmTimeouts are the node-loss rows' confirm timeouts, each once.
func (w *writeUp) confirmTimeouts() []time.Duration {
	var timeouts []time.Duration
	for _, row := range w.rows {
		if row.Test == nodeLossTest && !slices.Contains(timeouts, row.ConfirmTimeout) {
			timeouts = append(timeouts, row.ConfirmTimeout)
		}
	}
	return timeouts
}

// perStrategy says, for a node-loss destination, a count per strategy,
// such as " (parked in this run: 233 of 700 with at-least-once, 408 of 700
// with at-most-once)"; "" when no row has it.
func (w *writeUp) perStrategy(destination, what string, count func(faultRow) int) string {
	var parts []string
	for _, strategy := range topology.DeadLetterStrategies {
		if row, ok := w.lossRow(strategy, destination); ok {
			parts = append(parts, fmt.Sprintf("%d of %d with %s", count(row), row.Messages, strategy))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s in this run: %s)", what, strings.Join(parts, ", "))
}

// messages writes a count of messages, or none when there are none.
func messages(n int, none string) string {
	switch n {
	case 0:
		return none
	case 1:
		return "1 message"
	default:
		return thousands(n) + " messages"
	}
}

// wholeSeconds writes a confirm timeout the way the broker's
// documentation does, such as "180 s".
func wholeSeconds(d time.Duration) string {
	return fmt.Sprintf("%g s", d.Seconds())
}

// secondsRange writes the range of durations, such as "18.30–21.12 s", or
// one duration when they are equal.
func secondsRange(ds []time.Duration) string {
	if len(ds) == 0 {
		return "unknown"
	}
	lo, hi := slices.Min(ds), slices.Max(ds)
	if seconds(lo) == seconds(hi) {
		return seconds(lo)
	}
	return fmt.Sprintf("%.2f–%s", lo.Seconds(), seconds(hi))
}

func joinDurations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = wholeSeconds(d)
	}
	return strings.Join(parts, " and ")
}

func roundSeconds(d time.Duration) string {
	return d.Round(time.Second).String()
}

// thousands writes n with a comma between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

var update = flag.Bool("update", false, "rewrite testdata/faults.md")

// fixtureRun is a whole run's report: the restart, both strategies of the
// node loss, and the TLS test, with the figures of an earlier real run.
func fixtureRun() (*reportTables, runInfo) {
	r := &reportTables{tests: []string{nodeLossTest, restartTest, drainingTest, tlsTest}, rabbitMQ: "3.10.8", erlang: "25.2.3"}
	s := func(seconds float64) time.Duration { return time.Duration(seconds * float64(time.Second)) }
	loss := func(strategy topology.DeadLetterStrategy, destination, description string, lost, parked int, p99, maxLateness, outage, afterBack float64) faultRow {
		return faultRow{Scenario: fmt.Sprintf("node loss (3 nodes, %s) → %s", strategy, description), Messages: 700,
			Lost: lost, Parked: parked, P99: s(p99), Max: s(maxLateness), Outage: s(outage),
			Test: nodeLossTest, Strategy: strategy, Destination: destination, ConfirmTimeout: clusterConfirmTimeout, AfterBack: s(afterBack)}
	}
	r.rows = []faultRow{
		loss(topology.AtLeastOnce, "replicated", "quorum queue, 3 replicas", 0, 0, 16.83, 16.83, 21.12, 10.4),
		loss(topology.AtLeastOnce, "classic", "classic queue on the lost node", 0, 233, 16.55, 16.55, 21.12, 10.1),
		loss(topology.AtLeastOnce, "single", "quorum queue, 1 replica on the lost node", 0, 0, 20.15, 20.15, 21.12, 11.2),
		loss(topology.AtMostOnce, "replicated", "quorum queue, 3 replicas", 0, 0, 0.81, 0.81, 19.53, 0.8),
		loss(topology.AtMostOnce, "classic", "classic queue on the lost node", 1, 408, 0.60, 0.61, 19.53, 0.6),
		loss(topology.AtMostOnce, "single", "quorum queue, 1 replica on the lost node", 456, 0, 0.42, 0.42, 19.53, 0.4),
		{Scenario: "broker restart (1 node, at-least-once) → quorum queue", Messages: 2000, Duplicated: 2, Redelivered: 1,
			P99: s(13.63), Max: s(13.63), Outage: s(14.28), Test: restartTest, Strategy: topology.AtLeastOnce},
		{Scenario: "broker restart while a generation drains (1 node, at-least-once) → quorum queue", Messages: 2000,
			P99: s(9.82), Max: s(10.18), Outage: s(10.18), Test: drainingTest, Strategy: topology.AtLeastOnce},
	}
	r.phases = []phase{
		{Name: nodeLossTest + ": cluster 1 2 3", Took: s(40.9)},
		{Name: restartTest + ": start 4", Took: s(7.2)},
	}
	return r, runInfo{
		Provenance: machine.Provenance{Commit: "5dae7b0abcde", Date: time.Date(2026, 11, 24, 1, 8, 0, 0, time.UTC), CPUs: 2,
			OS: "linux", Arch: "amd64", Go: "go1.26.8", RabbitMQ: "3.10.8", Erlang: "25.2.3", Terraform: "1.11.4"},
		Took: s(223.4),
	}
}

func TestMarkdownGolden(t *testing.T) {
	r, run := fixtureRun()
	got, ok := r.markdown(run)
	if !ok {
		t.Fatal("markdown of a whole run: nothing")
	}
	path := filepath.Join("testdata", "faults.md")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("faults.md mismatch (-want +got; go test -update rewrites it):\n%s", diff)
	}
}

// TestMarkdownHoldsTheRun checks what the write-up must say of any run:
// its provenance, every row and phase exactly as the tests print them, and
// the figures of the run in the prose.
func TestMarkdownHoldsTheRun(t *testing.T) {
	t.Parallel()
	r, run := fixtureRun()
	got, _ := r.markdown(run)
	var printed strings.Builder
	r.print(&printed)
	for _, line := range strings.Split(printed.String(), "\n") {
		if strings.HasPrefix(line, "|") && !strings.Contains(got, line+"\n") {
			t.Errorf("the write-up lacks the printed line %q", line)
		}
	}
	for _, want := range []string{
		run.Provenance.Markdown(),
		"| node loss (3 nodes, at-most-once) → quorum queue, 1 replica on the lost node | 700 | 456 | 0 | 0 | 0 | 0.42 s | 0.42 s | 19.53 s |",
		"| broker restart (1 node, at-least-once) → quorum queue | 2000 | 0 | 0 | 2 (1 redelivered) | 0 | 13.63 s | 13.63 s | 14.28 s |",
		"which ran TestFaultClusterNodeLoss, TestFaultBrokerRestart, TestFaultRestartWhileDraining, TestFaultManagementTLS in 3m43s",
		"No message arrived early, 2 messages arrived twice",
		"at most 13.63 s, for an outage of 14.28 s",
		"(outage 19.53–21.12 s, boot included)",
		"(parked in this run: 233 of 700 with at-least-once, 408 of 700 with at-most-once)",
		"0 of 700 to the replicated queue, 1 of 700 to the classic queue and 456 of 700 to the single-replica queue, which was away, were lost. Those that reached the replicated queue were at most 0.81 s late.",
		"10.40 s to the replicated queue, 10.10 s to the classic one and 11.20 s to the single-replica one",
		"**Management API over TLS.**",
		"{dead_letter_worker_publisher_confirm_timeout, 10000}",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the write-up lacks %q", want)
		}
	}
}

// TestMarkdownOfPartRun: a run of the TLS test alone has no fault table
// and says nothing of the scenarios that did not run; a run of no test
// writes nothing.
func TestMarkdownOfPartRun(t *testing.T) {
	t.Parallel()
	_, run := fixtureRun()
	run.Filter = tlsTest
	got, ok := (&reportTables{tests: []string{tlsTest}}).markdown(run)
	if !ok {
		t.Fatal("markdown of the TLS test alone: nothing")
	}
	for _, want := range []string{"with `TESTARGS='-run TestFaultManagementTLS'`", "**Management API over TLS.**"} {
		if !strings.Contains(got, want) {
			t.Errorf("the write-up lacks %q", want)
		}
	}
	for _, unwanted := range []string{"## The fault table", "**Broker restart.**", "**Node loss.**", "at-most-once**", "## Recommended broker configuration"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("the write-up of the TLS test alone says %q", unwanted)
		}
	}
	if got, ok := (&reportTables{}).markdown(run); ok {
		t.Errorf("markdown of a run without tests = %q, want nothing", got)
	}
}
