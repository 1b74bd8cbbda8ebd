package faults

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const (
	// faultsEnv must be set, besides TF_ACC, for the fault tests to run.
	faultsEnv = "RABBITMQ_FAULTS"
	// markdownEnv names a file the tests write their results to, the way
	// benchmarks/faults.md holds them, when they all pass; a relative path
	// is taken from the repository's root. `make test-faults
	// FAULTS_MARKDOWN=benchmarks/faults.md` sets it.
	markdownEnv = "FAULTS_MARKDOWN"
	// terraformPathEnv is the terraform binary the tests run.
	terraformPathEnv = "TF_ACC_TERRAFORM_PATH"
)

// repositoryRoot is where go test runs this package from, relative.
var repositoryRoot = filepath.Join("..", "..")

// providerFactories serve the provider in-process to the terraform binary
// the tests drive; each test's configuration points it at its own nodes.
var providerFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"rabbitmq": providerserver.NewProtocol6WithError(provider.New("test")()),
}

// requireFaults skips the test unless `make test-faults` runs it, and
// records that it ran, for the write-up.
func requireFaults(t *testing.T) {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" || os.Getenv(faultsEnv) == "" {
		t.Skipf("fault test: starts RabbitMQ nodes of its own and takes minutes; run it with make test-faults (%s=1 %s=1)",
			resource.EnvTfAcc, faultsEnv)
	}
	report.addTest(t.Name())
}

func TestMain(m *testing.M) {
	markdown := os.Getenv(markdownEnv)
	var run runInfo
	if markdown != "" {
		if !filepath.IsAbs(markdown) {
			if abs, err := filepath.Abs(filepath.Join(repositoryRoot, markdown)); err == nil {
				markdown = abs
			}
		}
		run = collectRunInfo()
	}
	started := time.Now()
	code := m.Run()
	run.Took = time.Since(started)
	report.print(os.Stdout)
	if markdown != "" {
		code = max(code, writeMarkdown(markdown, run, code))
	}
	os.Exit(code)
}

// runInfo is what the write-up says of the run besides its tables.
type runInfo struct {
	Provenance machine.Provenance
	// Filter is the -run pattern, if the run had one.
	Filter string
	Took   time.Duration
}

// collectRunInfo reads the provenance of the run that starts, but for
// the broker's version, which the first node started tells (noteBroker).
func collectRunInfo() runInfo {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := runInfo{Provenance: machine.Collect(ctx, repositoryRoot)}
	for _, arg := range os.Args[1:] {
		if pattern, ok := strings.CutPrefix(arg, "-test.run="); ok {
			run.Filter = pattern
		}
	}
	if terraform := os.Getenv(terraformPathEnv); terraform != "" {
		version, err := machine.TerraformVersion(ctx, terraform)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", markdownEnv, err)
		}
		run.Provenance.Terraform = version
	}
	return run
}

// writeMarkdown writes the write-up of a run that passed to path and
// returns the exit code it adds: 1 when it could not write.
func writeMarkdown(path string, run runInfo, code int) int {
	if code != 0 {
		fmt.Fprintf(os.Stderr, "%s: not writing %s: the tests failed, and the write-up holds claims they check\n", markdownEnv, path)
		return 0
	}
	run.Provenance.RabbitMQ, run.Provenance.Erlang, run.Provenance.MetadataStore = report.broker()
	text, ok := report.markdown(run)
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: not writing %s: no fault test ran\n", markdownEnv, path)
		return 0
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", markdownEnv, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "%s: wrote %s\n", markdownEnv, path)
	return 0
}

// faultRow is one line of the fault table: what became of the messages in
// flight through one scenario.
type faultRow struct {
	Scenario string
	Messages int
	// Lost counts messages that neither arrived nor were parked in the
	// set's unroutable queue; Parked those that were parked.
	Lost, Parked int
	// Duplicated counts second arrivals; Redelivered those of them the
	// broker flagged as redelivered (an ack lost with a connection).
	Duplicated, Redelivered int
	Early                   int
	P99, Max                time.Duration // lateness of the first arrivals
	// Outage is how long the fault lasted: broker or node down.
	Outage time.Duration

	// What the write-up says besides the table. Test is the top-level
	// test that measured the row.
	Test string
	// Node loss: the set's strategy, the destination (route key), the
	// cluster's dead-letter confirm timeout, and the longest any message
	// arrived after it was due and the lost node was back.
	Strategy       topology.DeadLetterStrategy
	Destination    string
	ConfirmTimeout time.Duration
	AfterBack      time.Duration
}

// phase is one timed step, such as starting a node.
type phase struct {
	Name string
	Took time.Duration
}

// report collects the rows and phases of every test, printed after the last.
var report reportTables

type reportTables struct {
	mu     sync.Mutex
	rows   []faultRow
	phases []phase
	// tests are the top-level tests that ran, in order.
	tests []string
	// nodeErrors are the last errors the nodes of failed tests logged.
	nodeErrors []string
	// The RabbitMQ and Erlang versions of the first node started.
	rabbitMQ, erlang, metadataStore string
}

func (r *reportTables) addTest(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tests = append(r.tests, name)
}

// noteBroker asks a node's management API for its versions, once: every
// node runs the same installation.
func (r *reportTables) noteBroker(t *testing.T, managementURL string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rabbitMQ != "" {
		return
	}
	client, err := rabbithole.NewClient(managementURL, "guest", "guest")
	if err != nil {
		t.Logf("asking %s its RabbitMQ version: %v", managementURL, err)
		return
	}
	overview, err := client.Overview()
	if err != nil {
		t.Logf("asking %s its RabbitMQ version: %v", managementURL, err)
		return
	}
	r.rabbitMQ, r.erlang = overview.RabbitMQVersion, overview.ErlangVersion
	r.metadataStore = brokerClient(t, managementURL).MetadataStore(t.Context())
}

func (r *reportTables) broker() (rabbitMQ, erlang, metadataStore string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rabbitMQ, r.erlang, r.metadataStore
}

func (r *reportTables) addRow(row faultRow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, row)
}

func (r *reportTables) addNodeErrors(lines ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodeErrors = append(r.nodeErrors, lines...)
}

func (r *reportTables) addPhase(p phase) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phases = append(r.phases, p)
}

// print writes the tables as Markdown, the form the write-up
// (FAULTS_MARKDOWN) keeps them in.
func (r *reportTables) print(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.rows) > 0 {
		_, _ = fmt.Fprintln(w, "\nFault table (lateness = arrival − publish time − delay, of the messages that arrived; "+
			"parked = in the set's unroutable queue instead; outage = how long the broker or node was down):")
		_, _ = fmt.Fprintln(w)
		_, _ = fmt.Fprint(w, faultTable(r.rows))
	}
	if len(r.phases) > 0 {
		_, _ = fmt.Fprintln(w, "\nPhases:")
		_, _ = fmt.Fprintln(w)
		_, _ = fmt.Fprint(w, phaseTable(r.phases))
	}
	if len(r.nodeErrors) > 0 {
		_, _ = fmt.Fprintln(w, "\nThe last errors the nodes of failed tests logged:")
		_, _ = fmt.Fprintln(w)
		for _, line := range r.nodeErrors {
			_, _ = fmt.Fprintln(w, "- "+line)
		}
	}
}

// faultTable is the fault table, one line per row, as the tests print it.
func faultTable(rows []faultRow) string {
	var b strings.Builder
	b.WriteString("| scenario | messages | lost | parked | duplicated | early | p99 lateness | max extra lateness | outage |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range rows {
		duplicated := fmt.Sprint(row.Duplicated)
		if row.Redelivered > 0 {
			duplicated = fmt.Sprintf("%d (%d redelivered)", row.Duplicated, row.Redelivered)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %d | %s | %s | %s |\n", row.Scenario, row.Messages, row.Lost,
			row.Parked, duplicated, row.Early, seconds(row.P99), seconds(row.Max), seconds(row.Outage))
	}
	return b.String()
}

// phaseTable is the time each step took, as the tests print it.
func phaseTable(phases []phase) string {
	var b strings.Builder
	b.WriteString("| phase | took |\n")
	b.WriteString("|---|---:|\n")
	for _, p := range phases {
		fmt.Fprintf(&b, "| %s | %s |\n", p.Name, seconds(p.Took))
	}
	return b.String()
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}
