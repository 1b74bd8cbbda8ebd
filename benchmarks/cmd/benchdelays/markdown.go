package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// markdown renders a run as delays.md; svgName and ratesName, when not empty,
// are the plots to link.
func markdown(r report, svgName, ratesName string) string {
	var b strings.Builder
	writeIntro(&b, r)
	writeMainTable(&b, r)
	writeHopsTable(&b, r, svgName)
	writeSearchTable(&b, r, ratesName)
	b.WriteString(brokerProfileMarkdown(r))
	b.WriteString(clusterMarkdown(r))
	b.WriteString(radixMarkdown(r))
	writeEveryTrial(&b, r)
	if notes := notes(r); notes != "" {
		b.WriteString("\n## Notes\n\n")
		b.WriteString(notes)
	}
	return b.String()
}

// writeIntro says what was measured, where and how.
func writeIntro(b *strings.Builder, r report) {
	s, e := r.Settings, r.Environment
	b.WriteString("# Data-path benchmark: delayed messages through a real broker\n\n")
	b.WriteString(e.Provenance.Markdown())
	makeTarget := "`make bench-delays` runs `benchdelays -out benchmarks $BENCH_DELAYS_ARGS`"
	if e.cluster() {
		makeTarget = "`make bench-cluster` runs it on " + scriptNodes(e.Nodes) + " of `scripts/rabbitmq-nodes.sh`"
	}
	fmt.Fprintf(b, "Command: `%s`; %s. %s\n\n", e.Command, makeTarget, brokerWhere(e, s))

	fmt.Fprintf(b, "Each set holds delays from 0 to %s at R = %s: %s. Every message is persistent, published with confirms "+
		"at a paced rate (a %s ticker sending what the schedule says is due, confirms collected asynchronously), asks for a whole number "+
		"of ticks drawn uniformly, and is consumed from the route's queue (classic, prefetch %d). "+
		"**Lateness** = arrival − publish − requested delay; since the delays are whole ticks it is the broker's alone "+
		"(a delay between ticks is rounded up, adding up to R by design). **Hops** = TTL queues passed = nonzero digits of the delay in ticks in the set's radix (set bits in radix 2). "+
		"**Lost** = not arrived %s after due. **Unroutable** = messages in the set's parking lot at the end. "+
		"**msg/s delivered** counts arrivals while the load is steady (from the longest delay after the start to the end of publishing). "+
		"**Broker CPU** is the CPU time of the broker's process during the trial (publishing and the delays after it) per message sent, "+
		"its background work included (%s); **own CPU** the same for this program, which publishes, consumes and counts; "+
		"**machine CPU** how busy all CPUs were during the trial: other work on the machine shows there. "+
		"Each trial declares a fresh set (`internal/topology` Plan → Diff → `internal/broker` Apply, the provider's code path) and force-deletes it after; "+
		"the next starts once the broker's CPU use has stayed near its idle level for 3 s, so that no trial measures the clean-up of the one before.\n\n",
		topology.FormatDuration(s.maxDelay()), topology.FormatDuration(s.Resolution), digitsOfRun(r), topology.FormatDuration(s.Tick),
		s.Prefetch, topology.FormatDuration(s.LossWindow), brokerIdle(e))
	fmt.Fprintf(b, "Each main trial publishes for %s and each search trial for %s. %s\n\n",
		topology.FormatDuration(s.Duration), topology.FormatDuration(s.SearchDuration), steadyStateText(s))
	for _, warning := range s.Warnings {
		fmt.Fprintf(b, "> **Warning:** %s.\n\n", warning)
	}
	if s.BaselineDelay > 0 {
		fmt.Fprintf(b, "The **baseline** of each queue type is a one-level set: one TTL queue of %s of that type and strategy, every message "+
			"asking for exactly that delay, so one hop through the same exchanges as a hop of the set: the floor any layout can reach on this broker.\n\n",
			topology.FormatDuration(s.BaselineDelay))
	}
}

// writeMainTable is the table of the main trials.
func writeMainTable(b *strings.Builder, r report) {
	s := r.Settings
	fmt.Fprintf(b, "## %s msg/s for %s\n\n", results.Rate(s.Rate), topology.FormatDuration(s.Duration))
	rows := [][]string{{"variant", "sent", "msg/s sent", "msg/s delivered", "p50 ms", "p90 ms", "p99 ms", "max ms", "early", "lost", "dup", "unroutable", "broker CPU ms/msg", "broker CPU ms/delivered", "machine CPU"}}
	for _, t := range r.Trials {
		if !t.Main {
			continue
		}
		m := t.Measurement
		rows = append(rows, []string{trialName(t), results.Count(t.Pacing.Sent), results.Rate(t.Pacing.Achieved()), formatOptionalRate(m.DeliveryRate),
			formatMs(m.Lateness.P50), formatMs(m.Lateness.P90), formatMs(m.Lateness.P99), formatMs(m.Lateness.Max),
			strconv.Itoa(m.Early), strconv.Itoa(m.Lost), strconv.Itoa(m.Duplicates), strconv.Itoa(m.Unroutable),
			formatOptionalMs(t.perMessage(t.BrokerCPU)), formatOptionalMs(t.perDelivered(t.BrokerCPU)), formatPercent(t.MachineBusy)})
	}
	results.Table(b, rows, "lrrrrrrrrrrrrrr")
}

// writeHopsTable is the main trials' lateness by hop count.
func writeHopsTable(b *strings.Builder, r report, svgName string) {
	s := r.Settings
	b.WriteString("\n## Lateness by hop count\n\n")
	fmt.Fprintf(b, "p50 / p90 / p99 / max in ms (messages) at %s msg/s.\n\n", results.Rate(s.Rate))
	var names []string
	topHops := 0
	for _, v := range variants {
		if t, ok := r.mainTrial(v.Name, false); ok {
			names = append(names, v.Name)
			topHops = max(topHops, t.Levels)
		}
	}
	header := append([]string{"hops"}, names...)
	rows := [][]string{header}
	for hops := 0; hops <= topHops; hops++ {
		row := []string{strconv.Itoa(hops)}
		for _, name := range names {
			t, _ := r.mainTrial(name, false)
			row = append(row, formatHop(t.Measurement.ByHops, hops))
		}
		rows = append(rows, row)
	}
	baselineRow := []string{"baseline (1)"}
	anyBaseline := false
	for _, name := range names {
		t, ok := r.mainTrial(baseOf(name), true)
		anyBaseline = anyBaseline || ok
		baselineRow = append(baselineRow, formatHop(t.Measurement.ByHops, 1))
	}
	if anyBaseline {
		rows = append(rows, baselineRow)
	}
	results.Table(b, rows, "r"+strings.Repeat("r", len(names)))
	if svgName != "" {
		fmt.Fprintf(b, "\n![Lateness percentiles by hop count](%s)\n", svgName)
	}
}

// writeSearchTable is the highest rate each variant held, if searched.
func writeSearchTable(b *strings.Builder, r report, ratesName string) {
	if len(r.Searches) == 0 {
		return
	}
	s := r.Settings
	fmt.Fprintf(b, "\n## Highest rate with p99 lateness under %s\n\n", topology.FormatDuration(s.P99Limit))
	fmt.Fprintf(b, "Steps of %s msg/s, %s of publishing each, starting from the main run and going up while a rate holds "+
		"(p99 under %s, nothing lost, early, refused or misrouted, and the publisher within 2 %% of its schedule)%s\n\n",
		results.Join(s.Steps, ", ", results.Rate), topology.FormatDuration(s.SearchDuration), topology.FormatDuration(s.P99Limit), fineText(s.Fine))
	rows := [][]string{{"variant", "set: steps (p99)", "set", "baseline: steps (p99)", "baseline", "set / baseline"}}
	for _, v := range variants {
		set, okSet := r.search(v.Name, false)
		base, okBase := r.search(v.Base, true)
		if !okSet && (!okBase || v.Radix != 2 || v.LeaderLocator != "") { // a baseline shows in its radix-2 row, or beside a set of its kind
			continue
		}
		rows = append(rows, []string{v.Name, formatSteps(set.Steps), formatHighest(set), formatSteps(base.Steps), formatHighest(base), formatRatio(set, base, okSet && okBase)})
	}
	results.Table(b, rows, "llrlrr")
	if ratesName != "" {
		fmt.Fprintf(b, "\n![p99 lateness against the paced rate](%s)\n", ratesName)
	}
}

// writeEveryTrial is the table of every trial.
func writeEveryTrial(b *strings.Builder, r report) {
	s := r.Settings
	b.WriteString("\n## Every trial\n\n")
	rows := [][]string{{"variant", "msg/s asked", "for", "sent", "msg/s sent", "max lag ms", "confirm p99 ms", "p50 ms", "p99 ms", "max ms", "early", "lost", "dup", "unroutable", "broker CPU ms/msg", "own CPU ms/msg", "machine CPU", "load", "held"}}
	for _, t := range r.Trials {
		m := t.Measurement
		held, why := verdict(t, s.P99Limit, s.LagLimit)
		outcome := "yes"
		if !held {
			outcome = "no: " + why
		}
		rows = append(rows, []string{trialName(t), results.Rate(t.Rate), topology.FormatDuration(t.Duration), results.Count(t.Pacing.Sent),
			results.Rate(t.Pacing.Achieved()), formatMs(t.Pacing.MaxLag), formatMs(m.Confirm.P99),
			formatMs(m.Lateness.P50), formatMs(m.Lateness.P99), formatMs(m.Lateness.Max),
			strconv.Itoa(m.Early), strconv.Itoa(m.Lost), strconv.Itoa(m.Duplicates), strconv.Itoa(m.Unroutable),
			formatOptionalMs(t.perMessage(t.BrokerCPU)), formatOptionalMs(t.perMessage(t.OwnCPU)), formatPercent(t.MachineBusy), formatLoad(t), outcome})
	}
	results.Table(b, rows, "lrrrrrrrrrrrrrrrrll")
}

// notes says what the counts in the tables do not: failures, refusals, misroutes,
// late arrivals, and where duplicates come from.
func notes(r report) string {
	var b strings.Builder
	for _, t := range r.Trials {
		m := t.Measurement
		note := func(format string, args ...any) {
			fmt.Fprintf(&b, "- %s at %s msg/s"+format+"\n", append([]any{trialName(t), results.Rate(t.Rate)}, args...)...)
		}
		if t.Error != "" {
			note(" did not finish: %s", t.Error)
		}
		if m.Nacked > 0 {
			note(": %d messages refused by the broker or unconfirmed.", m.Nacked)
		}
		if m.Misrouted > 0 {
			note(": %d messages arrived with another delay's routing key, first: %s", m.Misrouted, m.FirstMisroute)
		}
		if m.Early+m.WithinClock > 0 {
			note(": %d messages arrived before they were due, %d of them by less than the broker's %s expiry clock; the earliest by %s.",
				m.Early+m.WithinClock, m.WithinClock, messaging.BrokerClock, m.MostEarly.Round(time.Microsecond))
		}
		if m.Overdue > 0 {
			note(": %d of the lost messages arrived after all, more than %s late.", m.Overdue, topology.FormatDuration(r.Settings.LossWindow))
		}
		if !t.BrokerSettled && r.Environment.BrokerPID != 0 {
			note(" started with the broker still busy after %s of waiting for it to settle.", t.BrokerSettling.Round(time.Second))
		}
		if m.Foreign > 0 {
			note(": %d deliveries that were not the trial's messages.", m.Foreign)
		}
	}
	duplicates := 0
	for _, t := range r.Trials {
		duplicates += t.Measurement.Duplicates
	}
	if duplicates > 0 {
		fmt.Fprintf(&b, "- %d duplicate deliveries in all, counted in dup. At-least-once dead-lettering (quorum queues) keeps each expired "+
			"message in its queue until the next queue confirms it, and sends it again when that confirm does not come within the "+
			"broker's dead_letter_worker_publisher_confirm_timeout or when the queue's leader restarts: a message is then delivered twice "+
			"rather than lost. At-most-once dead-lettering never sends twice, and drops the message instead when the next queue refuses it.\n", duplicates)
	}
	return b.String()
}

// fineText ends the search's description: how it closes in on the limit.
func fineText(fine bool) string {
	if fine {
		return ", then up from the highest that held in steps of 10 % while they stay below the lowest that failed, " +
			"so each highest rate is within about 10 % of the limit unless the search reached its top step."
	}
	return ". Without 10 % steps near the limit (-fine=false), a highest rate is only as precise as the steps' spacing."
}

// steadyStateText says whether the trials ran long enough to measure the
// sets in steady state.
func steadyStateText(s settings) string {
	steady := steadyState(s.maxDelay())
	if s.Duration >= steady && s.SearchDuration >= steady {
		return fmt.Sprintf("Both are at least twice the longest delay (%s), so for the second half of each trial the broker holds messages "+
			"of every delay while new ones keep arriving, as under a constant load: the figures are steady-state.", topology.FormatDuration(steady))
	}
	return fmt.Sprintf("**Not steady state:** steady state needs at least twice the longest delay (%s) of publishing; "+
		"a shorter trial never loads the broker with every delay at once, and its figures flatter the layout.", topology.FormatDuration(steady))
}

// baseOf is the queue kind of a variant a table names, whose baseline it
// shares: the name itself for radix 2 and names no variant has.
func baseOf(name string) string {
	if v, ok := variantNamed(name); ok {
		return v.Base
	}
	return name
}

// leadersOf is ", LOCATOR" for a variant a table names that places its
// leaders, or "".
func leadersOf(name string) string {
	v, _ := variantNamed(name)
	return v.leadersSuffix()
}

// digitsOfRun says how many digits of each radix the run's sets have:
// "8 binary digits; radix 16: 2 digits".
func digitsOfRun(r report) string {
	byRadix := map[int]int{}
	for _, t := range r.Trials {
		if !t.Baseline {
			byRadix[radixOf(t.Radix)] = t.Levels
		}
	}
	if len(byRadix) == 0 {
		byRadix[2] = r.Settings.Levels
	}
	var parts []string
	for _, radix := range topology.Radixes {
		switch digits, ok := byRadix[radix]; {
		case !ok:
		case radix == 2:
			parts = append(parts, fmt.Sprintf("N = %d binary digits (levels)", digits))
		default:
			parts = append(parts, fmt.Sprintf("radix %d: %d digits", radix, digits))
		}
	}
	return strings.Join(parts, "; ")
}

func trialName(t trialResult) string {
	if t.Baseline {
		return t.Variant + ", baseline"
	}
	return t.Variant
}

// formatMs writes a duration in milliseconds, to a hundredth below 10 ms,
// a tenth below 100 ms and whole above: 0.42, 4.21, 42.1, 421, 4210.
func formatMs(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch abs := math.Abs(ms); {
	case abs < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64)
	case abs < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	default:
		return strconv.FormatFloat(ms, 'f', 0, 64)
	}
}

func formatOptionalRate(rate float64) string {
	if rate == 0 {
		return "–"
	}
	return results.Rate(rate)
}

func formatOptionalMs(d time.Duration) string {
	if d < 0 {
		return "?"
	}
	return formatMs(d)
}

func formatPercent(p float64) string {
	if p < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f %%", p)
}

func formatLoad(t trialResult) string {
	if t.LoadBefore < 0 || t.LoadAfter < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f→%.1f", t.LoadBefore, t.LoadAfter)
}

// formatHop writes the lateness of the messages with the given hop count.
func formatHop(byHops []hopStats, hops int) string {
	for _, h := range byHops {
		if h.Hops == hops {
			return fmt.Sprintf("%s / %s / %s / %s (%s)", formatMs(h.P50), formatMs(h.P90), formatMs(h.P99), formatMs(h.Max), results.Count(h.Count))
		}
	}
	return "–"
}

// formatSteps writes each step tried, in rate order, with its p99 and ✓ or ✗.
func formatSteps(steps []step) string {
	if len(steps) == 0 {
		return "–"
	}
	sorted := slices.Clone(steps)
	slices.SortFunc(sorted, func(a, b step) int { return cmp.Compare(a.Rate, b.Rate) })
	parts := make([]string, len(sorted))
	for i, s := range sorted {
		mark := "✓"
		if !s.Held {
			mark = "✗"
		}
		parts[i] = fmt.Sprintf("%s %s %s", results.Rate(s.Rate), mark, formatMs(s.P99))
		if !s.Held && !strings.HasPrefix(s.Why, "p99") {
			parts[i] += " (" + s.Why + ")"
		}
	}
	return strings.Join(parts, " · ")
}

func formatHighest(s searchResult) string {
	switch {
	case len(s.Steps) == 0:
		return "–"
	case s.Highest == 0:
		return "none"
	case s.Capped:
		return "≥ " + results.Rate(s.Highest)
	}
	return results.Rate(s.Highest)
}

// formatRatio compares a set's highest rate with its baseline's; a capped
// rate makes the ratio a bound, or unknown when both are capped.
func formatRatio(set, base searchResult, both bool) string {
	if !both || set.Highest == 0 || base.Highest == 0 {
		return "–"
	}
	ratio := strconv.FormatFloat(set.Highest/base.Highest, 'f', 2, 64)
	switch {
	case set.Capped && base.Capped:
		return "? (both ≥ top step)"
	case set.Capped:
		return "≥ " + ratio
	case base.Capped:
		return "≤ " + ratio
	}
	return ratio
}

func brokerIdle(e environment) string {
	if len(e.brokerPIDs()) == 0 {
		return "the broker is not on this machine, so unknown"
	}
	return fmt.Sprintf("%.0f %% of a CPU when idle before the first trial", e.BrokerIdleCPU)
}

// brokerWhere says whether the broker ran beside this program, where its
// CPU time could be read.
func brokerWhere(e environment, s settings) string {
	if e.cluster() {
		names := results.Join(e.Nodes, ", ", func(n clusterNode) string { return n.Name })
		if len(e.brokerPIDs()) == 0 {
			return fmt.Sprintf("The broker was a cluster of %d nodes (%s), not all of them on this machine: its CPU is unknown.", len(e.Nodes), names)
		}
		return fmt.Sprintf("The broker was a cluster of %d nodes (%s), all on this machine beside this program (processes %s), sharing its CPUs: "+
			"the broker's CPU is theirs together, and the section on the cluster gives each node's. %s", len(e.Nodes), names,
			results.Join(e.brokerPIDs(), ", ", strconv.Itoa), clientsWhere(e, s))
	}
	if e.BrokerPID == 0 {
		return "The broker's process was not on this machine, or not visible to this program."
	}
	return fmt.Sprintf("The broker ran on the same machine as this program (process %d).", e.BrokerPID)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
