package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
)

// Markdown renders the report: its provenance, then a table per question.
func (r report) Markdown() string {
	var b strings.Builder
	b.WriteString(r.Provenance.Markdown())
	b.WriteString("Written by `benchmarks/cmd/benchcontrolplane` (`make bench-control-plane`), with the provider built from that checkout.\n")
	fmt.Fprintf(&b, "The busy vhost also holds %s unrelated queues and %s unrelated bindings. Requests are counted by a proxy in front of the\n",
		results.Count(r.UnrelatedQueues), results.Count(r.UnrelatedBindings))
	fmt.Fprintf(&b, "management API; wall time is the whole terraform command, process start included (plan: the median of %d).\n", r.Plans)
	fmt.Fprintf(&b, "1-minute load average when the benchmark began: %.2f.\n\n", r.LoadAverage)

	if len(r.Sets) > 0 {
		rows := [][]string{{"vhost", "N", "objects", "create: requests", "create: wall", "no-change plan: requests", "no-change plan: wall",
			"destroy: requests", "destroy: wall"}}
		for _, s := range r.Sets {
			rows = append(rows, results.Cells(vhostCondition(s.Busy), s.Levels, s.Objects, s.Create.Requests, seconds(s.Create.Wall),
				s.Plan.Requests, seconds(s.Plan.Wall), s.Destroy.Requests, seconds(s.Destroy.Wall)))
		}
		results.PlainTable(&b, rows, "lrrrrrrrr")
	}
	if len(r.CreatePaths) > 0 {
		b.WriteString("\nCreating a fresh set in the busy vhost without terraform, both ways the broker offers:\n\n")
		rows := [][]string{{"N", "parallel declares (the provider's way): requests", "wall", "one definitions upload: requests", "wall"}}
		for _, p := range r.CreatePaths {
			rows = append(rows, results.Cells(p.Levels, p.Declares.Requests, seconds(p.Declares.Wall), p.Definitions.Requests,
				seconds(p.Definitions.Wall)))
		}
		results.PlainTable(&b, rows, "rrrrr")
	}
	if len(r.Peeks) > 0 {
		fmt.Fprintf(&b, "\nPeeks at an empty classic queue (`POST /api/queues/{vhost}/{queue}/get`, the request of the provider's exact "+
			"check before it deletes a queue whose statistics count nothing: every queue of a destroy, as a rule):\n\n")
		rows := [][]string{{"at once", "peeks", "p50", "p90", "p99", "max", seconds(stalledPeek) + " or longer"}}
		for _, p := range r.Peeks {
			rows = append(rows, results.Cells(p.InFlight, p.Latency.Count, milliseconds(p.Latency.P50), milliseconds(p.Latency.P90),
				milliseconds(p.Latency.P99), milliseconds(p.Latency.Max), p.Stalled))
		}
		results.PlainTable(&b, rows, "rrrrrrr")
	}
	if len(r.ManySets) > 0 {
		r.manySetsMarkdown(&b)
	}
	return b.String()
}

// manySetsMarkdown renders the many-sets scenario: each operation's wall time
// over the runs, its CPU and its ratio to a floor; then every run.
func (r report) manySetsMarkdown(b *strings.Builder) {
	runs := 0
	if len(r.ManySets) > 0 {
		runs = len(r.ManySets[0].Runs)
	}
	fmt.Fprintf(b, "\nMany sets in one vhost, each with %s and a route: one resource block with `for_each`, "+
		"Terraform's default parallelism (10). ", r.ManySetsSettings)
	fmt.Fprintf(b, "Each configuration ran %d times straight to the broker (min and median wall time; the CPU of the median run) "+
		"and once more through the counting proxy for the requests, whose own work on the same cores would add to the wall time. ", runs)
	b.WriteString("CPU: terraform is the terraform command with the providers it ran, provider the providers alone, broker the ")
	fmt.Fprintf(b, "broker's process meanwhile (it uses %s per second idle). Each run makes one plan of each kind.\n\n",
		milliseconds(r.BrokerIdleCPU))
	b.WriteString("Floors, measured in each run just before terraform: create against the cheaper of the same objects declared " +
		"by parallel requests straight to the broker (the provider's requests, 10 sets at a time, without terraform) and one " +
		"definitions upload; destroy against the sets' queues and exchanges deleted by parallel requests without any check (the " +
		"broker deletes their bindings with them); plans against Terraform's floor below. ÷ floor is the median over the runs " +
		"of each run's wall time divided by its floor's.\n\n")
	rows := [][]string{{"vhost", "sets × N", "objects", "state", "operation", "requests", "wall: min", "wall: median",
		"CPU: terraform + provider", "CPU: provider", "CPU: broker", "floor: median", "÷ floor"}}
	for _, m := range r.ManySets {
		if len(m.Runs) == 0 {
			continue
		}
		for _, op := range manySetsOperations {
			walls := make([]measurement, len(m.Runs))
			floors := make([]measurement, len(m.Runs))
			ratios := make([]float64, len(m.Runs))
			for i, run := range m.Runs {
				walls[i] = op.of(run)
				floors[i] = op.floorOf(run, r.Floor)
				ratios[i] = walls[i].Wall.Seconds() / floors[i].Wall.Seconds()
			}
			median := medianByWall(walls)
			minimum := slices.MinFunc(walls, func(a, b measurement) int { return cmp.Compare(a.Wall, b.Wall) })
			slices.Sort(ratios)
			rows = append(rows, results.Cells(vhostCondition(m.Busy), fmt.Sprintf("%d × %d", m.Sets, m.Levels), results.Count(m.Objects),
				fmt.Sprintf("%.1f MB", float64(m.StateBytes)/1e6), op.name, op.of(m.Counted).Requests, seconds(minimum.Wall),
				seconds(median.Wall), seconds(median.TerraformCPU), seconds(median.ProviderCPU), seconds(median.BrokerCPU),
				seconds(medianByWall(floors).Wall), fmt.Sprintf("%.1f×", ratios[len(ratios)/2])))
		}
	}
	results.PlainTable(b, rows, "llrrlrrrrrrrr")
	if f := r.Floor; f.DataSources > 0 {
		fmt.Fprintf(b, "\nTerraform's floor: a plan of %d `rabbitmq_delay_topology` data sources (no broker, no state) takes %s, "+
			"CPU %s (provider %s); the median of %d.\n", f.DataSources, seconds(f.Plan.Wall), seconds(f.Plan.TerraformCPU),
			seconds(f.Plan.ProviderCPU), r.Plans)
	}
	b.WriteString("\nEvery run: the 1-minute load average when it began, wall times, and the broker's CPU for the floors.\n\n")
	rows = [][]string{{"vhost", "sets × N", "run", "load", "create", "no-change plan", "plan -refresh=false", "destroy",
		"floor: declares", "floor: upload", "floor: deletes"}}
	withCPU := func(m measurement) string { return fmt.Sprintf("%s (CPU %s)", seconds(m.Wall), seconds(m.BrokerCPU)) }
	for _, m := range r.ManySets {
		for i, run := range m.Runs {
			rows = append(rows, results.Cells(vhostCondition(m.Busy), fmt.Sprintf("%d × %d", m.Sets, m.Levels), i+1,
				fmt.Sprintf("%.2f", run.LoadAverage), seconds(run.Create.Wall), seconds(run.Plan.Wall), seconds(run.PlanNoRefresh.Wall),
				seconds(run.Destroy.Wall), withCPU(run.DeclareFloor), withCPU(run.UploadFloor), withCPU(run.DeleteFloor)))
		}
	}
	results.PlainTable(b, rows, "llrrrrrrrrr")
}

// manySetsOperations are the many-sets table's rows for each configuration:
// how to read an operation's measurement off a run, and its floor.
var manySetsOperations = []struct {
	name    string
	of      func(manySetsRun) measurement
	floorOf func(manySetsRun, floorResult) measurement
}{
	{"create", func(r manySetsRun) measurement { return r.Create }, func(r manySetsRun, _ floorResult) measurement {
		return r.createFloor()
	}},
	{"no-change plan", func(r manySetsRun) measurement { return r.Plan }, terraformFloor},
	{"plan -refresh=false", func(r manySetsRun) measurement { return r.PlanNoRefresh }, terraformFloor},
	{"destroy", func(r manySetsRun) measurement { return r.Destroy }, func(r manySetsRun, _ floorResult) measurement {
		return r.DeleteFloor
	}},
}

func terraformFloor(_ manySetsRun, f floorResult) measurement { return f.Plan }

func milliseconds(d time.Duration) string {
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

// vhostCondition names a measurement's vhost in the tables.
func vhostCondition(busy bool) string {
	if busy {
		return "busy"
	}
	return "empty"
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2f s", d.Seconds())
}
