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

	b.WriteString("| vhost | N | objects | create: requests | create: wall | no-change plan: requests | no-change plan: wall | destroy: requests | destroy: wall |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, s := range r.Sets {
		condition := "empty"
		if s.Busy {
			condition = "busy"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %d (N + %d) | %s | %d | %s |\n", condition, s.Levels, s.Objects,
			s.Create.Requests, seconds(s.Create.Wall), s.Plan.Requests, s.Plan.Requests-int64(s.Levels), seconds(s.Plan.Wall),
			s.Destroy.Requests, seconds(s.Destroy.Wall))
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
	return b.String()
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
