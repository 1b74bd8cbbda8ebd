package messaging

import (
	"context"
	"math"
	"time"
)

// Schedule paces a publisher: total messages at rate per second, the i-th
// (from 0) due at i/rate after the start, so that after any whole second
// exactly rate messages are due. A publisher that wakes on a ticker sends,
// at each tick, the messages due by then that it has not sent yet.
type Schedule struct {
	rate  float64 // messages per second
	total int
}

// NewSchedule is the schedule of rate messages per second for duration.
func NewSchedule(rate float64, duration time.Duration) Schedule {
	return Schedule{rate: rate, total: int(math.Floor(rate * duration.Seconds()))}
}

// DueBy is how many messages are due elapsed after the start: every i with
// i/rate ≤ elapsed, at most total.
func (s Schedule) DueBy(elapsed time.Duration) int {
	if elapsed < 0 || s.rate <= 0 {
		return 0
	}
	// The small epsilon keeps a message due exactly at elapsed from being
	// lost to float rounding (3·(1/3) < 1).
	due := int(math.Floor(s.rate*elapsed.Seconds()+1e-9)) + 1
	return min(due, s.total)
}

// Lag is how far the publisher is behind when it has sent sent messages
// elapsed after the start: the time since the first unsent message was due,
// or 0 when none is due yet.
func (s Schedule) Lag(sent int, elapsed time.Duration) time.Duration {
	if sent >= s.total || s.rate <= 0 {
		return 0
	}
	dueAt := time.Duration(float64(sent) / s.rate * float64(time.Second))
	return max(0, elapsed-dueAt)
}

// PacingReport says how a paced publish went.
type PacingReport struct {
	Target    float64       `json:"target_per_s"`
	Sent      int           `json:"sent"`
	Elapsed   time.Duration `json:"elapsed_ns"`   // from the start to the last send
	MaxLag    time.Duration `json:"max_lag_ns"`   // the worst lag seen at a tick, before its sends
	Scheduled time.Duration `json:"scheduled_ns"` // when the last message was due
	// Abandoned is set when the publisher stopped before the end of the
	// schedule because it had fallen too far behind.
	Abandoned bool `json:"abandoned,omitempty"`
}

// Achieved is the rate the publisher really sent at: messages per second
// from the start to the last send. A schedule that sends its first message
// at once and its last at (n−1)/rate has sent n messages in n/rate seconds,
// so that is the span it is measured over, with the last send's lateness
// added. A publish abandoned before its end sent over the time it ran.
func (r PacingReport) Achieved() float64 {
	if r.Sent == 0 || r.Target <= 0 {
		return 0
	}
	if r.Abandoned {
		return float64(r.Sent) / r.Elapsed.Seconds()
	}
	span := time.Duration(float64(r.Sent)/r.Target*float64(time.Second)) + max(0, r.Elapsed-r.Scheduled)
	return float64(r.Sent) / span.Seconds()
}

// KeptUp reports whether the publisher held its schedule: it sent every
// message at 98 % of the target rate or better, and never fell more than
// lagLimit behind.
func (r PacingReport) KeptUp(lagLimit time.Duration) bool {
	return r.Sent > 0 && !r.Abandoned && r.Achieved() >= 0.98*r.Target && r.MaxLag <= lagLimit
}

// PublishPaced sends sched's messages, made by next, on a ticker: at
// each tick it sends every message due by then, so a late tick is made up
// at the next and the rate holds while the publisher can keep up; how far
// it fell behind is in the report. Once it is more than abandonLag behind
// (when abandonLag > 0) it stops: the rate has failed, and publishing on
// would only pile up a backlog that the broker takes minutes to drain
// before the next trial can start.
func PublishPaced(ctx context.Context, send func(ctx context.Context, routingKey string, m Message) error, sched Schedule, tick, abandonLag time.Duration, start time.Time,
	next func(i int) (routingKey string, m Message),
) (PacingReport, error) {
	report := PacingReport{Target: sched.rate}
	if sched.total == 0 {
		return report, nil
	}
	report.Scheduled = time.Duration(float64(sched.total-1) / sched.rate * float64(time.Second))
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		elapsed := time.Since(start)
		report.MaxLag = max(report.MaxLag, sched.Lag(report.Sent, elapsed))
		for due := sched.DueBy(elapsed); report.Sent < due; report.Sent++ {
			// A send the broker holds up can leave it far behind within one tick.
			if abandonLag > 0 && sched.Lag(report.Sent, time.Since(start)) > abandonLag {
				report.Elapsed, report.Abandoned = time.Since(start), true
				report.MaxLag = max(report.MaxLag, sched.Lag(report.Sent, report.Elapsed))
				return report, nil
			}
			key, m := next(report.Sent)
			if err := send(ctx, key, m); err != nil {
				report.Elapsed = time.Since(start)
				return report, err
			}
		}
		if report.Sent >= sched.total {
			report.Elapsed = time.Since(start)
			return report, nil
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			report.Elapsed = time.Since(start)
			return report, context.Cause(ctx)
		}
	}
}
