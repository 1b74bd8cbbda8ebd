package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
)

// reportFixture is a run of four messages: one on time, one late, one early
// and duplicated, and one that never came.
func reportFixture() (time.Time, []sentMessage, []messaging.Arrival, []messaging.Arrival) {
	start := time.Unix(1000, 0)
	message := func(id string, delay time.Duration) messaging.Message {
		return messaging.Message{ID: id, PublishedAt: start, Delay: delay}
	}
	arrival := func(m messaging.Message, after time.Duration) messaging.Arrival {
		arrived := start.Add(after)
		return messaging.Arrival{Message: m, ArrivedAt: arrived, Lateness: arrived.Sub(m.Due())}
	}
	m1, m2, m3, m4 := message("r-1", 0), message("r-2", 3*time.Second), message("r-3", 5*time.Second), message("r-4", 13*time.Second)
	sent := []sentMessage{
		{Label: "m1", Message: m1, RoutingKey: "demo.0.0.0.0", Ticks: 0},
		{Label: "m2", Message: m2, RoutingKey: "demo.0.0.1.1", Ticks: 3},
		{Label: "m3", Message: m3, RoutingKey: "demo.0.1.0.1", Ticks: 5},
		{Label: "m4", Message: m4, RoutingKey: "demo.1.1.0.1", Ticks: 13},
	}
	arrivals := []messaging.Arrival{
		arrival(m1, 4*time.Millisecond),
		arrival(m3, 4*time.Second),
		arrival(m2, 6*time.Second),
	}
	duplicates := []messaging.Arrival{arrival(m3, 5100*time.Millisecond)}
	return start, sent, arrivals, duplicates
}

func TestBuildRows(t *testing.T) {
	t.Parallel()
	start, sent, arrivals, duplicates := reportFixture()
	got := buildRows(start, sent, arrivals, duplicates)
	want := []row{
		{Label: "m1", Delay: 0, RoutingKey: "demo.0.0.0.0", Hops: 0, Arrived: 4 * time.Millisecond, Lateness: 4 * time.Millisecond, Copies: 1, Status: statusOnTime},
		{Label: "m2", Delay: 3 * time.Second, RoutingKey: "demo.0.0.1.1", Hops: 2, Arrived: 6 * time.Second, Lateness: 3 * time.Second, Copies: 1, Status: statusOnTime},
		{Label: "m3", Delay: 5 * time.Second, RoutingKey: "demo.0.1.0.1", Hops: 2, Arrived: 4 * time.Second, Lateness: -time.Second, Copies: 2, Status: statusEarly},
		{Label: "m4", Delay: 13 * time.Second, RoutingKey: "demo.1.1.0.1", Hops: 3, Status: statusMissing},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buildRows (-want +got):\n%s", diff)
	}
	wantProblems := []string{"m3 (delay 5s) arrived 1.000s early", "m3 (delay 5s) arrived 2 times", "m4 (delay 13s) never arrived"}
	if diff := cmp.Diff(wantProblems, problems(got)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestBuildRowsCountsHopsInTheSetsRadix checks that a message's hops are the
// digits of its ticks that are not 0 in the set's radix: in radix 16, 34
// ticks (2·16 + 2) pass two queues and 13 ticks one, where in binary they
// would pass two and three.
func TestBuildRowsCountsHopsInTheSetsRadix(t *testing.T) {
	t.Parallel()
	start := time.Unix(1000, 0)
	tests := map[string]struct {
		ticks uint64
		radix int
		want  int
	}{
		"0 in radix 16":   {0, 16, 0},
		"13 in radix 16":  {13, 16, 1},
		"16 in radix 16":  {16, 16, 1},
		"34 in radix 16":  {34, 16, 2},
		"255 in radix 16": {255, 16, 2},
		"255 in radix 4":  {255, 4, 4},
		"255 in radix 8":  {255, 8, 3},
		"34 in radix 2":   {34, 2, 2},
		"13 in radix 2":   {13, 2, 3},
		"13, radix zero":  {13, 0, 3},
		"63 in radix 2":   {63, 2, 6},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sent := []sentMessage{{Label: "m1", Message: messaging.Message{ID: "r-1", PublishedAt: start}, Ticks: test.ticks, Radix: test.radix}}
			if got := buildRows(start, sent, nil, nil)[0].Hops; got != test.want {
				t.Errorf("hops of %d ticks in radix %d = %d, want %d", test.ticks, test.radix, got, test.want)
			}
		})
	}
}

func TestProblemsNamesDuplicates(t *testing.T) {
	t.Parallel()
	rows := []row{
		{Label: "m1", Delay: time.Second, Copies: 1, Status: statusOnTime},
		{Label: "m2", Delay: 2 * time.Second, Copies: 3, Status: statusDuplicate},
	}
	if diff := cmp.Diff([]string{"m2 (delay 2s) arrived 3 times"}, problems(rows)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestRenderTable(t *testing.T) {
	t.Parallel()
	start, sent, arrivals, duplicates := reportFixture()
	var b strings.Builder
	if err := renderTable(&b, buildRows(start, sent, arrivals, duplicates)); err != nil {
		t.Fatal(err)
	}
	want := `  msg  delay   routing key  hops  arrived  lateness   status
   m1     0s  demo.0.0.0.0     0  +0.004s      +4ms       ok
   m2     3s  demo.0.0.1.1     2  +6.000s   +3000ms       ok
   m3     5s  demo.0.1.0.1     2  +4.000s   -1000ms    EARLY
   m4    13s  demo.1.1.0.1     3        -         -  MISSING
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("renderTable (-want +got):\n%s", diff)
	}
}

func TestRenderTimeline(t *testing.T) {
	t.Parallel()
	start, sent, arrivals, duplicates := reportFixture()
	var b strings.Builder
	if err := renderTimeline(&b, buildRows(start, sent, arrivals, duplicates), 14*time.Second, 40); err != nil {
		t.Fatal(err)
	}
	// 14s watched over at most 40 columns: half a second per column, drawn to 30
	// columns; the missing message ends at 14s.
	want := `timeline: one column = 500ms; '=' waiting, '|' due, '-' late, '*' arrived
m1  0s *
m2  3s ======|-----*
m3  5s ========* |  EARLY
m4 13s ==========================|=?  MISSING
       +---------+---------+---------+
       0s        5s        10s       15s
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("renderTimeline (-want +got):\n%s", diff)
	}
}

func TestColumnStep(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		span  time.Duration
		width int
		want  time.Duration
	}{
		"nothing":                   {0, 60, 10 * time.Millisecond},
		"exactly fits":              {60 * time.Second, 60, time.Second},
		"just over":                 {61 * time.Second, 60, 2 * time.Second},
		"sub-second":                {6200 * time.Millisecond, 60, 200 * time.Millisecond},
		"beyond the last nice step": {200 * time.Hour, 10, 20 * time.Hour},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := columnStep(test.span, test.width); got != test.want {
				t.Errorf("columnStep(%s, %d) = %s, want %s", test.span, test.width, got, test.want)
			}
		})
	}
}

func TestParseConfigFromTerraformOutput(t *testing.T) {
	t.Parallel()
	outputs := filepath.Join(t.TempDir(), "outputs.json")
	// As `terraform output -json` writes it for examples/demo.
	err := os.WriteFile(outputs, []byte(`{
  "bindings": {"sensitive": false, "type": "number", "value": 21},
  "ingest_exchange": {"sensitive": false, "type": "string", "value": "other.ingest"},
  "levels": {"sensitive": false, "type": "number", "value": 5},
  "resolution": {"sensitive": false, "type": "string", "value": "250ms"},
  "route_key": {"sensitive": false, "type": "string", "value": ""},
  "route_queue": {"sensitive": false, "type": "string", "value": "other.work"},
  "radix16": {"sensitive": false, "type": ["object", {}], "value": {
    "bindings": 50, "ingest_exchange": "demo16.ingest", "levels": 2, "max_delay": "4m15s", "radix": 16,
    "resolution": "1s", "route_key": "demo", "route_queue": "demo.work"}}
}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		want config
	}{
		"outputs replace the defaults": {
			args: []string{"-tf-output", outputs, "-delays", "0s, 1s,7.75s"},
			want: config{Exchange: "other.ingest", Queue: "other.work", Key: "", Levels: 5, Radix: 2, Resolution: 250 * time.Millisecond,
				Delays: []time.Duration{0, time.Second, 7750 * time.Millisecond}},
		},
		"an object output's attributes replace the defaults": {
			args: []string{"-tf-output", outputs, "-tf-set", "radix16", "-delays", "0s,34s,255s"},
			want: config{Exchange: "demo16.ingest", Queue: "demo.work", Key: "demo", Levels: 2, Radix: 16, Resolution: time.Second,
				Delays: []time.Duration{0, 34 * time.Second, 255 * time.Second}},
		},
		"explicit flags win over an object output": {
			args: []string{"-tf-output", outputs, "-tf-set", "radix16", "-radix", "4", "-levels", "3", "-delays", "63s"},
			want: config{Exchange: "demo16.ingest", Queue: "demo.work", Key: "demo", Levels: 3, Radix: 4, Resolution: time.Second,
				Delays: []time.Duration{63 * time.Second}},
		},
		"explicit flags win": {
			args: []string{"-tf-output", outputs, "-queue", "mine", "-levels", "6", "-delays", "1s"},
			want: config{Exchange: "other.ingest", Queue: "mine", Key: "", Levels: 6, Radix: 2, Resolution: 250 * time.Millisecond,
				Delays: []time.Duration{time.Second}},
		},
		"defaults match examples/demo": {
			args: []string{"-delays", "63s"},
			want: config{Exchange: "demo.ingest", Queue: "demo.work", Key: "demo", Levels: 6, Radix: 2, Resolution: time.Second,
				Delays: []time.Duration{63 * time.Second}},
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := parseConfig(append([]string{"-url", "amqp://x/"}, test.args...), &strings.Builder{})
			if err != nil {
				t.Fatal(err)
			}
			test.want.URL, test.want.Grace, test.want.Width = "amqp://x/", 10*time.Second, 68
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("parseConfig(%q) (-want +got):\n%s", test.args, diff)
			}
		})
	}
}

func TestParseConfigRefuses(t *testing.T) {
	t.Parallel()
	notOutputs := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(notOutputs, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	flat := filepath.Join(t.TempDir(), "flat.json")
	if err := os.WriteFile(flat, []byte(`{"levels": {"type": "number", "value": 2}, "empty": {"type": ["object", {}], "value": {}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		want string
	}{
		"delay beyond the set":   {[]string{"-delays", "64s"}, "-delays 1m4s with -levels 6 -radix 2 -resolution 1s"},
		"beyond radix 16":        {[]string{"-radix", "16", "-levels", "2", "-delays", "256s"}, "-delays 4m16s with -levels 2 -radix 16 -resolution 1s"},
		"radix 3":                {[]string{"-radix", "3"}, "radix"},
		"-tf-set alone":          {[]string{"-tf-set", "radix16"}, "-tf-set needs -tf-output"},
		"no such object output":  {[]string{"-tf-output", flat, "-tf-set", "radix16"}, `no output "radix16" (-tf-set)`},
		"not an object output":   {[]string{"-tf-output", flat, "-tf-set", "levels"}, `output "levels" is not an object`},
		"object output lacks":    {[]string{"-tf-output", flat, "-tf-set", "empty"}, `output "empty" has no ingest_exchange or levels`},
		"negative delay":         {[]string{"-delays", "-1s"}, "must not be negative"},
		"no delay":               {[]string{"-delays", " , "}, "no delay given"},
		"not a duration":         {[]string{"-delays", "5"}, `missing unit in duration "5"`},
		"outputs before apply":   {[]string{"-tf-output", notOutputs}, "no ingest_exchange or levels output"},
		"missing outputs file":   {[]string{"-tf-output", notOutputs + ".missing"}, "no such file"},
		"stray argument":         {[]string{"extra"}, `unexpected arguments ["extra"]`},
		"levels out of range":    {[]string{"-levels", "0"}, "levels"},
		"resolution below 1ms":   {[]string{"-resolution", "100us"}, "resolution"},
		"key too long for 255 B": {[]string{"-key", strings.Repeat("k", 250)}, "key"},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig(test.args, &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Errorf("parseConfig(%q) = %v, want an error containing %q", test.args, err, test.want)
			}
		})
	}
}

// TestMarkdownReport checks the results file names its provenance and holds
// the printed report unchanged.
func TestMarkdownReport(t *testing.T) {
	t.Parallel()
	provenance := machine.Provenance{Commit: "0123456789ab", Date: time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC),
		CPUs: 2, OS: "linux", Arch: "amd64", Go: "go1.26.8", RabbitMQ: "3.10.8", Terraform: "1.11.4"}
	cfg := config{Exchange: "demo16.ingest", Queue: "demo.work", Key: "demo", Levels: 2, Radix: 16, Resolution: time.Second,
		Delays: []time.Duration{0, time.Second}}
	report := "  msg  delay\n  m01     0s\n\nPASS: every message arrived once, none early\n"
	got := markdownReport(provenance, cfg, report)
	for _, want := range []string{
		provenance.Markdown(),
		"# `make demo`: delayed messages through examples/demo, radix 16\n",
		"2 messages published with publisher confirms to `demo16.ingest` (levels 2, radix 16, resolution 1s, key `demo`)",
		"```text\n" + report + "```\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdownReport lacks %q:\n%s", want, got)
		}
	}
}
