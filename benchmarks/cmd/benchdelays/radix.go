package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// layoutFigures are what the planner says of a set of one radix holding the
// run's range: its digits, its objects, and its average hops.
type layoutFigures struct {
	Radix       int     `json:"radix"`
	Digits      int     `json:"digits"`
	Queues      int     `json:"queues"`   // TTL queues and the parking lot
	Bindings    int     `json:"bindings"` // without routes
	Exchanges   int     `json:"exchanges"`
	AverageHops float64 `json:"average_hops"`
}

// radixFiguresOf plans a new set of radix holding maxDelay as the provider's
// plan does (delayset.Plan), and averages the hops of every delay in whole
// ticks from the routing keys its KeyFormat writes.
func radixFiguresOf(radix int, maxDelay, resolution time.Duration, queueType topology.QueueType, strategy topology.DeadLetterStrategy) (layoutFigures, error) {
	spec, err := topology.Resolve(topology.Spec{
		Name: "layout", VHost: "/", MaxDelay: maxDelay, Radix: radix, Resolution: resolution,
		QueueType: queueType, DeadLetterStrategy: strategy,
	})
	if err != nil {
		return layoutFigures{}, err
	}
	planned, err := delayset.Plan(delayset.Remembered{}, spec, time.Now())
	if err != nil {
		return layoutFigures{}, err
	}
	format := spec.KeyFormat()
	ticks := int64(maxDelay / resolution)
	hops := 0
	for t := int64(0); t <= ticks; t++ {
		key, err := format.Encode("", time.Duration(t)*resolution)
		if err != nil {
			return layoutFigures{}, err
		}
		_, delay, err := format.Decode(key)
		if err != nil {
			return layoutFigures{}, err
		}
		hops += topology.Hops(uint64(delay/resolution), radix)
	}
	return layoutFigures{
		Radix: radix, Digits: spec.Levels, Queues: len(planned.Set.Queues), Bindings: len(planned.Set.Bindings), Exchanges: len(planned.Set.Exchanges),
		AverageHops: float64(hops) / float64(ticks+1),
	}, nil
}

// averageHops is the mean hop count of a trial's delivered messages.
func averageHops(t trialResult) float64 {
	n, sum := 0, 0
	for _, h := range t.Measurement.ByHops {
		n += h.Count
		sum += h.Count * h.Hops
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// costPoint is one trial seen by the cost model: the hops its messages
// passed on average and the broker's CPU per delivered message, in ms.
type costPoint struct {
	Hops, CPU float64
}

// costFit is the per-hop cost model, CPU per message = PerMessage +
// PerHop·hops, fitted by least squares.
type costFit struct {
	PerMessage, PerHop float64 // ms
	Points             int
}

// fitCost fits the model to points; ok is false with fewer than two
// distinct hop counts.
func fitCost(points []costPoint) (fit costFit, ok bool) {
	n := float64(len(points))
	var sh, sc, shh, shc float64
	for _, p := range points {
		sh, sc, shh, shc = sh+p.Hops, sc+p.CPU, shh+p.Hops*p.Hops, shc+p.Hops*p.CPU
	}
	denominator := n*shh - sh*sh
	if len(points) < 2 || math.Abs(denominator) < 1e-9 {
		return costFit{}, false
	}
	perHop := (n*shc - sh*sc) / denominator
	return costFit{PerMessage: (sc - perHop*sh) / n, PerHop: perHop, Points: len(points)}, true
}

// at is the model's CPU per message at hops.
func (f costFit) at(hops float64) float64 { return f.PerMessage + f.PerHop*hops }

// kindModel is the cost model of one queue kind: its points, the fit, and this
// program's own CPU per message, which a CPU-bound machine also pays.
type kindModel struct {
	Kind     string
	Baseline trialResult
	Sets     []trialResult // main trials, radix ascending
	Fit      costFit
	Fitted   bool
	Own      float64 // ms per delivered message, mean over the kind's main trials
}

// kindModels builds the cost model of every queue kind with a baseline and a
// set among the main trials.
func kindModels(r report) []kindModel {
	var models []kindModel
	for _, kind := range queueKinds {
		base, ok := r.mainTrial(kind.Name, true)
		if !ok || base.perDelivered(base.BrokerCPU) < 0 {
			continue
		}
		m := kindModel{Kind: kind.Name, Baseline: base}
		points := []costPoint{{Hops: averageHops(base), CPU: millis(base.perDelivered(base.BrokerCPU))}}
		own, owned := millis(base.perDelivered(base.OwnCPU)), 1
		for _, v := range variants {
			if v.Base != kind.Name || v.LeaderLocator != "" { // the model is of the broker's layout, not of where a cluster runs it
				continue
			}
			t, ok := r.mainTrial(v.Name, false)
			if !ok || t.perDelivered(t.BrokerCPU) < 0 {
				continue
			}
			m.Sets = append(m.Sets, t)
			points = append(points, costPoint{Hops: averageHops(t), CPU: millis(t.perDelivered(t.BrokerCPU))})
			if t.OwnCPU >= 0 {
				own, owned = own+millis(t.perDelivered(t.OwnCPU)), owned+1
			}
		}
		if len(m.Sets) == 0 {
			continue
		}
		m.Fit, m.Fitted = fitCost(points)
		m.Own = own / float64(owned)
		models = append(models, m)
	}
	return models
}

// expectedRatio is the rate a layout of hops reaches relative to one of refHops
// on a CPU-bound machine: the inverse ratio of their CPU per message.
func (m kindModel) expectedRatio(hops, refHops float64) float64 {
	return (m.Fit.at(refHops) + m.Own) / (m.Fit.at(hops) + m.Own)
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// idleResult is the broker's idle cost of one set: its CPU use and memory
// over a window with the set declared and empty, and without it.
type idleResult struct {
	Radix     int                         `json:"radix"`
	Set       string                      `json:"set"`
	QueueType topology.QueueType          `json:"queue_type"`
	Strategy  topology.DeadLetterStrategy `json:"dead_letter_strategy"`
	Window    time.Duration               `json:"window_ns"`
	// CPU in percent of one CPU, RSS the broker process's resident memory
	// and MemUsed the node's mem_used from the management API, in bytes;
	// -1 when unknown.
	CPUWithout     float64 `json:"cpu_without_percent"`
	CPUWith        float64 `json:"cpu_with_percent"`
	RSSWithout     int64   `json:"rss_without_bytes"`
	RSSWith        int64   `json:"rss_with_bytes"`
	MemUsedWithout int64   `json:"mem_used_without_bytes"`
	MemUsedWith    int64   `json:"mem_used_with_bytes"`
	// Settled says whether the broker was quiet before each window.
	Settled bool   `json:"settled"`
	Error   string `json:"error,omitempty"`
}

// formatCPUDelta writes the CPU with the set and its difference to without.
func formatCPUDelta(with, without float64) string {
	if with < 0 || without < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f %% (%+.1f)", with, with-without)
}

// formatMemoryDelta writes the difference of two byte counts in MiB.
func formatMemoryDelta(with, without int64) string {
	if with < 0 || without < 0 {
		return "?"
	}
	return fmt.Sprintf("%+.1f MiB", float64(with-without)/(1<<20))
}

// radixMarkdown renders the radix table: per radix, the set's size, hops, CPU
// per delivered message and idle cost; "" for a run without layouts.
func radixMarkdown(r report) string {
	if len(r.Layouts) == 0 {
		return ""
	}
	var b strings.Builder
	s := r.Settings
	fmt.Fprintf(&b, "\n## Radix: size, hops and cost\n\n")
	fmt.Fprintf(&b, "Sets holding delays 0 … %s at R = %s as `internal/topology` plans them: **queues** are the TTL queues and the parking lot, "+
		"**bindings** those of the set without routes, **average hops** the mean of the nonzero digits over every delay of the range in whole ticks, "+
		"read back from the routing keys the planner writes. **Broker CPU** per delivered message is the main trials' at %s msg/s. ",
		topology.FormatDuration(s.maxDelay()), topology.FormatDuration(s.Resolution), results.Rate(s.Rate))
	if len(r.Idle) > 0 {
		i := r.Idle[0]
		fmt.Fprintf(&b, "**Idle**: the broker's CPU over %s with the set (%s, %s) declared and empty, in percent of one CPU, and in brackets its change "+
			"from the same window without the set, each after the broker had settled; **memory**: the change of the broker process's resident memory (RSS) "+
			"and of the node's `mem_used` (management API). Other work on the machine or the broker shows in these differences.",
			topology.FormatDuration(i.Window), i.QueueType, i.Strategy)
	}
	b.WriteString("\n\n")
	rows := [][]string{{"radix", "digits", "queues", "bindings", "average hops", "broker CPU ms/delivered msg", "idle broker CPU", "broker RSS", "mem_used"}}
	for _, l := range r.Layouts {
		cpu := []string{}
		for _, t := range r.Trials {
			if t.Main && !t.Baseline && radixOf(t.Radix) == l.Radix {
				cpu = append(cpu, formatOptionalMs(t.perDelivered(t.BrokerCPU))+" "+baseOf(t.Variant)+leadersOf(t.Variant))
			}
		}
		cpuCell := "–"
		if len(cpu) > 0 {
			cpuCell = strings.Join(cpu, " · ")
		}
		idleCPU, rss, memUsed := "–", "–", "–"
		for _, i := range r.Idle {
			if i.Radix == l.Radix {
				if i.Error != "" {
					idleCPU, rss, memUsed = "failed", "failed", "failed"
					break
				}
				idleCPU = formatCPUDelta(i.CPUWith, i.CPUWithout)
				rss, memUsed = formatMemoryDelta(i.RSSWith, i.RSSWithout), formatMemoryDelta(i.MemUsedWith, i.MemUsedWithout)
			}
		}
		rows = append(rows, []string{strconv.Itoa(l.Radix), strconv.Itoa(l.Digits), strconv.Itoa(l.Queues), strconv.Itoa(l.Bindings),
			strconv.FormatFloat(l.AverageHops, 'f', 3, 64), cpuCell, idleCPU, rss, memUsed})
	}
	results.Table(&b, rows, "rrrrrlrrr")
	if idle := idleNotes(r); idle != "" {
		b.WriteString("\n" + idle)
	}
	b.WriteString(costModelMarkdown(r))
	return b.String()
}

// idleNotes says which idle measurements failed or started with the broker busy.
func idleNotes(r report) string {
	var b strings.Builder
	for _, i := range r.Idle {
		if i.Error != "" {
			fmt.Fprintf(&b, "- The idle measurement of radix %d failed: %s\n", i.Radix, i.Error)
		} else if !i.Settled && r.Environment.BrokerPID != 0 {
			fmt.Fprintf(&b, "- The idle measurement of radix %d started with the broker still busy.\n", i.Radix)
		}
	}
	return b.String()
}

// costModelMarkdown holds each queue kind's measured rates against the
// issue's cost model, both forms computed from the run's own figures.
func costModelMarkdown(r report) string {
	models := kindModels(r)
	if len(models) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Cost model\n\n")
	b.WriteString("The model the figures are held against: a hop (a TTL queue passed) costs the broker about as much CPU as a message of the one-hop " +
		"baseline, and a message costs little else, so on a CPU-bound machine a set's highest rate falls with its average hops. In two forms, " +
		"both from this run's own figures: **hops**, rate ∝ 1 / average hops; **CPU**, broker CPU per delivered message = c0 + c_hop · hops, " +
		"fitted by least squares over the queue kind's baseline and sets at the main rate, plus this program's own CPU per message, since it " +
		"publishes and consumes on the same cores: rate ∝ 1 / (c0 + c_hop · hops + own). Hops are the average over the messages each trial " +
		"delivered. **Measured** ratios are those of the highest rates the search found (a bound when a search reached its top step); " +
		"**measured ÷ CPU model** shows where the figures depart from the model: below 1 the layout costs more than its CPU per message says, " +
		"for instance when latency, not CPU, ends the search.\n")
	for _, m := range models {
		costModelTable(&b, r, m)
	}
	return b.String()
}

// costModelTable is one queue kind's fit, and its layouts' rates against the
// model's, relative to the baseline and, when there is one, to radix 2.
func costModelTable(b *strings.Builder, r report, m kindModel) {
	fmt.Fprintf(b, "\n**%s**: ", m.Kind)
	if m.Fitted {
		fmt.Fprintf(b, "c0 = %.3f ms, c_hop = %.3f ms per hop (fitted over %d trials); ", m.Fit.PerMessage, m.Fit.PerHop, m.Fit.Points)
	} else {
		b.WriteString("too few distinct hop counts to fit c0 and c_hop; ")
	}
	fmt.Fprintf(b, "this program %.3f ms per message.\n\n", m.Own)
	baseHops := averageHops(m.Baseline)
	baseSearch, baseSearched := r.search(m.Kind, true)
	// The columns against radix 2 when there is a set of radix 2 and another.
	var binary *trialResult
	for i := range m.Sets {
		if radixOf(m.Sets[i].Radix) == 2 && len(m.Sets) > 1 {
			binary = &m.Sets[i]
		}
	}
	header := []string{"layout", "average hops", "broker CPU ms/delivered", "CPU model ms", "highest rate",
		"÷ baseline: hops", "÷ baseline: CPU model", "÷ baseline: measured", "measured ÷ CPU model"}
	if binary != nil {
		header = append(header, "÷ radix 2: hops", "÷ radix 2: CPU model", "÷ radix 2: measured")
	}
	rows := [][]string{header}
	fitted := func(hops float64) string {
		if !m.Fitted {
			return "–"
		}
		return strconv.FormatFloat(m.Fit.at(hops), 'f', 3, 64)
	}
	baseRow := []string{"baseline (one hop)", strconv.FormatFloat(baseHops, 'f', 3, 64), formatOptionalMs(m.Baseline.perDelivered(m.Baseline.BrokerCPU)),
		fitted(baseHops), formatSearched(baseSearch, baseSearched), "1", "1", "1", "–"}
	if binary != nil {
		baseRow = append(baseRow, "–", "–", "–")
	}
	rows = append(rows, baseRow)
	for _, t := range m.Sets {
		hops := averageHops(t)
		set, searched := r.search(t.Variant, false)
		expected := "–"
		departure := "–"
		if m.Fitted {
			expected = formatFactor(m.expectedRatio(hops, baseHops))
			if measured, ok := plainRatio(set, baseSearch, searched && baseSearched); ok {
				departure = formatFactor(measured / m.expectedRatio(hops, baseHops))
			}
		}
		row := []string{"radix " + strconv.Itoa(radixOf(t.Radix)), strconv.FormatFloat(hops, 'f', 3, 64), formatOptionalMs(t.perDelivered(t.BrokerCPU)),
			fitted(hops), formatSearched(set, searched), formatFactor(baseHops / hops), expected,
			formatRatio(set, baseSearch, searched && baseSearched), departure}
		if binary != nil {
			binHops := averageHops(*binary)
			binSearch, binSearched := r.search(binary.Variant, false)
			expectedBinary := "–"
			if m.Fitted {
				expectedBinary = formatFactor(m.expectedRatio(hops, binHops))
			}
			row = append(row, formatFactor(binHops/hops), expectedBinary, formatRatio(set, binSearch, searched && binSearched))
		}
		rows = append(rows, row)
	}
	results.Table(b, rows, "l"+strings.Repeat("r", len(header)-1))
}

// plainRatio is set's highest rate over base's when both are known and
// neither search reached its top step.
func plainRatio(set, base searchResult, both bool) (float64, bool) {
	if !both || set.Highest == 0 || base.Highest == 0 || set.Capped || base.Capped {
		return 0, false
	}
	return set.Highest / base.Highest, true
}

func formatSearched(s searchResult, ok bool) string {
	if !ok {
		return "–"
	}
	return formatHighest(s)
}

// formatFactor writes a ratio to two decimals.
func formatFactor(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}
