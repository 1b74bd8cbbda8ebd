package main

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The plot's geometry, in SVG user units.
const (
	plotWidth    = 960
	plotHeight   = 400
	plotLeft     = 64 // room for the y axis labels
	plotRight    = 16
	plotTop      = 78 // title and legend above
	plotBottom   = 52 // x axis labels below
	panelGap     = 24
	markerRadius = 3
)

// percentileSeries are the lines of each panel, light to dark.
var percentileSeries = []struct {
	name  string
	color string
	value func(messaging.Percentiles) time.Duration
}{
	{"p50", "#9ecae1", func(s messaging.Percentiles) time.Duration { return s.P50 }},
	{"p90", "#4292c6", func(s messaging.Percentiles) time.Duration { return s.P90 }},
	{"p99", "#08306b", func(s messaging.Percentiles) time.Duration { return s.P99 }},
}

const baselineColor = "#d94801"

// svgPlot renders the main trials' lateness percentiles by hop count, a panel
// per variant with its baseline dashed; "" when there is no set trial.
func svgPlot(r report) string {
	panels, top := hopPanels(r)
	if len(panels) == 0 {
		return ""
	}
	yMax, yStep := niceScale(float64(top) / float64(time.Millisecond))
	f := newFrame(len(panels))
	y := func(d time.Duration) float64 {
		ms := float64(d) / float64(time.Millisecond)
		return float64(plotHeight-plotBottom) - ms/yMax*f.innerHeight
	}
	var s svgWriter
	title := fmt.Sprintf("Lateness by hop count at %s msg/s, delays 0…%s, R = %s — RabbitMQ %s",
		results.Rate(r.Settings.Rate), topology.FormatDuration(r.Settings.maxDelay()), topology.FormatDuration(r.Settings.Resolution), orUnknown(r.Environment.Provenance.RabbitMQ))
	s.open(title)
	// Legend.
	x := float64(plotLeft)
	for _, series := range percentileSeries {
		s.raw(`<line x1="%.1f" y1="44" x2="%.1f" y2="44" stroke="%s" stroke-width="2"/>`+"\n", x, x+24, series.color)
		s.raw(`<circle cx="%.1f" cy="44" r="%d" fill="%s"/>`+"\n", x+12, markerRadius, series.color)
		s.text(x+30, 48, "start", "", series.name)
		x += 80
	}
	s.raw(`<line x1="%.1f" y1="44" x2="%.1f" y2="44" stroke="%s" stroke-width="1.5" stroke-dasharray="5,4"/>`+"\n", x, x+24, baselineColor)
	s.text(x+30, 48, "start", "", fmt.Sprintf("one-hop baseline (%s TTL) p50 and p99", topology.FormatDuration(r.Settings.BaselineDelay)))
	s.yLabel("lateness (ms)", f)
	for i, p := range panels {
		left := f.left(i)
		right := left + f.panelWidth
		s.text(left+f.panelWidth/2, float64(plotTop)-8, "middle", `font-weight="bold"`, p.name)
		// Grid and y labels.
		for k := 0; float64(k)*yStep <= yMax+yStep/2; k++ {
			v := float64(k) * yStep
			gy := y(time.Duration(v * float64(time.Millisecond)))
			s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", left, gy, right, gy)
			if i == 0 {
				s.text(left-6, gy+4, "end", "", trimFloat(v))
			}
		}
		s.hopPanel(p, left, right, f.panelWidth, y)
	}
	s.raw("</svg>\n")
	return s.String()
}

// hopPanel is one variant's panel of the hop plot.
type hopPanel struct {
	name     string
	set      trialResult
	baseline *trialResult
}

// hopPanels are a panel per variant with a main trial, and the highest p99
// among them.
func hopPanels(r report) (panels []hopPanel, top time.Duration) {
	for _, v := range variants {
		set, ok := r.mainTrial(v.Name, false)
		if !ok {
			continue
		}
		p := hopPanel{name: v.Name, set: set}
		for _, h := range set.Measurement.ByHops {
			top = max(top, h.P99)
		}
		if base, ok := r.mainTrial(v.Base, true); ok {
			p.baseline = &base
			top = max(top, base.Measurement.Lateness.P99)
		}
		panels = append(panels, p)
	}
	return panels, top
}

// hopPanel draws a panel's x axis, one tick per hop count, the baseline and
// the percentiles by hop count.
func (s *svgWriter) hopPanel(p hopPanel, left, right, panelWidth float64, y func(time.Duration) float64) {
	levels := max(p.set.Levels, 1) // the x axis: every hop count the set's digits allow
	for _, h := range p.set.Measurement.ByHops {
		levels = max(levels, h.Hops)
	}
	xOf := func(hops int) float64 { return left + 8 + float64(hops)/float64(levels)*(panelWidth-16) }
	base := float64(plotHeight - plotBottom)
	s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#606060"/>`+"\n", left, base, right, base)
	for hops := 0; hops <= levels; hops++ {
		s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#606060"/>`+"\n", xOf(hops), base, xOf(hops), base+4)
		s.text(xOf(hops), base+17, "middle", "", fmt.Sprint(hops))
	}
	s.text(left+panelWidth/2, base+36, "middle", "", "hops (TTL queues passed)")
	if p.baseline != nil {
		bl := p.baseline.Measurement.Lateness
		for _, d := range []time.Duration{bl.P50, bl.P99} {
			s.raw(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="5,4"/>`+"\n",
				left, y(d), right, y(d), baselineColor)
		}
	}
	for _, series := range percentileSeries {
		var points []string
		for _, h := range p.set.Measurement.ByHops {
			points = append(points, fmt.Sprintf("%.1f,%.1f", xOf(h.Hops), y(series.value(h.Percentiles))))
		}
		s.raw(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", series.color, strings.Join(points, " "))
		for _, h := range p.set.Measurement.ByHops {
			s.raw(`<circle cx="%.1f" cy="%.1f" r="%d" fill="%s"><title>`, xOf(h.Hops), y(series.value(h.Percentiles)), markerRadius, series.color)
			s.escaped(fmt.Sprintf("%s, %d hops: %s ms (%d messages)", p.name, h.Hops, formatMs(series.value(h.Percentiles)), h.Count))
			s.raw("</title></circle>\n")
		}
	}
}

// frame is the layout of a plot of panels side by side.
type frame struct{ innerHeight, panelWidth float64 }

func newFrame(panels int) frame {
	return frame{
		innerHeight: float64(plotHeight - plotTop - plotBottom),
		panelWidth:  (float64(plotWidth-plotLeft-plotRight) - float64(panelGap*(panels-1))) / float64(panels),
	}
}

// left is the x of panel i's left edge.
func (f frame) left(i int) float64 { return float64(plotLeft) + float64(i)*(f.panelWidth+panelGap) }

// open starts a plot: the svg element, a white background and the title.
func (s *svgWriter) open(title string) {
	s.raw(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, plotHeight, plotWidth, plotHeight)
	s.raw(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	s.text(plotWidth/2, 22, "middle", `font-size="15" font-weight="bold"`, title)
}

// yLabel is the y axis's label, once, left of the first panel.
func (s *svgWriter) yLabel(label string, f frame) {
	s.raw(`<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">%s</text>`+"\n",
		float64(plotTop)+f.innerHeight/2, float64(plotTop)+f.innerHeight/2, label)
}

// svgWriter builds an SVG document; text goes through XML escaping.
type svgWriter struct{ strings.Builder }

func (s *svgWriter) raw(format string, args ...any) { fmt.Fprintf(&s.Builder, format, args...) }

func (s *svgWriter) escaped(text string) {
	_ = xml.EscapeText(&s.Builder, []byte(text)) // a strings.Builder does not fail
}

// text writes a text element at (x, y); attributes are extra, trusted attributes.
func (s *svgWriter) text(x, y float64, anchor, attributes, text string) {
	s.raw(`<text x="%.1f" y="%.1f" text-anchor="%s"`, x, y, anchor)
	if attributes != "" {
		s.raw(" %s", attributes)
	}
	s.raw(">")
	s.escaped(text)
	s.raw("</text>\n")
}

// niceScale returns a y axis top at least top and its grid step: 1, 2 or 5
// times a power of ten, about five steps to the top.
func niceScale(top float64) (yMax, step float64) {
	if top <= 0 || math.IsNaN(top) {
		return 1, 0.2
	}
	raw := top / 5
	power := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * power
	for _, m := range []float64{1, 2, 5} {
		if m*power >= raw {
			step = m * power
			break
		}
	}
	return math.Ceil(top/step) * step, step
}

// trimFloat writes an axis label to at most three decimals, without useless
// zeros: 0, 5, 2.5, 0.2.
func trimFloat(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
