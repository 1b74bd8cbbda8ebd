package messaging

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestScheduleDueBy checks how many messages a schedule has due at each
// moment: from the first at once to the total, none before the start.
func TestScheduleDueBy(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		rate              float64
		duration, elapsed time.Duration
		want              int
	}{
		"the first message is due at once":        {rate: 1000, duration: time.Second, elapsed: 0, want: 1},
		"before the start nothing is due":         {rate: 1000, duration: time.Second, elapsed: -time.Millisecond, want: 0},
		"one per millisecond at 1000/s":           {rate: 1000, duration: time.Second, elapsed: 10 * time.Millisecond, want: 11},
		"just before the next one is due":         {rate: 1000, duration: time.Second, elapsed: 10*time.Millisecond + 999*time.Microsecond, want: 11},
		"a third of a second at 3/s":              {rate: 3, duration: 10 * time.Second, elapsed: time.Second / 3, want: 2},
		"never more than the total":               {rate: 1000, duration: time.Second, elapsed: time.Hour, want: 1000},
		"the last message is due at (n−1)/rate":   {rate: 1000, duration: time.Second, elapsed: 999 * time.Millisecond, want: 1000},
		"a fractional rate rounds the total down": {rate: 2.5, duration: time.Second, elapsed: time.Hour, want: 2},
		"zero rate sends nothing":                 {rate: 0, duration: time.Second, elapsed: time.Second, want: 0},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := NewSchedule(test.rate, test.duration).DueBy(test.elapsed); got != test.want {
				t.Errorf("dueBy(%s) at %g/s for %s = %d, want %d", test.elapsed, test.rate, test.duration, got, test.want)
			}
		})
	}
}

// TestScheduleEverySecondHoldsRate checks the pacing property: in any whole
// second of the schedule, exactly rate messages fall due.
func TestScheduleEverySecondHoldsRate(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{1, 7, 500, 1000, 8000} {
		s := NewSchedule(rate, 10*time.Second)
		for start := time.Duration(0); start+time.Second <= 9*time.Second; start += 137 * time.Millisecond {
			// Messages due in (start, start+1s].
			if got := s.DueBy(start+time.Second) - s.DueBy(start); got != int(rate) {
				t.Fatalf("rate %g: %d messages due in the second after %s, want %g", rate, got, start, rate)
			}
		}
	}
}

func TestScheduleLag(t *testing.T) {
	t.Parallel()
	s := NewSchedule(1000, time.Second)
	tests := map[string]struct {
		sent    int
		elapsed time.Duration
		want    time.Duration
	}{
		"on time":                          {sent: 10, elapsed: 10 * time.Millisecond, want: 0},
		"ahead is not negative":            {sent: 20, elapsed: 10 * time.Millisecond, want: 0},
		"message 10 was due 40 ms ago":     {sent: 10, elapsed: 50 * time.Millisecond, want: 40 * time.Millisecond},
		"everything sent: no lag any more": {sent: 1000, elapsed: time.Hour, want: 0},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := s.Lag(test.sent, test.elapsed); got != test.want {
				t.Errorf("lag(%d, %s) = %s, want %s", test.sent, test.elapsed, got, test.want)
			}
		})
	}
}

func TestPacingReportAchievedAndKeptUp(t *testing.T) {
	t.Parallel()
	const lagLimit = 500 * time.Millisecond
	tests := map[string]struct {
		report       PacingReport
		wantAchieved float64
		wantKeptUp   bool
	}{
		"on schedule": {
			report:       PacingReport{Target: 1000, Sent: 30000, Scheduled: 29999 * time.Millisecond, Elapsed: 29999 * time.Millisecond, MaxLag: 12 * time.Millisecond},
			wantAchieved: 1000, wantKeptUp: true,
		},
		"finished 3 s late": {
			report:       PacingReport{Target: 1000, Sent: 30000, Scheduled: 29999 * time.Millisecond, Elapsed: 32999 * time.Millisecond, MaxLag: 3 * time.Second},
			wantAchieved: 30000.0 / 33, wantKeptUp: false,
		},
		"on rate overall, but once far behind": {
			report:       PacingReport{Target: 1000, Sent: 30000, Scheduled: 29999 * time.Millisecond, Elapsed: 29999 * time.Millisecond, MaxLag: 800 * time.Millisecond},
			wantAchieved: 1000, wantKeptUp: false,
		},
		"nothing sent": {report: PacingReport{Target: 1000}, wantAchieved: 0, wantKeptUp: false},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := test.report.Achieved(); fmt.Sprintf("%.3f", got) != fmt.Sprintf("%.3f", test.wantAchieved) {
				t.Errorf("achieved() = %.3f, want %.3f", got, test.wantAchieved)
			}
			if got := test.report.KeptUp(lagLimit); got != test.wantKeptUp {
				t.Errorf("keptUp() = %v, want %v", got, test.wantKeptUp)
			}
		})
	}
}

// TestPublishPacedSpreadsMessages runs the pacing loop against a recorder:
// no message is sent before it is due (so not all at once), all are sent,
// in order, and the report says so. How soon after it is due each went out
// is the machine's pace, which the test logs.
func TestPublishPacedSpreadsMessages(t *testing.T) {
	t.Parallel()
	const rate, duration, tick = 2000.0, 300 * time.Millisecond, 10 * time.Millisecond
	sched := NewSchedule(rate, duration)
	var sentAt []time.Duration
	var ids []string
	start := time.Now()
	send := func(_ context.Context, routingKey string, m Message) error {
		sentAt = append(sentAt, time.Since(start))
		ids = append(ids, m.ID+"/"+routingKey)
		return nil
	}
	report, err := PublishPaced(context.Background(), send, sched, tick, 0, start, func(i int) (string, Message) {
		return fmt.Sprintf("key%d", i), Message{ID: fmt.Sprint(i)}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sentAt) != sched.total || report.Sent != sched.total {
		t.Fatalf("sent %d (report %d), want %d", len(sentAt), report.Sent, sched.total)
	}
	for i, at := range sentAt {
		if due := time.Duration(float64(i) / rate * float64(time.Second)); at < due {
			t.Fatalf("message %d sent at %s, before it was due at %s", i, at, due)
		}
		if want := fmt.Sprintf("%d/key%d", i, i); ids[i] != want {
			t.Fatalf("message %d sent as %s, want %s", i, ids[i], want)
		}
	}
	t.Logf("messages sent from %s to %s, scheduled over %s; the latest %s after it was due", sentAt[0], sentAt[len(sentAt)-1], duration, report.MaxLag)
	if report.Elapsed < report.Scheduled || report.Scheduled != time.Duration(float64(sched.total-1)/rate*float64(time.Second)) {
		t.Errorf("report %+v: elapsed before the last message was due, or wrong schedule", report)
	}
}

// TestPublishPacedReportsSlowPublisher checks that a publisher slower than
// the schedule is reported, not hidden: every message still goes out, late.
func TestPublishPacedReportsSlowPublisher(t *testing.T) {
	t.Parallel()
	sched := NewSchedule(1000, 50*time.Millisecond)
	send := func(context.Context, string, Message) error {
		time.Sleep(2 * time.Millisecond) // 500/s at best
		return nil
	}
	report, err := PublishPaced(context.Background(), send, sched, 5*time.Millisecond, 0, time.Now(), func(int) (string, Message) {
		return "k", Message{ID: "m"}
	})
	if err != nil {
		t.Fatal(err)
	}
	if report.Sent != sched.total {
		t.Errorf("sent %d, want %d", report.Sent, sched.total)
	}
	if report.Achieved() > 600 || report.KeptUp(20*time.Millisecond) {
		t.Errorf("a 500/s publisher asked for 1000/s: achieved %.0f/s, kept up %v; want it reported as behind", report.Achieved(), report.KeptUp(20*time.Millisecond))
	}
}

// TestPublishPacedAbandonsWhenFarBehind checks that a publisher that falls
// further behind than the abandon lag stops there, says so, and does not
// count as having kept up, while the same publisher without an abandon lag
// sends everything.
func TestPublishPacedAbandonsWhenFarBehind(t *testing.T) {
	t.Parallel()
	sched := NewSchedule(1000, time.Second)
	send := func(context.Context, string, Message) error {
		time.Sleep(2 * time.Millisecond) // 500/s at best: 40 ms behind after 80 ms
		return nil
	}
	next := func(int) (string, Message) { return "k", Message{ID: "m"} }
	report, err := PublishPaced(context.Background(), send, sched, 5*time.Millisecond, 40*time.Millisecond, time.Now(), next)
	if err != nil {
		t.Fatal(err)
	}
	if !report.Abandoned || report.Sent == 0 || report.Sent >= sched.total/2 || report.MaxLag <= 40*time.Millisecond {
		t.Errorf("report %+v; want it abandoned after a few sends, once more than 40ms behind", report)
	}
	if report.KeptUp(time.Hour) || report.Achieved() > 600 {
		t.Errorf("an abandoned publish counts as having kept up, or at %.0f/s: %+v", report.Achieved(), report)
	}
}

func TestPublishPacedStopsOnError(t *testing.T) {
	t.Parallel()
	refused := errors.New("refused")
	calls := 0
	send := func(context.Context, string, Message) error {
		calls++
		if calls == 3 {
			return refused
		}
		return nil
	}
	report, err := PublishPaced(context.Background(), send, NewSchedule(1000, time.Second), time.Millisecond, 0, time.Now(), func(int) (string, Message) {
		return "k", Message{ID: "m"}
	})
	if !errors.Is(err, refused) || report.Sent != 2 {
		t.Errorf("publishPaced = %d sent, %v; want 2 sent and the send's error", report.Sent, err)
	}
}

func TestPublishPacedStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	send := func(context.Context, string, Message) error { return nil }
	sched, start := NewSchedule(100, time.Hour), time.Now()
	report, err := PublishPaced(ctx, send, sched, 5*time.Millisecond, 0, start, func(int) (string, Message) {
		return "k", Message{ID: "m"}
	})
	// However slow the machine, it sent only what was due by its return, an hour early.
	if due := sched.DueBy(time.Since(start)); !errors.Is(err, context.DeadlineExceeded) || report.Sent == 0 || report.Sent > due {
		t.Errorf("publishPaced = %d sent, %v; want the first, at most the %d due, and the deadline", report.Sent, err, due)
	}
}
