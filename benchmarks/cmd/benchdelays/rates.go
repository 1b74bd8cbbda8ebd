package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// layoutColors tell the layouts apart in the rate plot: radix 2 to 16 from
// blue to green, the one-hop baseline orange as in the hop plot.
var layoutColors = map[int]string{2: "#08519c", 4: "#4292c6", 8: "#41ab5d", 16: "#006d2c"}

// rateLine is one search in the rate plot.
type rateLine struct {
	label    string
	color    string
	baseline bool
	search   searchResult
}

// ratesPlot renders p99 lateness (log scale) against the paced rate, a panel per
// queue kind and a line per layout searched; "" when the run searched nothing.
func ratesPlot(r report) string {
	panels, topRate, lowP99, highP99 := ratePanels(r)
	if len(panels) == 0 {
		return ""
	}
	// The y axis spans whole decades of milliseconds around every p99.
	lowDecade := math.Floor(math.Log10(float64(min(lowP99, highP99)) / float64(time.Millisecond)))
	highDecade := math.Ceil(math.Log10(float64(highP99) / float64(time.Millisecond)))
	if highDecade <= lowDecade {
		highDecade = lowDecade + 1
	}
	xMax, xStep := niceScale(topRate)
	f := newFrame(len(panels))
	y := func(d time.Duration) float64 {
		decades := lowDecade // a trial without a p99 sits on the axis
		if d > 0 {
			decades = math.Max(lowDecade, math.Log10(float64(d)/float64(time.Millisecond)))
		}
		return float64(plotHeight-plotBottom) - (decades-lowDecade)/(highDecade-lowDecade)*f.innerHeight
	}
	var s svgWriter
	s.open(fmt.Sprintf("p99 lateness against the paced rate, %s of publishing per rate, delays 0…%s, R = %s — RabbitMQ %s",
		topology.FormatDuration(r.Settings.SearchDuration), topology.FormatDuration(r.Settings.maxDelay()),
		topology.FormatDuration(r.Settings.Resolution), orUnknown(r.Environment.Provenance.RabbitMQ)))
	s.text(plotWidth/2, 44, "middle", "", fmt.Sprintf("filled: the rate held (p99 under %s, nothing lost or early, publisher on schedule); hollow: it did not",
		topology.FormatDuration(r.Settings.P99Limit)))
	s.yLabel("p99 lateness (ms, log scale)", f)
	for i, p := range panels {
		left := f.left(i)
		right := left + f.panelWidth
		xOf := func(rate float64) float64 { return left + 8 + rate/xMax*(f.panelWidth-16) }
		s.text(left+f.panelWidth/2, float64(plotTop)-8, "middle", `font-weight="bold"`, p.name)
		for decade := lowDecade; decade <= highDecade; decade++ {
			gy := y(time.Duration(math.Pow(10, decade) * float64(time.Millisecond)))
			s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", left, gy, right, gy)
			if i == 0 {
				s.text(left-6, gy+4, "end", "", trimFloat(math.Pow(10, decade)))
			}
		}
		base := float64(plotHeight - plotBottom)
		s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#606060"/>`+"\n", left, base, right, base)
		for k := 0; float64(k)*xStep <= xMax+xStep/2; k++ {
			rate := float64(k) * xStep
			s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#606060"/>`+"\n", xOf(rate), base, xOf(rate), base+4)
			s.text(xOf(rate), base+17, "middle", "", results.Rate(rate))
		}
		s.text(left+f.panelWidth/2, base+36, "middle", "", "paced rate (msg/s)")
		limit := y(r.Settings.P99Limit)
		s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#cb181d" stroke-width="1" stroke-dasharray="2,3"/>`+"\n", left, limit, right, limit)
		s.text(right-4, limit-4, "end", `fill="#cb181d"`, "p99 limit "+topology.FormatDuration(r.Settings.P99Limit))
		for j, line := range p.lines {
			s.rateLine(p.name, line, j, left, xOf, y)
		}
	}
	s.raw("</svg>\n")
	return s.String()
}

// ratePanel is one queue kind's panel of the rate plot.
type ratePanel struct {
	name  string
	lines []rateLine
}

// ratePanels are a panel per queue kind searched, with the highest rate
// tried and the range of the p99s.
func ratePanels(r report) (panels []ratePanel, topRate float64, lowP99, highP99 time.Duration) {
	lowP99, highP99 = time.Duration(math.MaxInt64), r.Settings.P99Limit
	for _, kind := range queueKinds {
		p := ratePanel{name: kind.Name}
		for _, v := range variants {
			if s, ok := r.search(v.Name, false); ok && v.Base == kind.Name {
				p.lines = append(p.lines, rateLine{label: fmt.Sprintf("radix %d%s", v.Radix, v.leadersSuffix()), color: layoutColors[v.Radix], search: s})
			}
		}
		if s, ok := r.search(kind.Name, true); ok {
			p.lines = append(p.lines, rateLine{label: "one-hop baseline", color: baselineColor, baseline: true, search: s})
		}
		for _, line := range p.lines {
			for _, st := range line.search.Steps {
				topRate = max(topRate, st.Rate)
				if st.P99 > 0 {
					lowP99, highP99 = min(lowP99, st.P99), max(highP99, st.P99)
				}
			}
		}
		if len(p.lines) > 0 {
			panels = append(panels, p)
		}
	}
	return panels, topRate, lowP99, highP99
}

// rateLine draws the j-th line of a panel through the rates it tried, with
// its legend inside the panel's top left.
func (s *svgWriter) rateLine(panel string, line rateLine, j int, left float64, xOf func(float64) float64, y func(time.Duration) float64) {
	steps := slices.SortedFunc(slices.Values(line.search.Steps), func(a, b step) int { return cmp.Compare(a.Rate, b.Rate) })
	points := make([]string, len(steps))
	for k, st := range steps {
		points[k] = fmt.Sprintf("%.1f,%.1f", xOf(st.Rate), y(st.P99))
	}
	dash := ""
	if line.baseline {
		dash = ` stroke-dasharray="5,4"`
	}
	s.raw(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", line.color, dash, strings.Join(points, " "))
	for _, st := range steps {
		fill, verdict := line.color, "held"
		if !st.Held {
			fill, verdict = "white", "did not hold: "+st.Why
		}
		s.raw(`<circle cx="%.1f" cy="%.1f" r="%d" fill="%s" stroke="%s" stroke-width="1.5"><title>`,
			xOf(st.Rate), y(st.P99), markerRadius+1, fill, line.color)
		s.escaped(fmt.Sprintf("%s, %s, %s msg/s: p99 %s ms, %s", panel, line.label, results.Rate(st.Rate), formatMs(st.P99), verdict))
		s.raw("</title></circle>\n")
	}
	ly := float64(plotTop) + 14 + float64(j)*16
	s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", left+8, ly-4, left+28, ly-4, line.color, dash)
	s.text(left+34, ly, "start", "", fmt.Sprintf("%s: highest %s msg/s", line.label, formatHighest(line.search)))
}
