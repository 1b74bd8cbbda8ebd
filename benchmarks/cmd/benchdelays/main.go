package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its exit code returned.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stderr)
	return results.Main("benchdelays", stderr, err, func(ctx context.Context) (int, error) {
		for _, warning := range cfg.Warnings {
			fmt.Fprintf(stderr, "benchdelays: warning: %s\n", warning)
		}
		switch {
		case cfg.Estimate:
			fmt.Fprint(stdout, describeRun(cfg))
			return 0, nil
		case len(cfg.ModelFit) > 0:
			return results.Failed(writeModel(cfg.ModelFit, cfg.ModelCheck, cfg.Out))
		case cfg.Render != "":
			return results.Failed(renderFromJSON(cfg.Render, cfg.Out))
		}
		return bench(ctx, cfg, commandLine("benchdelays", args), stdout, stderr)
	})
}

// bench runs every trial and writes the report after each, so an
// interrupted run keeps what it measured.
func bench(ctx context.Context, cfg config, command string, stdout, stderr io.Writer) (int, error) {
	r, rep, err := prepare(ctx, cfg, command, stderr)
	if err != nil {
		return 2, err
	}
	if err := r.runAll(ctx, &rep, stderr); err != nil {
		return 2, err
	}
	fmt.Fprint(stdout, markdown(rep, "", ""))
	if cfg.Out != "" {
		fmt.Fprintf(stderr, "benchdelays: wrote %s, its plots and %s in %s\n", markdownFile, jsonFile, cfg.Out)
	}
	return exitCode(rep), nil
}

// prepare connects to the broker, records where the run happens and makes
// the runner and the report the trials fill in.
func prepare(ctx context.Context, cfg config, command string, stderr io.Writer) (*runner, report, error) {
	client, err := broker.New(broker.Config{Endpoint: cfg.Endpoint, Username: cfg.Username, Password: cfg.Password})
	if err != nil {
		return nil, report{}, err
	}
	node, err := client.Node(ctx)
	if err != nil {
		return nil, report{}, fmt.Errorf("ask the broker's version: %w", err)
	}
	env, err := environmentOf(ctx, cfg, client, node, command)
	if err != nil {
		return nil, report{}, err
	}
	r := &runner{
		cfg: cfg, client: client, sets: delayset.Sets{Broker: client}, brokerPIDs: env.brokerPIDs(), cluster: env.cluster(),
		prefix: fmt.Sprintf("benchdelays-%s-%04x", time.Now().UTC().Format("20060102T150405"), rand.Uint32()&0xffff),
		node:   node.Name,
	}
	if cfg.BrokerProfile {
		if !results.IsLocal(cfg.URL) || env.cluster() {
			return nil, report{}, errors.New("-broker-profile reads one node on this machine: the broker is remote or a cluster")
		}
		r.profiler = &processSampler{rabbitmqctl: cfg.Rabbitmqctl, node: node.Name, pid: env.BrokerPID}
		if _, err := r.profiler.sample(ctx); err != nil {
			return nil, report{}, fmt.Errorf("-broker-profile: %w", err)
		}
	}
	rep := report{Environment: env, Settings: settingsOf(cfg)}
	if rep.Layouts, err = runLayouts(cfg); err != nil {
		return nil, report{}, err
	}
	fmt.Fprintf(stderr, "benchdelays: commit %s, RabbitMQ %s (pid %d), sets %s.*, N=%d R=%s, %s msg/s for %s\n",
		env.Provenance.Revision(), env.Provenance.RabbitMQ, env.BrokerPID, r.prefix, cfg.Levels, cfg.Resolution, results.Rate(cfg.Rate), cfg.Duration)
	return r, rep, nil
}

// environmentOf is where the run happens: the broker's provenance, its
// nodes and processes, and its CPU use at rest.
func environmentOf(ctx context.Context, cfg config, client *broker.Client, node broker.NodeInfo, command string) (environment, error) {
	env := environment{Command: command}
	var err error
	if env.Provenance, err = results.Provenance(ctx, "", node, ""); err != nil {
		return env, err
	}
	// The broker takes AMQP connections before the trials need them.
	for _, url := range cfg.URLs {
		conns, err := dialTrial(url)
		if err != nil {
			return env, err
		}
		conns.close()
	}
	local := results.IsLocal(cfg.URL)
	if local {
		env.BrokerPID = node.OSPID
	}
	nodes, err := client.ClusterNodes(ctx)
	if err != nil {
		return env, fmt.Errorf("list the broker's nodes: %w", err)
	}
	if len(nodes) > 1 {
		for _, n := range nodes {
			pid := n.OSPID
			if !local {
				pid = 0
			}
			env.Nodes = append(env.Nodes, clusterNode{Name: n.Name, PID: pid})
		}
	}
	if env.cluster() {
		if env.ClientNodes, err = nodesOfURLs(ctx, cfg); err != nil {
			return env, err
		}
		env.NodeFlags = schedulerFlags(env.brokerPIDs())
	}
	env.BrokerIdleCPU, err = idleCPU(ctx, env.brokerPIDs())
	return env, err
}

// idleCPU is the broker's own background work in percent of a CPU, to tell
// it from the trials'; 0 when the broker is not on this machine.
func idleCPU(ctx context.Context, pids []int) (float64, error) {
	if len(pids) == 0 {
		return 0, nil
	}
	const idleWindow = 5 * time.Second
	before := sampleCPU(pids)
	select {
	case <-time.After(idleWindow):
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
	if _, seconds := before.cpuUse(sampleCPU(pids)); seconds >= 0 {
		return 100 * seconds / idleWindow.Seconds(), nil
	}
	return 0, nil
}

// settingsOf is what the report says of the run's settings.
func settingsOf(cfg config) settings {
	s := cfg.settings
	s.ClientURLs = redactedURLs(cfg.URLs)
	for _, v := range cfg.Variants {
		s.Variants = append(s.Variants, v.Name)
	}
	return s
}

// runAll runs the main trials first, the figures that matter most, then
// the idle cost of a set of each radix, then the long rate searches.
func (r *runner) runAll(ctx context.Context, rep *report, stderr io.Writer) error {
	fmt.Fprint(stderr, describeRun(r.cfg))
	s := &session{runner: r, rep: rep, stderr: stderr, quiet: newQuietPolicy(rep.Environment.BrokerIdleCPU, r.cfg.QuietMax)}
	for _, m := range trialPlans(r.cfg) {
		if _, err := s.runTrial(ctx, trialPlan{variant: m.variant, baseline: m.baseline, rate: r.cfg.Rate, duration: r.cfg.Duration, main: true}); err != nil {
			return err
		}
	}
	if err := s.runIdle(ctx); err != nil {
		return err
	}
	return s.runSearches(ctx)
}

// session is one run's trials in order, each written to the report as it
// ends.
type session struct {
	*runner
	rep    *report
	stderr io.Writer
	quiet  quietPolicy
}

// runTrial runs one trial once the broker is quiet, and writes the report.
func (s *session) runTrial(ctx context.Context, p trialPlan) (trialResult, error) {
	if len(s.rep.Trials) > 0 && s.cfg.Pause > 0 {
		select {
		case <-time.After(s.cfg.Pause):
		case <-ctx.Done():
		}
	}
	var settled bool
	var settling time.Duration
	if len(s.brokerPIDs) > 0 {
		settling, settled = s.quiet.waitQuiet(ctx, brokerCPUSampler(s.brokerPIDs))
	}
	if ctx.Err() != nil {
		return trialResult{}, context.Cause(ctx)
	}
	started := time.Now()
	t := s.trial(ctx, p)
	t.BrokerSettled, t.BrokerSettling = settled, settling
	s.rep.Trials = append(s.rep.Trials, t)
	fmt.Fprintf(s.stderr, "  %s (%s)\n", describeTrial(t, s.cfg), time.Since(started).Round(time.Second))
	return t, writeReport(s.cfg.Out, *s.rep)
}

// runIdle measures the idle cost of a set of each of -idle-radixes.
func (s *session) runIdle(ctx context.Context) error {
	if len(s.cfg.IdleRadixes) == 0 {
		return nil
	}
	memUsed := nodeMemUsed(ctx, s.client, s.node)
	for _, radix := range s.cfg.IdleRadixes {
		started := time.Now()
		i := s.idle(ctx, radix, s.quiet, memUsed)
		s.rep.Idle = append(s.rep.Idle, i)
		fmt.Fprintf(s.stderr, "  idle radix %-2d: broker CPU %s, RSS %s, mem_used %s%s (%s)\n", radix, formatCPUDelta(i.CPUWith, i.CPUWithout),
			formatMemoryDelta(i.RSSWith, i.RSSWithout), formatMemoryDelta(i.MemUsedWith, i.MemUsedWithout), errorSuffix(i.Error), time.Since(started).Round(time.Second))
		if err := writeReport(s.cfg.Out, *s.rep); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
	return nil
}

// runSearches searches each variant's highest rate that holds, starting
// from its main trial when that ran as long as a search trial.
func (s *session) runSearches(ctx context.Context) error {
	if len(s.cfg.Steps) == 0 {
		return nil
	}
	for _, m := range trialPlans(s.cfg) {
		v, baseline := m.variant, m.baseline
		found := searchResult{Variant: v.Name, Baseline: baseline}
		rate, ok := s.cfg.Rate, true
		if main, isMain := s.rep.mainTrial(v.Name, baseline); isMain && s.cfg.SearchDuration == s.cfg.Duration {
			found.Steps = append(found.Steps, stepOf(main, s.cfg))
			rate, ok = nextRate(s.cfg.Steps, found.Steps, s.cfg.Fine)
		}
		for ; ok; rate, ok = nextRate(s.cfg.Steps, found.Steps, s.cfg.Fine) {
			t, err := s.runTrial(ctx, trialPlan{variant: v, baseline: baseline, rate: rate, duration: s.cfg.SearchDuration})
			found.Steps = append(found.Steps, stepOf(t, s.cfg))
			if err != nil {
				return err
			}
		}
		found.Highest = highestHeld(found.Steps)
		found.Capped = found.Highest >= s.cfg.Steps[len(s.cfg.Steps)-1]
		s.rep.Searches = append(s.rep.Searches, found)
		if err := writeReport(s.cfg.Out, *s.rep); err != nil {
			return err
		}
	}
	return nil
}

func errorSuffix(message string) string {
	if message == "" {
		return ""
	}
	return "; failed: " + message
}

// stepOf is what a search records of a trial.
func stepOf(t trialResult, cfg config) step {
	held, why := verdict(t, cfg.P99Limit, cfg.LagLimit)
	return step{Rate: t.Rate, Held: held, Why: why, P99: t.Measurement.Lateness.P99}
}

// exitCode is 1 when the promise broke where it must hold at any rate: a
// message early anywhere, or lost, refused or misrouted in a main trial.
func exitCode(r report) int {
	for _, t := range r.Trials {
		m := t.Measurement
		if m.Early > 0 || (t.Main && (t.Error != "" || m.Lost > 0 || m.Nacked > 0 || m.Misrouted > 0 || m.Unroutable > 0)) {
			return 1
		}
	}
	return 0
}

func describeTrial(t trialResult, cfg config) string {
	m := t.Measurement
	line := fmt.Sprintf("%-32s %6s msg/s × %-4s sent %d at %s msg/s (lag ≤ %s), p50 %s p99 %s max %s ms, early %d lost %d dup %d unroutable %d",
		trialName(t), results.Rate(t.Rate), topology.FormatDuration(t.Duration), t.Pacing.Sent, results.Rate(t.Pacing.Achieved()),
		t.Pacing.MaxLag.Round(time.Millisecond), formatMs(m.Lateness.P50), formatMs(m.Lateness.P99), formatMs(m.Lateness.Max),
		m.Early, m.Lost, m.Duplicates, m.Unroutable)
	if held, why := verdict(t, cfg.P99Limit, cfg.LagLimit); !held {
		line += "; does not hold: " + why
	}
	return line
}
