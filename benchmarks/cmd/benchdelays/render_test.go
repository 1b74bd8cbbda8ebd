package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtureReport is a small run: three variants with their baselines at the
// main rate, and rate searches of which one is capped and one lost messages.
func fixtureReport() report {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	trial := func(variantName string, baseline, main bool, rate float64, p99 time.Duration, byHops []hopStats) trialResult {
		t := heldTrial(rate)
		t.Variant, t.Baseline, t.Main, t.Started = variantName, baseline, main, start
		t.Levels, t.Radix, t.Resolution = 4, 2, 100*ms
		if baseline {
			t.Levels, t.Resolution = 1, 800*ms
		}
		t.Duration, t.LoadBefore, t.LoadAfter = 30*time.Second, 0.52, 1.75
		t.BrokerSettled, t.BrokerSettling = true, 3*time.Second
		t.MachineBusy, t.BrokerCPU, t.OwnCPU = 61.4, rate*30*0.0005, rate*30*0.00004 // 0.5 and 0.04 ms per message
		t.Measurement.Lateness = messaging.Percentiles{Count: 30000, P50: p99 / 4, P90: p99 / 2, P99: p99, Max: 2 * p99}
		t.Measurement.ByHops = byHops
		t.Measurement.DeliveryRate = rate * 0.999
		t.Measurement.Confirm = messaging.Percentiles{Count: 30000, P50: 2 * ms, P90: 3 * ms, P99: 9 * ms, Max: 20 * ms}
		return t
	}
	hops := func(perHop time.Duration) []hopStats {
		var out []hopStats
		for h := 0; h <= 4; h++ {
			base := time.Duration(h+1) * perHop
			out = append(out, hopStats{Hops: h, Percentiles: messaging.Percentiles{Count: 100 * (h + 1), P50: base, P90: 2 * base, P99: 3 * base, Max: 4 * base}})
		}
		return out
	}
	oneHop := func(p99 time.Duration) []hopStats {
		return []hopStats{{Hops: 1, Percentiles: messaging.Percentiles{Count: 30000, P50: p99 / 4, P90: p99 / 2, P99: p99, Max: 2 * p99}}}
	}
	lossy := trial("quorum at-least-once", false, false, 4000, 2500*ms, hops(300*ms))
	lossy.Measurement.Lost, lossy.Measurement.Overdue, lossy.Measurement.Duplicates = 12, 2, 5
	hex := trial("quorum at-most-once r16", false, true, 1000, 30*ms, hops(6 * ms)[:2])
	hex.Levels, hex.Radix = 1, 16      // 15 ticks are one hex digit
	hex.BrokerCPU = 1000 * 30 * 0.0002 // 0.2 ms per message
	var layouts []layoutFigures
	for _, radix := range []int{2, 16} {
		l, err := radixFiguresOf(radix, 1500*ms, 100*ms, topology.QueueTypeQuorum, topology.AtMostOnce)
		if err != nil {
			panic(err)
		}
		layouts = append(layouts, l)
	}
	return report{
		Layouts: layouts,
		Idle: []idleResult{
			{Radix: 2, Set: "bench.idle.r2", QueueType: topology.QueueTypeQuorum, Strategy: topology.AtMostOnce, Window: 20 * time.Second,
				CPUWithout: 4.5, CPUWith: 6.25, RSSWithout: 200 << 20, RSSWith: 203 << 20, MemUsedWithout: 180 << 20, MemUsedWith: 182 << 20, Settled: true},
			{Radix: 16, Set: "bench.idle.r16", QueueType: topology.QueueTypeQuorum, Strategy: topology.AtMostOnce, Window: 20 * time.Second,
				CPUWithout: 4.5, CPUWith: 9.5, RSSWithout: 200 << 20, RSSWith: 211 << 20, MemUsedWithout: -1, MemUsedWith: -1},
		},
		Environment: environment{
			Provenance: machine.Provenance{Commit: "0123456789ab", Date: start, CPUs: 2, CPUModel: "AMD EPYC", MemoryKiB: 24641536,
				OS: "linux", Arch: "amd64", Go: "go1.26.8", RabbitMQ: "3.10.8", Erlang: "25.2.3"},
			Command: "benchdelays -levels 4", BrokerPID: 4242, BrokerIdleCPU: 4.9,
		},
		Settings: settings{
			Variants: []string{"classic", "quorum at-most-once", "quorum at-least-once"}, Levels: 4, Resolution: 100 * ms,
			BaselineDelay: 800 * ms, Rate: 1000, Duration: 30 * time.Second, Steps: []float64{500, 1000, 2000, 4000}, Fine: true,
			SearchDuration: 30 * time.Second, P99Limit: time.Second, LossWindow: 10 * time.Second, Tick: 10 * ms,
			LagLimit: 500 * ms, Prefetch: 256, MaxInFlight: 10000, Seed: 1,
		},
		Trials: []trialResult{
			trial("classic", false, true, 1000, 40*ms, hops(5*ms)),
			trial("classic", true, true, 1000, 8*ms, oneHop(8*ms)),
			trial("quorum at-most-once", false, true, 1000, 60*ms, hops(8*ms)),
			trial("quorum at-most-once", true, true, 1000, 12*ms, oneHop(12*ms)),
			trial("quorum at-least-once", false, true, 1000, 90*ms, hops(12*ms)),
			trial("quorum at-least-once", true, true, 1000, 20*ms, oneHop(20*ms)),
			lossy,
			hex,
		},
		Searches: []searchResult{
			{Variant: "classic", Steps: []step{{Rate: 1000, Held: true, P99: 40 * ms}, {Rate: 2000, Held: true, P99: 80 * ms}, {Rate: 4000, Held: true, P99: 200 * ms}}, Highest: 4000, Capped: true},
			{Variant: "classic", Baseline: true, Steps: []step{{Rate: 1000, Held: true, P99: 8 * ms}, {Rate: 2000, Held: true, P99: 9 * ms}, {Rate: 4000, Held: true, P99: 30 * ms}}, Highest: 4000, Capped: true},
			{Variant: "quorum at-least-once", Steps: []step{{Rate: 1000, Held: true, P99: 90 * ms}, {Rate: 2000, Held: true, P99: 400 * ms}, {Rate: 4000, Why: "12 lost", P99: 2500 * ms}}, Highest: 2000},
			{Variant: "quorum at-most-once", Baseline: true, Steps: []step{{Rate: 1000, Held: true, P99: 12 * ms}, {Rate: 2000, Held: true, P99: 20 * ms}, {Rate: 4000, Why: "p99 lateness 1.2s ≥ 1s", P99: 1200 * ms}, {Rate: 2200, Held: true, P99: 25 * ms}, {Rate: 2420, Why: "p99 lateness 1.1s ≥ 1s", P99: 1100 * ms}}, Highest: 2200},
			{Variant: "quorum at-most-once", Steps: []step{{Rate: 1000, Held: true, P99: 60 * ms}, {Rate: 2000, Why: "p99 lateness 1.3s ≥ 1s", P99: 1300 * ms}, {Rate: 1100, Held: true, P99: 300 * ms}, {Rate: 1210, Why: "p99 lateness 1s ≥ 1s", P99: time.Second}}, Highest: 1100},
			{Variant: "quorum at-most-once r16", Steps: []step{{Rate: 1000, Held: true, P99: 30 * ms}, {Rate: 2000, Held: true, P99: 60 * ms}, {Rate: 4000, Why: "p99 lateness 1.5s ≥ 1s", P99: 1500 * ms}}, Highest: 2000},
			{Variant: "quorum at-least-once", Baseline: true, Steps: []step{{Rate: 1000, Held: true, P99: 20 * ms}, {Rate: 2000, Held: true, P99: 30 * ms}, {Rate: 4000, Held: true, P99: 90 * ms}}, Highest: 4000, Capped: true},
		},
	}
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got; go test -update rewrites it):\n%s", name, diff)
	}
}

func TestMarkdownGolden(t *testing.T) {
	golden(t, "delays.md", markdown(fixtureReport(), "delays.svg", "rates.svg"))
}

func TestMarkdownSays(t *testing.T) {
	t.Parallel()
	md := markdown(fixtureReport(), "delays.svg", "rates.svg")
	var lines []string
	for _, line := range strings.Split(md, "\n") {
		lines = append(lines, strings.Join(strings.Fields(line), " "))
	}
	collapsed := strings.Join(lines, "\n") // cells without their padding
	for _, want := range []string{
		"Measured at commit 0123456789ab on 2026-01-02 03:04 UTC. Machine: 2 CPUs (AMD EPYC), 23.5 GiB RAM, linux/amd64. Software: go1.26.8, RabbitMQ 3.10.8 (Erlang 25.2.3).",
		"The broker ran on the same machine as this program (process 4242).",
		"Command: `benchdelays -levels 4`",
		"![Lateness percentiles by hop count](delays.svg)",
		// The main row of classic: sent, rates, p50, p90, p99, max, counts.
		"| classic | 30,000 | 1,000 | 999 | 10.0 | 20.0 | 40.0 | 80.0 | 0 | 0 | 0 | 0 | 0.50 | 0.50 | 61 % |",
		// The radix table: the planner's figures, the trials' CPU, the idle cost.
		"| 16 | 1 | 16 | 18 | 0.938 | 0.20 quorum at-most-once | 9.5 % (+5.0) | +11.0 MiB | ? |",
		// The cost model beside the measured ratios: radix 16 ÷ radix 2 measured 2,000 / 1,100.
		"| radix 16 | 0.667 | 0.20 | 0.321 | 2,000 | 1.50 | 1.09 | 0.91 | 0.83 | 4.00 | 1.56 | 1.82 |",
		// Capped searches give bounds, not ratios.
		"? (both ≥ top step)",
		"≤ 0.50",
		"quorum at-least-once at 4,000 msg/s: 2 of the lost messages arrived after all, more than 10s late.",
		"no: 12 lost",
		"5 duplicate deliveries in all",
	} {
		if !strings.Contains(collapsed, want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
	// Every table row has as many cells as its header.
	for _, table := range strings.Split(md, "\n\n") {
		lines := strings.Split(strings.TrimSpace(table), "\n")
		if !strings.HasPrefix(lines[0], "|") {
			continue
		}
		cells := strings.Count(lines[0], "|")
		for _, line := range lines[1:] {
			if strings.Count(line, "|") != cells {
				t.Errorf("row %q has %d separators, its header %d", line, strings.Count(line, "|"), cells)
			}
		}
	}
}

func TestFormatMs(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		420 * time.Microsecond: "0.42", 4212 * time.Microsecond: "4.21", 42120 * time.Microsecond: "42.1",
		421 * ms: "421", 4210 * ms: "4210", -2 * ms: "-2.00",
	} {
		if got := formatMs(d); got != want {
			t.Errorf("formatMs(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestSVGGolden(t *testing.T) {
	golden(t, "delays.svg", svgPlot(fixtureReport()))
}

// TestSVGWellFormed parses the plot as XML and checks what it draws: per
// variant panel, one line and one marker per hop count for each percentile,
// a dashed baseline p50 and p99, and every y inside the plot area.
func TestSVGWellFormed(t *testing.T) {
	t.Parallel()
	elements, all := svgElements(t, svgPlot(fixtureReport()))
	counts := map[string]int{}
	for _, el := range elements {
		counts[el.Name.Local]++
		if el.Name.Local == "line" && attr(el, "stroke-dasharray") != "" {
			counts["dashed"]++
		}
		if el.Name.Local == "circle" && attr(el, "cy") != "44" { // not the legend
			counts["markers"]++
			checkInPlotArea(t, el)
		}
	}
	// 4 panels × 3 percentiles.
	if counts["polyline"] != 12 {
		t.Errorf("%d polylines, want 12", counts["polyline"])
	}
	// 3 panels × 3 percentiles × 5 hop counts, and the radix-16 one's 2 hop counts.
	if counts["markers"] != 45+6 {
		t.Errorf("%d markers, want 51", counts["markers"])
	}
	// The legend's one, and a p50 and a p99 per panel: the radix-16 one
	// shows its queue kind's baseline.
	if counts["dashed"] != 1+4*2 {
		t.Errorf("%d dashed lines, want 9", counts["dashed"])
	}
	for _, want := range []string{"classic", "quorum at-most-once", "quorum at-least-once", "quorum at-most-once r16", "RabbitMQ 3.10.8", "one-hop baseline (800ms TTL)"} {
		if !strings.Contains(all, want) {
			t.Errorf("the SVG's text lacks %q", want)
		}
	}
}

func TestSVGEscapesText(t *testing.T) {
	t.Parallel()
	r := fixtureReport()
	r.Environment.Provenance.RabbitMQ = `<4.0 & "beta">`
	if err := xml.NewDecoder(bytes.NewReader([]byte(svgPlot(r)))).Decode(new(struct{})); err != nil {
		t.Fatalf("a version with markup characters broke the SVG: %v", err)
	}
}

func TestSVGEmptyWithoutTrials(t *testing.T) {
	t.Parallel()
	if got := svgPlot(report{}); got != "" {
		t.Errorf("svgPlot of an empty report = %q, want nothing", got)
	}
}

func TestNiceScale(t *testing.T) {
	t.Parallel()
	tests := map[float64][2]float64{
		42:    {50, 10},
		0.9:   {1, 0.2},
		1:     {1, 0.2},
		150:   {150, 50},
		1234:  {1500, 500},
		0:     {1, 0.2},
		7:     {8, 2},
		100.5: {150, 50},
	}
	for top, want := range tests {
		yMax, step := niceScale(top)
		if yMax != want[0] || step != want[1] || yMax < top {
			t.Errorf("niceScale(%g) = %g, %g; want %g, %g", top, yMax, step, want[0], want[1])
		}
	}
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestRatesGolden(t *testing.T) {
	golden(t, "rates.svg", ratesPlot(fixtureReport()))
}

// TestRatesWellFormed parses the rate plot as XML and checks what it draws:
// a panel per queue kind searched, a line per search, a marker per rate
// tried, hollow where it did not hold, every marker inside the plot area.
func TestRatesWellFormed(t *testing.T) {
	t.Parallel()
	elements, all := svgElements(t, ratesPlot(fixtureReport()))
	counts := map[string]int{}
	for _, el := range elements {
		counts[el.Name.Local]++
		if el.Name.Local == "circle" {
			if attr(el, "fill") == "white" {
				counts["hollow"]++
			}
			checkInPlotArea(t, el)
		}
	}
	// classic: set and baseline; quorum at-most-once: radix 2, radix 16 and
	// baseline; quorum at-least-once: set and baseline.
	if counts["polyline"] != 7 {
		t.Errorf("%d polylines, want 7", counts["polyline"])
	}
	if counts["circle"] != 24 || counts["hollow"] != 6 {
		t.Errorf("%d markers of which %d hollow, want 24 of which 6", counts["circle"], counts["hollow"])
	}
	for _, want := range []string{"radix 2: highest 1,100 msg/s", "radix 16: highest 2,000 msg/s", "one-hop baseline: highest ≥ 4,000 msg/s",
		"p99 limit 1s", "quorum at-least-once, radix 2, 4,000 msg/s: p99 2500 ms, did not hold: 12 lost"} {
		if !strings.Contains(all, want) {
			t.Errorf("the rate plot's text lacks %q", want)
		}
	}
	if got := ratesPlot(report{}); got != "" {
		t.Errorf("ratesPlot of a report without searches = %q, want nothing", got)
	}
}

// svgElements parses a plot, failing the test when it is not well-formed
// XML, and returns its elements and its text joined by "|".
func svgElements(t *testing.T, plot string) ([]xml.StartElement, string) {
	t.Helper()
	decoder := xml.NewDecoder(strings.NewReader(plot))
	var elements []xml.StartElement
	var texts []string
	for {
		token, err := decoder.Token()
		if errors.Is(err, io.EOF) {
			return elements, strings.Join(texts, "|")
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch el := token.(type) {
		case xml.StartElement:
			elements = append(elements, el.Copy())
		case xml.CharData:
			texts = append(texts, string(el))
		}
	}
}

// checkInPlotArea fails the test when a marker lies outside the plot area.
func checkInPlotArea(t *testing.T, marker xml.StartElement) {
	t.Helper()
	var y float64
	if _, err := fmt.Sscan(attr(marker, "cy"), &y); err != nil || y < plotTop || y > plotHeight-plotBottom {
		t.Errorf("marker at y %s outside the plot area %d…%d", attr(marker, "cy"), plotTop, plotHeight-plotBottom)
	}
}
