package faults

import (
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider"
)

// faultsEnv must be set, besides TF_ACC, for the fault tests to run.
const faultsEnv = "RABBITMQ_FAULTS"

// providerFactories serve the provider in-process to the terraform binary
// the tests drive; each test's configuration points it at its own nodes.
var providerFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"rabbitmq": providerserver.NewProtocol6WithError(provider.New("test")()),
}

// requireFaults skips the test unless `make test-faults` runs it.
func requireFaults(t *testing.T) {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" || os.Getenv(faultsEnv) == "" {
		t.Skipf("fault test: starts RabbitMQ nodes of its own and takes minutes; run it with make test-faults (%s=1 %s=1)",
			resource.EnvTfAcc, faultsEnv)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	report.print(os.Stdout)
	os.Exit(code)
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
}

func (r *reportTables) addRow(row faultRow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, row)
}

func (r *reportTables) addPhase(p phase) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phases = append(r.phases, p)
}

// print writes the tables as Markdown, the form benchmarks/faults.md keeps them in.
func (r *reportTables) print(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.rows) > 0 {
		_, _ = fmt.Fprintln(w, "\nFault table (lateness = arrival − publish time − delay, of the messages that arrived; "+
			"parked = in the set's unroutable queue instead; outage = how long the broker or node was down):")
		_, _ = fmt.Fprintln(w)
		_, _ = fmt.Fprintln(w, "| scenario | messages | lost | parked | duplicated | early | p99 lateness | max extra lateness | outage |")
		_, _ = fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, row := range r.rows {
			duplicated := fmt.Sprint(row.Duplicated)
			if row.Redelivered > 0 {
				duplicated = fmt.Sprintf("%d (%d redelivered)", row.Duplicated, row.Redelivered)
			}
			_, _ = fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %d | %s | %s | %s |\n", row.Scenario, row.Messages, row.Lost,
				row.Parked, duplicated, row.Early, seconds(row.P99), seconds(row.Max), seconds(row.Outage))
		}
	}
	if len(r.phases) > 0 {
		_, _ = fmt.Fprintln(w, "\nPhases:")
		_, _ = fmt.Fprintln(w)
		_, _ = fmt.Fprintln(w, "| phase | took |")
		_, _ = fmt.Fprintln(w, "|---|---:|")
		for _, p := range r.phases {
			_, _ = fmt.Fprintf(w, "| %s | %s |\n", p.Name, seconds(p.Took))
		}
	}
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}
