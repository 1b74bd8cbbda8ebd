package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// status is the verdict on one message.
type status string

const (
	statusOnTime    status = "ok"
	statusEarly     status = "EARLY"
	statusMissing   status = "MISSING"
	statusDuplicate status = "DUPLICATE"
)

// row is one message of the report.
type row struct {
	Label      string
	Delay      time.Duration
	RoutingKey string
	Hops       int           // TTL queues the message passes: the nonzero digits of its ticks
	Arrived    time.Duration // since the run started; meaningful when Status is not missing
	Lateness   time.Duration
	Copies     int // deliveries; more than one is a duplicate
	Status     status
}

// sentMessage is a published message with the routing key it was sent with.
type sentMessage struct {
	Label      string
	Message    messaging.Message
	RoutingKey string
	Ticks      uint64
	Radix      int // of the set; zero means 2
}

// buildRows pairs every sent message with its arrivals, in the order sent.
// Times are offsets from start, the moment the run began publishing.
func buildRows(start time.Time, sent []sentMessage, arrivals, duplicates []messaging.Arrival) []row {
	first := make(map[string]messaging.Arrival, len(arrivals))
	for _, a := range arrivals {
		first[a.Message.ID] = a
	}
	copies := make(map[string]int, len(duplicates))
	for _, d := range duplicates {
		copies[d.Message.ID]++
	}
	rows := make([]row, 0, len(sent))
	for _, s := range sent {
		r := row{
			Label:      s.Label,
			Delay:      s.Message.Delay,
			RoutingKey: s.RoutingKey,
			Hops:       topology.Hops(s.Ticks, s.Radix),
			Status:     statusMissing,
		}
		if a, ok := first[s.Message.ID]; ok {
			r.Arrived = a.ArrivedAt.Sub(start)
			r.Lateness = a.Lateness
			r.Copies = 1 + copies[s.Message.ID]
			switch {
			case a.Early():
				r.Status = statusEarly
			case r.Copies > 1:
				r.Status = statusDuplicate
			default:
				r.Status = statusOnTime
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// problems lists what makes the run fail: early, missing and duplicated
// messages; a message both early and duplicated is named twice.
func problems(rows []row) []string {
	var out []string
	for _, r := range rows {
		switch r.Status {
		case statusEarly:
			out = append(out, fmt.Sprintf("%s (delay %s) arrived %s early", r.Label, r.Delay, formatOffset(-r.Lateness)))
		case statusMissing:
			out = append(out, fmt.Sprintf("%s (delay %s) never arrived", r.Label, r.Delay))
		}
		if r.Copies > 1 {
			out = append(out, fmt.Sprintf("%s (delay %s) arrived %d times", r.Label, r.Delay, r.Copies))
		}
	}
	return out
}

// renderTable writes one line per message: what was asked and what happened.
func renderTable(w io.Writer, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "msg\tdelay\trouting key\thops\tarrived\tlateness\tstatus\t")
	for _, r := range rows {
		arrived, lateness := "-", "-"
		if r.Status != statusMissing {
			arrived, lateness = "+"+formatOffset(r.Arrived), formatLateness(r.Lateness)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", r.Label, r.Delay, r.RoutingKey, r.Hops, arrived, lateness, r.Status)
	}
	return tw.Flush()
}

// niceSteps are the time steps a timeline column may stand for.
var niceSteps = []time.Duration{
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute,
	5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour,
}

// columnStep is the smallest nice step that fits span into width columns.
func columnStep(span time.Duration, width int) time.Duration {
	for _, step := range niceSteps {
		if span <= step*time.Duration(width) {
			return step
		}
	}
	return (span + time.Duration(width) - 1) / time.Duration(width)
}

// axisEvery is how many columns apart the axis labels are.
const axisEvery = 10

// renderTimeline draws a bar per message: '=' waiting, '|' due, '-' late, '*'
// arrived; '?' at watched (how long the run waited) for one that never came.
func renderTimeline(w io.Writer, rows []row, watched time.Duration, width int) error {
	if len(rows) == 0 {
		return nil
	}
	width = max(width, axisEvery)
	var span time.Duration
	labelWidth, delayWidth := 0, 0
	for _, r := range rows {
		span = max(span, r.Delay)
		if r.Status == statusMissing {
			span = max(span, watched)
		} else {
			span = max(span, r.Arrived)
		}
		labelWidth = max(labelWidth, len(r.Label))
		delayWidth = max(delayWidth, len(r.Delay.String()))
	}
	step := columnStep(span, width)
	// Draw only as far as the run went, to the next axis label.
	used := int((span + step - 1) / step)
	width = min(width, (used/axisEvery+1)*axisEvery)
	column := func(d time.Duration) int { return min(int((d+step/2)/step), width) }

	var b strings.Builder
	fmt.Fprintf(&b, "timeline: one column = %s; '=' waiting, '|' due, '-' late, '*' arrived\n", step)
	indent := labelWidth + 1 + delayWidth + 1
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s %*s ", labelWidth, r.Label, delayWidth, r.Delay)
		due := column(r.Delay)
		end := max(column(watched), due+1)
		if r.Status != statusMissing {
			end = column(r.Arrived)
		}
		line := make([]byte, max(due, end)+1)
		for i := range line {
			line[i] = ' '
		}
		for i := 0; i < min(due, end); i++ {
			line[i] = '='
		}
		line[due] = '|'
		if r.Status == statusMissing {
			for i := due + 1; i < end; i++ {
				line[i] = '='
			}
			line[end] = '?'
		} else {
			for i := due + 1; i < end; i++ {
				line[i] = '-'
			}
			line[end] = '*'
		}
		fmt.Fprintf(&b, "%s", strings.TrimRight(string(line), " "))
		if r.Status != statusOnTime {
			fmt.Fprintf(&b, "  %s", r.Status)
		}
		b.WriteByte('\n')
	}
	axis, labels := []byte(strings.Repeat("-", width+1)), []byte(strings.Repeat(" ", width+axisEvery))
	for c := 0; c <= width; c += axisEvery {
		axis[c] = '+'
		copy(labels[c:], (time.Duration(c) * step).String())
	}
	fmt.Fprintf(&b, "%s%s\n%s%s\n", strings.Repeat(" ", indent), axis, strings.Repeat(" ", indent), strings.TrimRight(string(labels), " "))
	_, err := io.WriteString(w, b.String())
	return err
}

// formatOffset writes a time offset in seconds with millisecond precision,
// so columns of offsets line up: "13.004s".
func formatOffset(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}

// formatLateness writes a lateness in milliseconds with its sign: "+4ms", "-12ms".
func formatLateness(d time.Duration) string {
	return fmt.Sprintf("%+dms", d.Round(time.Millisecond).Milliseconds())
}
