package main

import (
	"fmt"
	"strings"
	"time"
)

// Markdown renders the report: its provenance, then a table per question.
func (r report) Markdown() string {
	var b strings.Builder
	b.WriteString(r.Provenance.Markdown())
	b.WriteString("Written by `cmd/benchcontrolplane` (`make bench-control-plane`), with the provider built from that checkout.\n")
	fmt.Fprintf(&b, "The busy vhost also holds %s unrelated queues and %s unrelated bindings. Requests are counted by a proxy in front of the\n",
		thousands(r.UnrelatedQueues), thousands(r.UnrelatedBindings))
	fmt.Fprintf(&b, "management API; wall time is the whole terraform command, process start included (plan: the median of %d).\n\n", r.Plans)

	if len(r.Sets) > 0 {
		b.WriteString("| vhost | N | objects | create: requests | create: wall | no-change plan: requests | no-change plan: wall | destroy: requests | destroy: wall |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, s := range r.Sets {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %d | %s | %d | %s |\n", vhostCondition(s.Busy), s.Levels, s.Objects,
				s.Create.Requests, seconds(s.Create.Wall), s.Plan.Requests, seconds(s.Plan.Wall),
				s.Destroy.Requests, seconds(s.Destroy.Wall))
		}
	}
	if len(r.CreatePaths) > 0 {
		b.WriteString("\nCreating a fresh set in the busy vhost without terraform, both ways the broker offers:\n\n")
		b.WriteString("| N | parallel declares (the provider's way): requests | wall | one definitions upload: requests | wall |\n")
		b.WriteString("|--:|--:|--:|--:|--:|\n")
		for _, p := range r.CreatePaths {
			fmt.Fprintf(&b, "| %d | %d | %s | %d | %s |\n", p.Levels, p.Declares.Requests, seconds(p.Declares.Wall),
				p.Definitions.Requests, seconds(p.Definitions.Wall))
		}
	}
	if len(r.ManySets) > 0 {
		r.manySetsMarkdown(&b)
	}
	return b.String()
}

// manySetsMarkdown renders the many-sets scenario: per configuration and
// operation, its wall time and where the CPU went.
func (r report) manySetsMarkdown(b *strings.Builder) {
	fmt.Fprintf(b, "\nMany sets in one vhost, each with %s and a route: one resource block with `for_each`, "+
		"Terraform's default parallelism (10). ", r.ManySetsSettings)
	b.WriteString("Wall and CPU are of a run straight to the broker; the requests were counted in a run of its own through " +
		"the counting proxy, whose work on the same cores would add to the wall time. ")
	b.WriteString("CPU: terraform is the terraform command with the providers it ran, provider the providers alone, broker the ")
	fmt.Fprintf(b, "broker's process meanwhile (it uses %s per second idle). Plans: the median of %d by wall time.\n",
		milliseconds(r.BrokerIdleCPU), r.Plans)
	fmt.Fprintf(b, "1-minute load average when the run began: %.2f.\n\n", r.LoadAverage)
	b.WriteString("| vhost | sets × N | objects | state | operation | requests | wall | CPU: terraform + provider | CPU: provider | CPU: broker |\n")
	b.WriteString("|---|---|--:|--:|---|--:|--:|--:|--:|--:|\n")
	for _, m := range r.ManySets {
		condition := vhostCondition(m.Busy)
		for _, op := range []struct {
			name string
			m    measurement
		}{{"create", m.Create}, {"no-change plan", m.Plan}, {"plan -refresh=false", m.PlanNoRefresh}, {"destroy", m.Destroy}} {
			fmt.Fprintf(b, "| %s | %d × %d | %s | %.1f MB | %s | %d | %s | %s | %s | %s |\n", condition, m.Sets, m.Levels,
				thousands(m.Objects), float64(m.StateBytes)/1e6, op.name, op.m.Requests, seconds(op.m.Wall),
				seconds(op.m.TerraformCPU), seconds(op.m.ProviderCPU), seconds(op.m.BrokerCPU))
		}
	}
	if f := r.Floor; f.DataSources > 0 {
		fmt.Fprintf(b, "\nTerraform's floor: a plan of %d `rabbitmq_delay_topology` data sources (no broker, no state) takes %s, "+
			"CPU %s (provider %s).\n", f.DataSources, seconds(f.Plan.Wall), seconds(f.Plan.TerraformCPU), seconds(f.Plan.ProviderCPU))
	}
}

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

// thousands writes n with a comma between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
