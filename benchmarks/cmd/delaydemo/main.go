package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// config is everything a run needs.
type config struct {
	URL          string
	Exchange     string
	Queue        string
	Key          string
	Levels       int
	Radix        int
	Resolution   time.Duration
	Delays       []time.Duration
	Grace        time.Duration
	Width        int
	DeclareQueue bool
	// Markdown, when set, is a results file the report is also written to,
	// with the provenance of the run; Terraform is the binary whose version
	// it names.
	Markdown  string
	Terraform string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its exit code returned: 0 all arrived on time, 1 a
// message was early, duplicated or missing, 2 the demo could not run.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stderr)
	return results.Main("delaydemo", stderr, err, func(ctx context.Context) (int, error) { return demo(ctx, cfg, stdout) })
}

func parseConfig(args []string, stderr io.Writer) (config, error) {
	flags := flag.NewFlagSet("delaydemo", flag.ContinueOnError)
	flags.SetOutput(stderr)
	cfg := config{}
	flags.StringVar(&cfg.URL, "url", messaging.URLFromEnv(), "AMQP URL of the broker (default from $"+messaging.URLEnv+")")
	flags.StringVar(&cfg.Exchange, "exchange", "demo.ingest", "the set's ingest exchange (output ingest_exchange)")
	flags.StringVar(&cfg.Queue, "queue", "demo.work", "the queue a route of the set delivers to (output route_queue)")
	flags.StringVar(&cfg.Key, "key", "demo", "the message key the route takes (output route_key)")
	flags.IntVar(&cfg.Levels, "levels", 6, "the set's levels (output levels)")
	flags.IntVar(&cfg.Radix, "radix", topology.DefaultRadix, "the set's radix: its delay digits are in this base (output radix)")
	flags.DurationVar(&cfg.Resolution, "resolution", time.Second, "the set's resolution (output resolution)")
	delays := flags.String("delays", "0s,1s,2s,3s,5s,8s,13s,21s,34s", "comma-separated delays to publish, one message each")
	flags.DurationVar(&cfg.Grace, "grace", 10*time.Second, "how long to wait for stragglers after the longest delay")
	flags.IntVar(&cfg.Width, "width", 68, "columns of the timeline")
	flags.BoolVar(&cfg.DeclareQueue, "declare-queue", false, "declare -queue (durable, classic) and exit; the route's queue must exist before terraform apply binds to it")
	flags.StringVar(&cfg.Markdown, "markdown", "", "also write the report, with the commit, machine and versions it ran on, to this Markdown `file` (make demo DEMO_MARKDOWN=benchmarks/demo.md)")
	flags.StringVar(&cfg.Terraform, "terraform", "", "the terraform `binary` that applied the set, for the version -markdown names")
	tfOutput := flags.String("tf-output", "", "a `file` of terraform output -json (\"-\" for stdin) to take ingest_exchange, levels, radix, resolution, route_queue and route_key from; explicit flags win")
	tfSet := flags.String("tf-set", "", "take the -tf-output values from the attributes of this object `output` instead of from top-level outputs (make demo: binary, radix16)")
	if err := flags.Parse(args); err != nil {
		return cfg, err
	}
	if flags.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	explicit := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if *tfSet != "" && *tfOutput == "" {
		return cfg, errors.New("-tf-set needs -tf-output")
	}
	if *tfOutput != "" {
		if err := applyTerraformOutput(flags, *tfOutput, *tfSet, explicit); err != nil {
			return cfg, err
		}
	}
	var err error
	if cfg.Delays, err = parseDelays(*delays); err != nil {
		return cfg, err
	}
	if cfg.DeclareQueue {
		return cfg, nil
	}
	for _, d := range cfg.Delays {
		if _, err := cfg.set().RoutingKey(cfg.Key, d); err != nil {
			return cfg, fmt.Errorf("-delays %s with -levels %d -radix %d -resolution %s: %w", d, cfg.Levels, cfg.Radix, cfg.Resolution, err)
		}
	}
	return cfg, nil
}

// set is the delay queue set the demo publishes to, with its key format.
func (cfg config) set() messaging.Set {
	return messaging.Set{IngestExchange: cfg.Exchange, Levels: cfg.Levels, Radix: cfg.Radix, Resolution: cfg.Resolution}
}

func parseDelays(list string) ([]time.Duration, error) {
	delays, err := results.List(list, time.ParseDuration)
	if err != nil {
		return nil, fmt.Errorf("-delays: %w", err)
	}
	if len(delays) == 0 {
		return nil, errors.New("-delays: no delay given")
	}
	return delays, nil
}

// outputFlags are the flags -tf-output sets, by the output of
// `terraform output -json` (or attribute of an object output) that holds each.
var outputFlags = map[string]string{"ingest_exchange": "exchange", "levels": "levels", "radix": "radix",
	"resolution": "resolution", "route_queue": "queue", "route_key": "key"}

// applyTerraformOutput sets the flags that the outputs hold, except those
// given explicitly: the top-level outputs, or the attributes of output set.
func applyTerraformOutput(flags *flag.FlagSet, file, set string, explicit map[string]bool) error {
	read := os.ReadFile
	if file == "-" {
		read = func(string) ([]byte, error) { return io.ReadAll(os.Stdin) }
	}
	data, err := read(file)
	if err != nil {
		return fmt.Errorf("-tf-output: %w", err)
	}
	var outputs map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &outputs); err != nil {
		return fmt.Errorf("-tf-output %s is not `terraform output -json`: %w", file, err)
	}
	values := map[string]json.RawMessage{}
	if set == "" {
		for name, output := range outputs {
			values[name] = output.Value
		}
	} else if output, ok := outputs[set]; !ok {
		return fmt.Errorf("-tf-output %s has no output %q (-tf-set): has terraform apply run?", file, set)
	} else if err := json.Unmarshal(output.Value, &values); err != nil {
		return fmt.Errorf("-tf-output %s: output %q is not an object of a set's values: %w", file, set, err)
	}
	missing := func(name string) bool { return values[name] == nil || string(values[name]) == "null" }
	if missing("ingest_exchange") || missing("levels") {
		if set != "" {
			return fmt.Errorf("-tf-output %s: output %q has no ingest_exchange or levels", file, set)
		}
		return fmt.Errorf("-tf-output %s has no ingest_exchange or levels output: has terraform apply run?", file)
	}
	for output, name := range outputFlags {
		var value any
		if explicit[name] || json.Unmarshal(values[output], &value) != nil || value == nil {
			continue
		}
		if err := flags.Set(name, fmt.Sprint(value)); err != nil {
			return fmt.Errorf("-tf-output: %s: %w", output, err)
		}
	}
	return nil
}

// syncWriter serialises lines written from the consumer's goroutine and main.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) printf(format string, args ...any) { fmt.Fprintf(s, format, args...) }

func demo(ctx context.Context, cfg config, stdout io.Writer) (int, error) {
	conn, err := messaging.Dial(cfg.URL, 10*time.Second)
	if err != nil {
		return 2, err
	}
	defer func() { _ = conn.Close() }()
	out := &syncWriter{w: stdout}
	if done, err := prepareQueue(conn, cfg, out); done || err != nil {
		return results.Failed(err)
	}
	runID := fmt.Sprintf("delaydemo-%d-", time.Now().UnixNano())
	labels, batch := batchOf(cfg, runID)
	var start time.Time
	var startOnce sync.Once
	startedAt := func() time.Time { startOnce.Do(func() { start = time.Now() }); return start }
	consumer, err := messaging.NewConsumer(conn, cfg.Queue, messaging.ConsumerOptions{
		IDPrefix: runID, OnArrival: printArrival(out, labels, startedAt),
	})
	if err != nil {
		return 2, err
	}
	defer func() { _ = consumer.Close() }()
	publisher, err := messaging.NewPublisher(conn, cfg.set())
	if err != nil {
		return 2, err
	}
	defer func() { _ = publisher.Close() }()
	var longest time.Duration
	for _, d := range cfg.Delays {
		longest = max(longest, d)
	}
	deadline := longest + cfg.Grace
	ctx, cancel := context.WithTimeout(ctx, deadline+10*time.Second)
	defer cancel()
	out.printf("publishing %d messages to %q (levels %d, radix %d, resolution %s, key %q); consuming %q, waiting up to %s\n",
		len(batch), cfg.Exchange, cfg.Levels, cfg.Radix, cfg.Resolution, cfg.Key, cfg.Queue, deadline)
	startedAt()
	published, err := publisher.PublishBatch(ctx, batch)
	if err != nil {
		return 2, err
	}
	out.printf("  +%-8s all %d confirmed by the broker\n", formatOffset(time.Since(startedAt())), len(published))
	sent, ids, err := sentMessages(cfg, published, labels)
	if err != nil {
		return 2, err
	}
	if err := waitForArrivals(ctx, consumer, ids, startedAt().Add(deadline)); err != nil {
		return 2, err
	}
	rows := buildRows(startedAt(), sent, consumer.Arrivals(), consumer.Duplicates())
	report, code, err := reportOf(rows, consumer, time.Since(startedAt()), cfg.Width)
	if err != nil {
		return 2, err
	}
	out.printf("\n%s", report)
	if cfg.Markdown != "" {
		version, _ := conn.Properties["version"].(string)
		provenance, err := results.Provenance(ctx, "", broker.NodeInfo{RabbitMQVersion: version}, cfg.Terraform)
		if err != nil {
			return 2, err
		}
		if err := results.WriteFile(cfg.Markdown, markdownReport(provenance, cfg, report), out); err != nil {
			return 2, err
		}
	}
	return code, nil
}

// prepareQueue declares the route's queue under -declare-queue (then done), or
// checks it and purges an interrupted run's leftovers, which would count as foreign.
func prepareQueue(conn *amqp.Connection, cfg config, out *syncWriter) (done bool, err error) {
	if cfg.DeclareQueue {
		if err := messaging.DeclareQueue(conn, cfg.Queue); err != nil {
			return true, err
		}
		out.printf("declared queue %q\n", cfg.Queue)
		return true, nil
	}
	if err := messaging.CheckQueue(conn, cfg.Queue); err != nil {
		return false, fmt.Errorf("%w; declare it with -declare-queue before terraform apply routes to it", err)
	}
	if purged, err := messaging.PurgeQueue(conn, cfg.Queue); err != nil {
		return false, err
	} else if purged > 0 {
		out.printf("purged %d leftover messages from %q\n", purged, cfg.Queue)
	}
	return false, nil
}

// batchOf is the run's messages, one per delay, and their labels by id.
func batchOf(cfg config, runID string) (map[string]string, []messaging.Delayed) {
	labels := map[string]string{}
	batch := make([]messaging.Delayed, len(cfg.Delays))
	for i, d := range cfg.Delays {
		id := fmt.Sprintf("%s%02d", runID, i+1)
		labels[id] = fmt.Sprintf("m%02d", i+1)
		batch[i] = messaging.Delayed{ID: id, Key: cfg.Key, Delay: d}
	}
	return labels, batch
}

// printArrival prints each arrival as it comes, marking duplicates and
// early ones.
func printArrival(out *syncWriter, labels map[string]string, startedAt func() time.Time) func(messaging.Arrival, bool) {
	return func(a messaging.Arrival, duplicate bool) {
		note := ""
		if duplicate {
			note = "  DUPLICATE"
		} else if a.Early() {
			note = "  EARLY"
		}
		out.printf("  +%-8s %s arrived: delay %-4s late %s, key %s%s\n",
			formatOffset(a.ArrivedAt.Sub(startedAt())), labels[a.Message.ID], a.Message.Delay,
			formatLateness(a.Lateness), a.RoutingKey, note)
	}
}

// sentMessages are the published messages with their routing keys and
// delays in whole ticks, and their ids.
func sentMessages(cfg config, published []messaging.Message, labels map[string]string) ([]sentMessage, []string, error) {
	sent := make([]sentMessage, len(published))
	ids := make([]string, len(published))
	for i, m := range published {
		// PublishBatch checked every key already; these cannot fail.
		key, err := cfg.set().RoutingKey(cfg.Key, m.Delay)
		if err != nil {
			return nil, nil, err
		}
		_, rounded, err := cfg.set().KeyFormat().Decode(key)
		if err != nil {
			return nil, nil, err
		}
		sent[i] = sentMessage{Label: labels[m.ID], Message: m, RoutingKey: key, Ticks: uint64(rounded / cfg.Resolution), Radix: cfg.Radix}
		ids[i] = m.ID
	}
	return sent, ids, nil
}

// waitForArrivals waits for every id or the deadline, then for a quiet queue
// (a duplicate follows closely); it fails only when the consumer stopped.
func waitForArrivals(ctx context.Context, consumer *messaging.Consumer, ids []string, deadline time.Time) error {
	waitCtx, cancelWait := context.WithDeadline(ctx, deadline)
	waitErr := consumer.WaitForIDs(waitCtx, ids)
	cancelWait()
	if waitErr == nil || errors.Is(waitErr, context.DeadlineExceeded) {
		settleCtx, cancelSettle := context.WithTimeout(ctx, 3*time.Second)
		_ = consumer.Settle(settleCtx, 500*time.Millisecond)
		cancelSettle()
	} else if ctx.Err() == nil {
		return waitErr
	}
	return nil
}

// reportOf is the table, the timeline and the verdict of the run, and its
// exit code: 1 when a message arrived early, twice or not at all.
func reportOf(rows []row, consumer *messaging.Consumer, elapsed time.Duration, width int) (string, int, error) {
	var report bytes.Buffer
	if err := renderTable(&report, rows); err != nil {
		return "", 2, err
	}
	report.WriteString("\n")
	if err := renderTimeline(&report, rows, elapsed, width); err != nil {
		return "", 2, err
	}
	if foreign := consumer.Foreign(); len(foreign) > 0 {
		fmt.Fprintf(&report, "\nignored %d messages that this run did not publish (first: %s)\n", len(foreign), foreign[0].Reason)
	}
	fmt.Fprintf(&report, "\n%s\n", messaging.Summarize(consumer.Arrivals()))
	code := 0
	if problems := problems(rows); len(problems) > 0 {
		fmt.Fprintf(&report, "FAIL: %s\n", strings.Join(problems, "; "))
		code = 1
	} else {
		report.WriteString("PASS: every message arrived once, none early\n")
	}
	return report.String(), code, nil
}

// markdownReport is the results file of a run: where it ran, what it
// published, and the report exactly as printed.
func markdownReport(provenance machine.Provenance, cfg config, report string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# `make demo`: delayed messages through examples/demo, radix %d\n\n", cfg.Radix)
	b.WriteString(provenance.Markdown())
	fmt.Fprintf(&b, "\nWritten by `benchmarks/cmd/delaydemo -markdown` (`make demo DEMO_MARKDOWN=…`): %d messages published with publisher confirms "+
		"to `%s` (levels %d, radix %d, resolution %s, key `%s`), consumed from `%s`; the broker on the same machine.\n\n",
		len(cfg.Delays), cfg.Exchange, cfg.Levels, cfg.Radix, cfg.Resolution, cfg.Key, cfg.Queue)
	b.WriteString("```text\n" + report + "```\n")
	return b.String()
}
