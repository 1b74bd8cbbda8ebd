package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The set of the generation test: 6 levels of 1 s hold delays of 0 to 63 s.
const (
	generationLevels = 6
	generationHeld   = 1000 // messages waiting when the change starts
	// generationHeldSpread is how long publishing them takes, in chunks of
	// generationHeldChunk.
	generationHeldSpread = 2 * time.Second
	generationHeldChunk  = 50
	generationRate       = 100              // messages per second published through the change
	generationLongest    = 60 * time.Second // the longest delay asked
	// generationP99Target is issue 13's target: a change's lateness p99
	// within this multiple of the run without a change. A timing figure,
	// so the run reports it (benchmarks/migration.md) rather than failing
	// on it: the same change has measured 0.98× and 2.9× in two runs.
	generationP99Target = 2.0
	// generationAfterChange is how long after the change's terraform step
	// a message counts as due during the change: the step's refresh, its
	// switch and its waits are over well before.
	generationAfterChange = 10 * time.Second
)

// TestAccDelayQueueSet_changeUnderLoad changes a set holding 1,000
// messages under a steady publisher: classic to quorum, at-most-once to
// at-least-once, 1 s to 100 ms. Each apply starts a new generation, the old
// one drains through its own queues, every message arrives, none early,
// the next apply deletes the emptied generation, and the plan after is
// empty; after a change of key format the old ingest exchange serves old
// keys until its generation goes. A set that does not change carries the
// same load first, as the baseline of the lateness reported
// (generationP99Target; MIGRATION_MARKDOWN=file writes benchmarks/migration.md).
func TestAccDelayQueueSet_changeUnderLoad(t *testing.T) {
	tests := []struct {
		name              string
		from, to          string // the attribute that changes, as configured; the same for the run without a change
		parkingLot        topology.QueueType
		drainingQueueType string
		final             topology.Spec // without name and routes
	}{
		{
			name: "no change (quorum)", from: `queue_type = "quorum"`, to: `queue_type = "quorum"`, parkingLot: topology.QueueTypeQuorum,
		},
		{
			name: "classic to quorum", from: `queue_type = "classic"`, to: `queue_type = "quorum"`, parkingLot: topology.QueueTypeClassic,
			drainingQueueType: "classic", final: topology.Spec{Generation: 1, FormatGeneration: 0},
		},
		{
			name: "at-most-once to at-least-once", from: `dead_letter_strategy = "at-most-once"`, to: `dead_letter_strategy = "at-least-once"`,
			parkingLot: topology.QueueTypeQuorum, drainingQueueType: "quorum", final: topology.Spec{Generation: 1, FormatGeneration: 0},
		},
		{
			name: "resolution 1s to 100ms", from: `resolution = "1s"`, to: `resolution = "100ms"`, parkingLot: topology.QueueTypeQuorum,
			drainingQueueType: "quorum", final: topology.Spec{Resolution: 100 * time.Millisecond, Generation: 1, FormatGeneration: 1},
		},
	}
	var provenance machine.Provenance
	loadBefore := machine.LoadAverage()
	if os.Getenv(migrationMarkdownEnv) != "" {
		provenance = migrationProvenance(t)
	}
	rounds := 1
	if v := os.Getenv(migrationRoundsEnv); v != "" {
		var err error
		if rounds, err = strconv.Atoi(v); err != nil || rounds < 1 {
			t.Fatalf("%s=%q: want a whole number of rounds, at least 1", migrationRoundsEnv, v)
		}
	}
	runs := make([]generationRun, len(tests))
	for round := range rounds {
		for i, tc := range tests {
			name := tc.name
			if rounds > 1 {
				name = fmt.Sprintf("%s, round %d", tc.name, round+1)
			}
			ok := t.Run(name, func(t *testing.T) {
				conn, name, routeQueue, seed := dataPathSetUp(t)
				client := testBrokerClient(t)
				names := topology.Names(name)
				config := func(attribute string) string {
					return dataPathSetConfig(name, routeQueue, fmt.Sprintf(`
  levels         = %d
  %s
  migration_wait = "0s" # leave the old generation draining, for the next apply
  force_destroy  = true # a failed run must not leave messages that block destroy`, generationLevels, attribute))
				}
				load := &generationLoad{t: t, conn: conn, client: client, name: name, routeQueue: routeQueue, seed: seed,
					levels: generationLevels, longest: generationLongest}
				t.Cleanup(load.stop)
				final := tc.final
				final.Name, final.VHost, final.Levels = name, "/", generationLevels
				final.Routes = []topology.Route{{Destination: routeQueue, Key: dataPathKey}}
				ingest := names.Generation(final.FormatGeneration).Ingest()
				changing := tc.from != tc.to

				change := resource.TestStep{PreConfig: load.start, Config: config(tc.to)}
				drained := resource.TestStep{PreConfig: load.finish, Config: config(tc.to), Check: load.check}
				if !changing {
					// The same applies, with nothing to do.
					change.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}
					drained.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}
				} else {
					change.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
						plancheck.ExpectKnownValue(testResource, tfjsonpath.New("ingest_exchange"), knownvalue.StringExact(ingest)),
					}
					change.ConfigStateChecks = []statecheck.StateCheck{
						statecheck.ExpectKnownValue(testResource, tfjsonpath.New("exchange_generation"), knownvalue.Int64Exact(int64(final.FormatGeneration))),
						statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining").AtSliceIndex(0).AtMapKey("generation"), knownvalue.Int64Exact(0)),
						statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining").AtSliceIndex(0).AtMapKey("queue_type"),
							knownvalue.StringExact(tc.drainingQueueType)),
					}
					// Every message arrives, the old generation empties, and the
					// next apply deletes it.
					drained.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(testResource, tfjsonpath.New("draining")),
					}
					drained.ConfigStateChecks = []statecheck.StateCheck{
						statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
					}
					drained.Check = resource.ComposeTestCheckFunc(load.check, func(*terraform.State) error {
						// Only the new generation is left; the parking lot keeps its type.
						desired, err := testPlan(final)
						if err != nil {
							return err
						}
						desired = topology.KeepParkingLot(name, desired, tc.parkingLot)
						actual, err := client.ReadSet(context.Background(), "/", name)
						if err != nil {
							return err
						}
						if changes := topology.Diff(desired, actual); len(changes) > 0 {
							return fmt.Errorf("the broker differs from the new generation by %d changes, the first: %s %s",
								len(changes), changes[0].Kind, changes[0].Reason)
						}
						if ingest == names.Ingest() {
							return nil
						}
						// The old format's exchange went with its generation.
						err = testPublish(context.Background(), names.Ingest(), dataPathKey+".0.0.0.0.0.1")
						if err == nil || !strings.Contains(err.Error(), "NOT_FOUND") {
							return fmt.Errorf("publishing to %s after its generation was deleted: %v, want NOT_FOUND", names.Ingest(), err)
						}
						return nil
					})
				}
				resource.Test(t, resource.TestCase{
					PreCheck:                 func() { testAccPreCheck(t) },
					ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
					CheckDestroy:             testCheckSetGone(client, name),
					Steps:                    []resource.TestStep{{Config: config(tc.from)}, change, drained, {Config: config(tc.to), PlanOnly: true}},
				})
				run := &runs[i]
				run.name, run.from, run.to = tc.name, tc.from, tc.to
				run.sent += len(load.sent)
				run.duplicates += len(load.consumer.Duplicates())
				run.arrivals = append(run.arrivals, load.arrivals...)
				run.during = append(run.during, load.during...)
				run.roundP99 = append(run.roundP99, messaging.Summarize(load.arrivals).P99)
				run.changeApply = max(run.changeApply, load.window[1].Sub(load.window[0]))
			})
			if !ok {
				return // the comparison needs every run
			}
		}
	}
	control, controlDuring := messaging.Summarize(runs[0].arrivals), messaging.Summarize(runs[0].during)
	for _, run := range runs[1:] {
		p99, during := messaging.Summarize(run.arrivals).P99, messaging.Summarize(run.during).P99
		t.Logf("%s: lateness p99 of the messages due during the change %s, %.2f× the %s of the runs without a change (target %g×); "+
			"of the whole run %s, %.2f× %s; p99 of each round %v against %v",
			run.name, during, float64(during)/float64(controlDuring.P99), controlDuring.P99, generationP99Target,
			p99, float64(p99)/float64(control.P99), control.P99, run.roundP99, runs[0].roundP99)
	}
	if path := os.Getenv(migrationMarkdownEnv); path != "" && !t.Failed() {
		writeMigrationMarkdown(t, path, provenance, [2]float64{loadBefore, machine.LoadAverage()}, runs)
	}
}

// generationLoad publishes the generation tests' messages: generationHeld
// at once with delays up to longest, then generationRate a second until
// finish, and consumes them from the route's queue.
type generationLoad struct {
	t                *testing.T
	conn             *amqp.Connection
	client           *broker.Client
	name, routeQueue string
	seed             uint64
	levels           int           // of the set at 1 s
	longest          time.Duration // the longest delay asked, at most the set's

	consumer  *messaging.Consumer
	publisher *messaging.Publisher
	cancel    context.CancelFunc
	done      sync.WaitGroup

	mu   sync.Mutex
	sent []messaging.Message
	err  error
	// The change's apply ran between the end of start and the beginning of
	// finish: a message published then may be routed to both generations.
	window   [2]time.Time
	arrivals []messaging.Arrival // the first of every message, once check has run
	during   []messaging.Arrival // those of arrivals due during the change (see generationAfterChange)
}

func (l *generationLoad) start() {
	var err error
	l.consumer, err = messaging.NewConsumer(l.conn, l.routeQueue, messaging.ConsumerOptions{IDPrefix: "gen-"})
	if err != nil {
		l.t.Fatal(err)
	}
	set := messaging.Set{IngestExchange: topology.Names(l.name).Ingest(), Levels: l.levels, Resolution: time.Second}
	l.publisher, err = messaging.NewPublisher(l.conn, set)
	if err != nil {
		l.t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(l.seed, 1))
	// Whole ticks of 1 s, so that lateness is the broker's alone.
	delay := func() time.Duration {
		return time.Duration(rng.Int64N(int64(l.longest/time.Second))+1) * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	l.cancel = cancel
	// The held messages go out over generationHeldSpread, as a set's
	// messages do in use: published at once, those of one delay would all
	// leave each queue at the same instant, and a single broker pause
	// would decide the p99 of the whole run.
	for i := 0; i < generationHeld; i += generationHeldChunk {
		batch := make([]messaging.Delayed, min(generationHeldChunk, generationHeld-i))
		for j := range batch {
			batch[j] = messaging.Delayed{ID: fmt.Sprintf("gen-held-%04d", i+j), Key: dataPathKey, Delay: delay()}
		}
		sent, err := l.publisher.PublishBatch(ctx, batch)
		if err != nil {
			l.t.Fatal(err)
		}
		l.sent = append(l.sent, sent...)
		time.Sleep(generationHeldSpread * generationHeldChunk / generationHeld)
	}
	l.window[0] = time.Now()
	l.done.Add(1)
	go func() {
		defer l.done.Done()
		ticker := time.NewTicker(time.Second / generationRate)
		defer ticker.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			m, err := l.publisher.Publish(ctx, messaging.Delayed{ID: fmt.Sprintf("gen-live-%06d", i), Key: dataPathKey, Delay: delay()})
			l.mu.Lock()
			if err != nil {
				if ctx.Err() == nil {
					l.err = err
				}
				l.mu.Unlock()
				return
			}
			l.sent = append(l.sent, m)
			l.mu.Unlock()
		}
	}()
}

// finish stops publishing a few seconds after the change's apply and
// waits until every message has arrived or is overdue.
func (l *generationLoad) finish() {
	l.window[1] = time.Now()
	time.Sleep(5 * time.Second) // messages published after the switch take the new generation
	l.stop()
	ctx, cancel := testHangContext(l.longest)
	defer cancel()
	ids := make([]string, len(l.sent))
	for i, m := range l.sent {
		ids[i] = m.ID
	}
	if err := l.consumer.WaitForIDs(ctx, ids); err != nil {
		l.err = errors.Join(l.err, fmt.Errorf("lost messages: %w", err))
	}
	_ = l.consumer.Settle(ctx, time.Second)
	old := topology.Generation{Levels: l.levels, Radix: topology.DefaultRadix}.Queues(l.name)
	l.err = errors.Join(l.err, testWaitEmpty(ctx, l.client, "/", old))
}

// testWaitEmpty waits until neither count that decides a generation's
// deletion finds a message in queues of vhost: the statistics
// (broker.Client.CountedMessages), which a refresh and an apply ask first,
// and the exact count (broker.Client.HeldMessages) that they then ask of
// what the statistics call empty. The statistics go on counting messages
// that have left for up to broker.StatisticsLag, and longer when the broker
// is short of CPU (DESIGN.md, Generations); a peek at a classic queue
// ignores them, so the exact count alone may call empty a queue that the
// next apply keeps. It first lets the statistics catch up with the last
// message the caller saw leave: until then they may show a queue empty that
// since held it, and later show it holding it.
func testWaitEmpty(ctx context.Context, client *broker.Client, vhost string, queues []string) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(broker.StatisticsLag):
	}
	for {
		held, err := client.CountedMessages(ctx, vhost, queues)
		if err == nil && len(held) == 0 {
			held, err = client.HeldMessages(ctx, vhost, queues)
		}
		if err != nil || len(held) == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v still hold messages: %w", held, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// testWaitCounted waits until the broker's statistics themselves count a
// message in vhost's queue (or, after twice broker.StatisticsLag and
// testHangSlack, calls the broker hung). Not
// CountedMessages, which peeks at a queue the statistics give no count for
// yet and so returns as soon as the message is there; the statistics of a
// queue just declared then count 0 for seconds more (see
// broker.Client.CountedByStatistics). Once they count a message they keep
// counting it while it is in the queue: every sample is the queue's own
// count at that instant.
func testWaitCounted(ctx context.Context, client *broker.Client, vhost, queue string) error {
	ctx, cancel := context.WithTimeoutCause(ctx, 2*broker.StatisticsLag+testHangSlack, errTestHung)
	defer cancel()
	for {
		counted, _, err := client.CountedByStatistics(ctx, vhost, queue)
		if err != nil || counted > 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the statistics of %s count no message: %w", queue, context.Cause(ctx))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (l *generationLoad) stop() {
	if l.cancel != nil {
		l.cancel()
		l.done.Wait()
	}
}

// check says whether every message arrived, none early, and once — but
// for those published while the change's apply moved the ingest bindings,
// which may reach both generations for the time of one request (see
// DESIGN.md). Lateness is the run's figure, logged and reported.
func (l *generationLoad) check(*terraform.State) error {
	defer func() { _ = l.consumer.Close() }()
	problems := []error{l.err}
	for _, a := range l.consumer.Arrivals() {
		if a.Early() {
			problems = append(problems, fmt.Errorf("%s (delay %s) arrived %s early", a.Message.ID, a.Message.Delay, -a.Lateness))
		}
	}
	for _, d := range l.consumer.Duplicates() {
		if published := d.Message.PublishedAt; published.Before(l.window[0]) || published.After(l.window[1]) {
			problems = append(problems, fmt.Errorf("%s arrived twice, although published outside the change", d.Message.ID))
		}
	}
	l.arrivals = l.consumer.Arrivals()
	for _, a := range l.arrivals {
		if due := a.Message.Due(); !due.Before(l.window[0]) && due.Before(l.window[1].Add(generationAfterChange)) {
			l.during = append(l.during, a)
		}
	}
	summary := messaging.Summarize(l.arrivals)
	l.logLatest(8)
	l.t.Logf("%d messages sent, %d published through the change, %d delivered twice: %s",
		len(l.sent), len(l.sent)-generationHeld, len(l.consumer.Duplicates()), summary)
	if len(problems) > 20 {
		problems = append(problems[:20], fmt.Errorf("… and %d more problems", len(problems)-20))
	}
	return errors.Join(problems...)
}

// logLatest logs the n latest arrivals: when each was published and due
// against the change's terraform step, and the queues it passed.
func (l *generationLoad) logLatest(n int) {
	arrivals := l.consumer.Arrivals()
	slices.SortFunc(arrivals, func(a, b messaging.Arrival) int { return cmp.Compare(b.Lateness, a.Lateness) })
	l.t.Logf("the change's terraform step took %s", l.window[1].Sub(l.window[0]).Round(time.Millisecond))
	for _, a := range arrivals[:min(n, len(arrivals))] {
		l.t.Logf("%s late by %s: delay %s, published %s and due %s after the step began, through %s",
			a.Message.ID, a.Lateness.Round(time.Millisecond), a.Message.Delay,
			a.Message.PublishedAt.Sub(l.window[0]).Round(time.Millisecond), a.Message.Due().Sub(l.window[0]).Round(time.Millisecond),
			strings.Join(a.Path, ", "))
	}
}

// migrationMarkdownEnv names the file TestAccDelayQueueSet_changeUnderLoad
// writes its figures to when it passes, from the repository's root when
// relative (`make test-migration MIGRATION_MARKDOWN=benchmarks/migration.md`).
const migrationMarkdownEnv = "MIGRATION_MARKDOWN"

// migrationRoundsEnv names how many times TestAccDelayQueueSet_changeUnderLoad
// runs its sequence of changes (1 unless set): their arrivals are pooled,
// so that one broker pause weighs less in each p99.
const migrationRoundsEnv = "MIGRATION_ROUNDS"

// generationRun is what the runs of one change in
// TestAccDelayQueueSet_changeUnderLoad measured, over every round.
type generationRun struct {
	name, from, to string
	sent           int
	duplicates     int
	arrivals       []messaging.Arrival
	during         []messaging.Arrival // those due during the change (see generationAfterChange)
	roundP99       []time.Duration     // the lateness p99 of each round
	changeApply    time.Duration       // the longest terraform run of the step that changes the set
}

// migrationProvenance is the provenance of the run that starts: the
// checkout, the machine, the broker and the Terraform CLI under test.
func migrationProvenance(t *testing.T) machine.Provenance {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p := machine.Collect(ctx, filepath.Join("..", ".."))
	node, err := testBrokerClient(t).Node(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.RabbitMQ, p.Erlang = node.RabbitMQVersion, node.ErlangVersion
	if p.Terraform, err = machine.TerraformVersion(ctx, os.Getenv("TF_ACC_TERRAFORM_PATH")); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeMigrationMarkdown writes the figures of the runs to path.
// load is the machine's 1-minute load average before and after the runs.
func writeMigrationMarkdown(t *testing.T, path string, p machine.Provenance, load [2]float64, runs []generationRun) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# Changing a set that holds messages\n\n%s", p.Markdown())
	fmt.Fprintf(&b, "Written by `make test-migration MIGRATION_MARKDOWN=…` (TestAccDelayQueueSet_changeUnderLoad), which passed: every figure below is that run's.\n\n")
	fmt.Fprintf(&b, "Each run applies a set of %d levels at 1s (`migration_wait = \"0s\"`), publishes %d messages over %s with delays of 1s–%ds, "+
		"then %d msg/s to the same ingest exchange in the key format it started with while the next apply runs, and for 5 s after it; "+
		"then it waits for every message and applies again, which deletes the drained generation. Lateness is arrival − publish time − delay, "+
		"over every message of the run, and over those due during the change: from the start of the change's terraform step "+
		"to %s after its end; the delays are whole seconds, so it is what the broker and the change add. "+
		"The first run applies the same configuration twice: nothing changes. The runs go in rounds of one each, %d rounds; "+
		"each row pools the arrivals of its rounds. The machine's 1-minute load average was %.2f before the runs and %.2f after them.\n\n",
		generationLevels, generationHeld, generationHeldSpread, int(generationLongest/time.Second), generationRate, generationAfterChange, len(runs[0].roundP99),
		load[0], load[1])
	b.WriteString("| run | change | messages | duplicated | early | due during the change | their p99 lateness | ÷ no change | " +
		"p50 lateness | p99 lateness | ÷ no change | p99 of each round | max lateness | the change's terraform step |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	control, controlDuring := messaging.Summarize(runs[0].arrivals), messaging.Summarize(runs[0].during)
	for _, r := range runs {
		change := "none"
		if r.from != r.to {
			change = fmt.Sprintf("`%s` → `%s`", r.from, r.to)
		}
		summary, during := messaging.Summarize(r.arrivals), messaging.Summarize(r.during)
		rounds := make([]string, len(r.roundP99))
		for i, p99 := range r.roundP99 {
			rounds[i] = p99.Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %s | %.2f | %s | %s | %.2f | %s | %s | %s |\n", r.name, change, r.sent, r.duplicates, summary.Early,
			during.Count, during.P99.Round(time.Millisecond), float64(during.P99)/float64(controlDuring.P99),
			summary.P50.Round(time.Millisecond), summary.P99.Round(time.Millisecond), float64(summary.P99)/float64(control.P99),
			strings.Join(rounds, ", "), summary.Max.Round(time.Millisecond), r.changeApply.Round(100*time.Millisecond))
	}
	fmt.Fprintf(&b, "\nEvery message arrived; none early beyond the broker's 1 ms expiry clock, and none twice "+
		"but those published while the change's apply ran (the test allows a message published inside the switch to reach both generations; see DESIGN.md). "+
		"The target is a p99 of the messages due during the change within %g× the runs without a change; the run reports it, "+
		"with the whole run's, and fails only on a message lost, "+
		"early, or delivered twice outside the switch.\n", generationP99Target)
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", "..", path) // from the repository's root, not this package's directory
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// TestAccDelayQueueSet_cutOffChange cuts the broker off in the middle of a
// change from classic to quorum queues of a set that holds 1,000 messages
// while 100 msg/s go on (see generationLoad): after the first exchange of
// the new generation, among its queues, and among the moves of the ingest
// bindings (with one binding made twice, new and old, when the cut falls).
// With the broker back, the next apply finishes the same generation, the
// old one drains, and the apply after deletes it: every message arrives,
// none early, none twice but those published from the cut until the
// repair, and nothing named after the set is left but the new generation.
func TestAccDelayQueueSet_cutOffChange(t *testing.T) {
	const levels, longest = 4, 15 * time.Second
	// The switch's changes in the order Apply makes them (the proxy counts
	// only changes, not reads): where each cut falls.
	switchChanges := func(t *testing.T, name string, route topology.Route) []topology.Change {
		t.Helper()
		before, err := topology.Resolve(topology.Spec{Name: name, VHost: "/", Levels: levels, QueueType: topology.QueueTypeClassic,
			Routes: []topology.Route{route}})
		if err != nil {
			t.Fatal(err)
		}
		after := before
		after.QueueType, after.DeadLetterStrategy = topology.QueueTypeQuorum, ""
		after.QueueLeaderLocator = topology.UnsetLeaderLocator(after, &before) // new queues: balanced
		after, err = topology.NextGeneration(after, before, nil)
		if err != nil {
			t.Fatal(err)
		}
		actual, _ := topology.Plan(before)
		desired, err := topology.PlanGenerations(after, []topology.Generation{before.CurrentGeneration()})
		if err != nil {
			t.Fatal(err)
		}
		return topology.Diff(topology.KeepParkingLot(name, desired, topology.QueueTypeClassic), actual)
	}
	cuts := map[string]func([]topology.Change) int{
		"first exchange": func([]topology.Change) int { return 1 },
		"queues": func(changes []topology.Change) int {
			return 2 + slices.IndexFunc(changes, func(c topology.Change) bool { return c.Kind == topology.CreateQueue })
		},
		"ingest bindings": func(changes []topology.Change) int {
			// The second new ingest binding is made, its answer lost, the old one kept.
			return 3 + slices.IndexFunc(changes, func(c topology.Change) bool { return c.Opens })
		},
	}
	for cutName, cutAt := range cuts {
		t.Run("cut at "+cutName, func(t *testing.T) {
			conn, name, routeQueue, seed := dataPathSetUp(t)
			client := testBrokerClient(t)
			proxy := testNewBrokerProxy(t)
			route := topology.Route{Destination: routeQueue, Key: dataPathKey}
			changes := switchChanges(t, name, route)
			cut := cutAt(changes)
			t.Logf("the switch makes %d changes; the answer to change %d (%s) is lost", len(changes), cut, broker.DescribeChange(changes[cut-1]))
			config := func(queueType string) string {
				return testProviderBlock(proxy.endpoint(), 10*time.Second) + dataPathSetConfig(name, routeQueue, fmt.Sprintf(`
  levels         = %d
  queue_type     = %q
  migration_wait = "0s"
  force_destroy  = true # a failed run must not leave messages that block destroy`, levels, queueType))
			}
			load := &generationLoad{t: t, conn: conn, client: client, name: name, routeQueue: routeQueue, seed: seed, levels: levels, longest: longest}
			t.Cleanup(load.stop)
			final, err := topology.Resolve(topology.Spec{Name: name, VHost: "/", Levels: levels, QueueType: topology.QueueTypeQuorum,
				Generation: 1, Routes: []topology.Route{route}})
			if err != nil {
				t.Fatal(err)
			}
			desired, err := testPlan(final)
			if err != nil {
				t.Fatal(err)
			}
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { testAccPreCheck(t) },
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             testCheckOnlyPlanned(client, topology.Spec{Name: name, VHost: "/"}),
				Steps: []resource.TestStep{
					{Config: config("classic")},
					{
						PreConfig: func() {
							load.start()
							proxy.set(testProxyFault{cut: cut})
						},
						Config:      config("quorum"),
						ExpectError: testUnreachable(proxy.endpoint(), `(?i)next\s+apply`),
					},
					{
						// The refresh finds the generation the cut left and
						// the apply finishes it; the old one drains on.
						PreConfig: func() {
							testLogPartialSet(t, client, name, proxy)
							proxy.restore()
						},
						Config: config("quorum"),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
							plancheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
						}},
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining").AtSliceIndex(0).AtMapKey("generation"), knownvalue.Int64Exact(0)),
						},
					},
					{
						PreConfig: load.finish,
						Config:    config("quorum"),
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
						},
						Check: resource.ComposeTestCheckFunc(load.check,
							testCheckOnly(client, name, topology.KeepParkingLot(name, desired, topology.QueueTypeClassic))),
					},
					{Config: config("quorum"), PlanOnly: true},
				},
			})
		})
	}
}

// TestAccDelayQueueSet_driftedQueueHoldingMessages declares one TTL queue
// of a set again behind Terraform's back, with an extra argument, and lets
// a message wait in it. The broker cannot change the argument back in
// place and the provider may not delete the queue, so the apply starts a
// new generation instead: the drifted queue drains as it is. While it
// drains, an empty queue of the new generation drifts too (its TTL, so
// that the broker's objects explain no set): the refresh keeps the
// draining generation, and the apply declares the empty queue again and
// keeps the one holding the message. The message arrives, not early, and
// the next apply deletes the old generation. A run in which the message
// left the drifted queue too soon tells nothing: it runs again with a hold
// four times as long.
func TestAccDelayQueueSet_driftedQueueHoldingMessages(t *testing.T) {
	t.Parallel()
	for _, resolution := range []time.Duration{4 * time.Second, 16 * time.Second} {
		var told, skipped bool
		t.Run(fmt.Sprintf("resolution %s", resolution), func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			told = testDriftedQueueHoldingMessages(t, resolution)
		})
		if told || skipped || t.Failed() {
			return
		}
	}
	t.Fatalf("hung: at every resolution the message left the drifted queue before the steps that count it had ended")
}

// testDriftedQueueHoldingMessages runs TestAccDelayQueueSet_driftedQueueHoldingMessages
// at resolution, and says whether the message stayed in the drifted queue
// until the steps that count it had ended, so that their checks ran.
func testDriftedQueueHoldingMessages(t *testing.T, resolution time.Duration) bool {
	conn, name, routeQueue, _ := dataPathSetUp(t)
	client := testBrokerClient(t)
	names := topology.Names(name)
	// Level 4 holds a message of 16 ticks for all of its delay (64 s at 4 s
	// a tick), while step 2 waits up to broker.StatisticsLag for the
	// statistics, then plans and applies, and step 3 plans and applies
	// again. The draining count is the statistics', and a message on its
	// way from one queue to the next may be counted in neither.
	spec := topology.Spec{Name: name, VHost: "/", Levels: 5, Resolution: resolution, QueueType: topology.QueueTypeClassic,
		Routes: []topology.Route{{Destination: routeQueue, Key: dataPathKey}}}
	config := dataPathSetConfig(name, routeQueue, fmt.Sprintf(`
  levels         = 5
  resolution     = %q
  queue_type     = "classic"
  migration_wait = "0s"`, topology.FormatDuration(resolution)))
	hold := 16 * spec.Resolution
	consumer, err := messaging.NewConsumer(conn, routeQueue, messaging.ConsumerOptions{IDPrefix: "drift-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = consumer.Close() })
	repaired := spec
	repaired.Generation = 1
	// redeclare declares queue of spec's plan again with its arguments
	// edited, and the bindings its deletion takes along.
	redeclare := func(spec topology.Spec, queue string, edit func(*topology.QueueArguments)) {
		planned, err := topology.Plan(spec)
		if err != nil {
			t.Fatal(err)
		}
		drifted := planned.Queues[slices.IndexFunc(planned.Queues, func(q topology.Queue) bool { return q.Name == queue })]
		edit(&drifted.Arguments)
		changes := []topology.Change{{Kind: topology.DeleteQueue, Queue: &drifted}, {Kind: topology.CreateQueue, Queue: &drifted}}
		for _, b := range planned.Bindings {
			if b.Destination == drifted.Name {
				changes = append(changes, topology.Change{Kind: topology.CreateBinding, Binding: &b})
			}
		}
		if err := client.Apply(context.Background(), "/", changes, broker.ApplyOptions{}); err != nil {
			t.Fatalf("making drift: %v", err)
		}
	}
	var sent messaging.Message
	left := false // the message left the drifted queue before a counting step had ended
	// whileHeld runs a step's checks if the message is still in level 4
	// after it, and so was while the step counted it; else it notes that
	// the run tells nothing, and the steps after it are skipped.
	whileHeld := func(step string, checks ...resource.TestCheckFunc) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			depth, err := testQueueDepth(names.Level(4))
			if err != nil {
				return err
			}
			t.Logf("%s ended %s after the publish with %d message(s) in %s, which holds it %s",
				step, time.Since(sent.PublishedAt).Round(time.Millisecond), depth, names.Level(4), hold)
			if depth == 0 {
				left = true
				return nil
			}
			return resource.ComposeTestCheckFunc(checks...)(s)
		}
	}
	skipOnceLeft := func() (bool, error) { return left, nil }
	// awaitArrival waits for the message and for the old generation's
	// statistics to count it gone.
	awaitArrival := func() {
		ctx, cancel := testHangContext(hold)
		defer cancel()
		if err := consumer.WaitForIDs(ctx, []string{sent.ID}); err != nil {
			t.Fatalf("the message in the drifted queue: %v", err)
		}
		for _, a := range consumer.Arrivals() {
			if a.Early() {
				t.Errorf("%s (delay %s) arrived %s early", a.Message.ID, a.Message.Delay, -a.Lateness)
			}
			t.Logf("%s (delay %s) arrived %s after its delay", a.Message.ID, a.Message.Delay, a.Lateness.Round(time.Millisecond))
		}
		if err := testWaitEmpty(ctx, client, "/", topology.Generation{Levels: 5, Radix: topology.DefaultRadix}.Queues(name)); err != nil {
			t.Fatal(err)
		}
	}
	holding := []resource.TestCheckFunc{
		resource.TestCheckResourceAttr(testResource, "generation", "1"),
		resource.TestCheckResourceAttr(testResource, "draining.0.generation", "0"),
	}
	// The draining counts are the statistics': the step that drifts waits
	// for them to count the message first.
	holdingCounted := append(slices.Clone(holding), resource.TestCheckResourceAttr(testResource, "draining.0.messages", "1"))

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					redeclare(spec, names.Level(4), func(a *topology.QueueArguments) { a.Other = map[string]string{"x-max-length": "100000"} })
					// 16 ticks: all of it in the drifted queue.
					publisher, err := messaging.NewPublisher(conn, messaging.Set{IngestExchange: names.Ingest(), Levels: 5, Resolution: spec.Resolution})
					if err != nil {
						t.Fatal(err)
					}
					defer func() { _ = publisher.Close() }()
					if sent, err = publisher.Publish(context.Background(), messaging.Delayed{ID: "drift-1", Key: dataPathKey, Delay: hold}); err != nil {
						t.Fatal(err)
					}
					if err := testWaitCounted(context.Background(), client, "/", names.Level(4)); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
				}},
				Check: whileHeld("step 2", holdingCounted...),
			},
			{
				PreConfig: func() {
					if left { // the steps are skipped: let destroy find the queues empty
						awaitArrival()
						return
					}
					redeclare(repaired, names.Generation(1).Queue(topology.DefaultRadix, 1, 1), func(a *topology.QueueArguments) { a.MessageTTL = 1234 })
				},
				SkipFunc: skipOnceLeft,
				Config:   config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
				}},
				Check: whileHeld("step 3", holding...),
			},
			{
				PreConfig: func() {
					if !left {
						awaitArrival()
					}
				},
				SkipFunc: skipOnceLeft,
				Config:   config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
				},
				Check: testCheckOnlyPlanned(client, repaired),
			},
			{Config: config, PlanOnly: true, SkipFunc: skipOnceLeft},
		},
	})
	return !left
}

// testQueueDepth is how many messages queue in vhost "/" holds, by a
// passive declaration over AMQP.
func testQueueDepth(queue string) (int, error) {
	conn, err := messaging.Dial(messaging.URLFromEnv(), 10*time.Second)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	defer func() { _ = ch.Close() }()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	return q.Messages, err
}

// TestAccDelayQueueSet_drainingByTheProvidersClock drives the draining
// rules through the provider's clock (a testClock), not by waiting: a
// switch from an empty generation, which the broker counts exactly at once,
// deletes it with no time passing on the clock; and an apply waits up to
// migration_wait (half an hour) on the clock for a generation holding a
// message, then leaves it draining with its count. A provider reading the
// machine's clock would not end a step within that half hour, however slow
// the machine. (The plans' rule before the statistics settle is
// TestEmpty's and TestRefreshed's.)
func TestAccDelayQueueSet_drainingByTheProvidersClock(t *testing.T) {
	t.Parallel()
	client := testBrokerClient(t)
	name := testSetName(t)
	names := topology.Names(name)
	clock := newTestClock()
	const migrationWait = 30 * time.Minute
	config := func(attributes string) string {
		return testSetConfig(name, fmt.Sprintf(`  levels         = 2
  resolution     = "1h"
  force_destroy  = true # the last step leaves a message in a queue
%s`, attributes))
	}
	quorum := config(`  queue_type = "quorum"
  migration_wait = "0s"`)
	// A switch from a generation that holds a message: the apply waits
	// migration_wait on the clock, not on the machine's, and leaves the
	// generation draining with its message, two ticks (two hours) in
	// generation 1's level 1, far longer than the test's steps.
	holding := testSwitchStep(config(fmt.Sprintf(`  queue_type = "quorum"
  dead_letter_strategy = "at-most-once"
  migration_wait = %q`, migrationWait)), 2, 1, 1)
	var waitedFrom, realFrom time.Time // on the provider's clock, on the machine's
	var switchedAt time.Time           // on the provider's clock
	holding.PreConfig = func() {
		ctx := context.Background()
		key, err := topology.EncodeKey("", 2*time.Hour, 2, time.Hour)
		if err == nil {
			err = testPublish(ctx, names.Ingest(), key)
		}
		if err == nil {
			err = testWaitCounted(ctx, client, "/", names.Generation(1).Queue(topology.DefaultRadix, 1, 1))
		}
		if err != nil {
			t.Fatal(err)
		}
		waitedFrom, realFrom = clock.Now(), time.Now()
	}
	holding.Check = func(*terraform.State) error {
		if waited := clock.Now().Sub(waitedFrom); waited < migrationWait {
			return fmt.Errorf("the apply waited %s on the provider's clock, want migration_wait, %s", waited, migrationWait)
		}
		took := time.Since(realFrom)
		t.Logf("the step took %s on the machine's clock", took.Round(time.Millisecond))
		if took >= migrationWait {
			return fmt.Errorf("the step took %s on the machine's clock: the apply waited on it, not on the provider's", took)
		}
		return nil
	}

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviderFactoriesWithClock(clock),
		CheckDestroy:             testCheckSetGone(client, name),
		Steps: []resource.TestStep{
			{Config: config(`  queue_type = "classic"
  migration_wait = "0s"`)},
			// The switch: generation 0, empty, is deleted in the same apply,
			// no time passing on the clock.
			{
				PreConfig: func() { switchedAt = clock.Now() },
				Config:    quorum,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(testResource, tfjsonpath.New("draining"), knownvalue.ListExact(nil)),
				},
				Check: resource.ComposeTestCheckFunc(
					testCheckQueuesGone(client, name, topology.Generation{Levels: 2, Radix: topology.DefaultRadix}.Queues(name)),
					func(*terraform.State) error {
						if waited := clock.Now().Sub(switchedAt); waited > 0 {
							return fmt.Errorf("the switch waited %s on the provider's clock; want the empty generation deleted at once", waited)
						}
						return nil
					}),
			},
			holding,
		},
	})
}

// testSwitchStep applies config, an update that starts generation, and
// checks that the generation drained is left draining with messages.
func testSwitchStep(config string, generation, drained, messages int64) resource.TestStep {
	draining := tfjsonpath.New("draining").AtSliceIndex(0)
	return resource.TestStep{
		Config: config,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(testResource, plancheck.ResourceActionUpdate),
			plancheck.ExpectKnownValue(testResource, tfjsonpath.New("generation"), knownvalue.Int64Exact(generation)),
		}},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(testResource, draining.AtMapKey("generation"), knownvalue.Int64Exact(drained)),
			statecheck.ExpectKnownValue(testResource, draining.AtMapKey("messages"), knownvalue.Int64Exact(messages)),
		},
	}
}

// testCheckQueuesGone asks the broker that none of queues of set name is
// left in vhost "/".
func testCheckQueuesGone(client *broker.Client, name string, queues []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		actual, err := client.ReadSet(context.Background(), "/", name)
		if err != nil {
			return err
		}
		for _, q := range actual.QueueNames() {
			if slices.Contains(queues, q) {
				return fmt.Errorf("%s is still on the broker", q)
			}
		}
		return nil
	}
}
