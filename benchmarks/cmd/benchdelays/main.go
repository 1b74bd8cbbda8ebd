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
			return exitOn(writeModel(cfg.ModelFit, cfg.ModelCheck, cfg.Out))
		case cfg.Render != "":
			return exitOn(renderFromJSON(cfg.Render, cfg.Out))
		}
		return bench(ctx, cfg, commandLine("benchdelays", args), stdout, stderr)
	})
}

// exitOn is the exit code of a command that could not run when err is set.
func exitOn(err error) (int, error) {
	if err != nil {
		return 2, err
	}
	return 0, nil
}

// bench runs every trial and writes the report after each, so an
// interrupted run keeps what it measured.
func bench(ctx context.Context, cfg config, command string, stdout, stderr io.Writer) (int, error) {
	client, err := broker.New(broker.Config{Endpoint: cfg.Endpoint, Username: cfg.Username, Password: cfg.Password})
	if err != nil {
		return 2, err
	}
	node, err := client.Node(ctx)
	if err != nil {
		return 2, fmt.Errorf("ask the broker's version: %w", err)
	}
	env := environment{Command: command}
	if env.Provenance, err = results.Provenance(ctx, "", node, ""); err != nil {
		return 2, err
	}
	// The broker takes AMQP connections before the trials need them.
	for _, url := range cfg.URLs {
		conns, err := dialTrial(url)
		if err != nil {
			return 2, err
		}
		conns.close()
	}

	local := results.IsLocal(cfg.URL)
	if local {
		env.BrokerPID = node.OSPID
	}
	nodes, err := client.ClusterNodes(ctx)
	if err != nil {
		return 2, fmt.Errorf("list the broker's nodes: %w", err)
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
			return 2, err
		}
		env.NodeFlags = schedulerFlags(env.brokerPIDs())
	}
	brokerPIDs := env.brokerPIDs()
	if len(brokerPIDs) > 0 {
		// The broker's own background work, to tell it from the trials'.
		const idleWindow = 5 * time.Second
		before := sampleCPU(brokerPIDs)
		select {
		case <-time.After(idleWindow):
		case <-ctx.Done():
			return 2, context.Cause(ctx)
		}
		if _, seconds := before.cpuUse(sampleCPU(brokerPIDs)); seconds >= 0 {
			env.BrokerIdleCPU = 100 * seconds / idleWindow.Seconds()
		}
	}
	r := &runner{
		cfg: cfg, client: client, sets: delayset.Sets{Broker: client}, brokerPIDs: brokerPIDs, cluster: env.cluster(),
		prefix: fmt.Sprintf("benchdelays-%s-%04x", time.Now().UTC().Format("20060102T150405"), rand.Uint32()&0xffff),
	}
	if cfg.BrokerProfile {
		if !local || env.cluster() {
			return 2, errors.New("-broker-profile reads one node on this machine: the broker is remote or a cluster")
		}
		r.profiler = &processSampler{rabbitmqctl: cfg.Rabbitmqctl, node: node.Name, pid: env.BrokerPID}
		if _, err := r.profiler.sample(ctx); err != nil {
			return 2, fmt.Errorf("-broker-profile: %w", err)
		}
	}
	rep := report{Environment: env, Settings: settings{
		Levels: cfg.Levels, Resolution: cfg.Resolution, BaselineDelay: cfg.BaselineDelay,
		Rate: cfg.Rate, Duration: cfg.Duration, Steps: cfg.Steps, Fine: cfg.Fine, SearchDuration: cfg.SearchDuration,
		P99Limit: cfg.P99Limit, LossWindow: cfg.LossWindow, Tick: cfg.Tick, LagLimit: cfg.LagLimit, AbandonLag: cfg.AbandonLag,
		Prefetch: cfg.Prefetch, MaxInFlight: cfg.MaxInFlight, Seed: cfg.Seed, Warnings: cfg.Warnings,
		GroupSize: cfg.GroupSize, ClientURLs: redactedURLs(cfg.URLs),
	}}
	for _, v := range cfg.Variants {
		rep.Settings.Variants = append(rep.Settings.Variants, v.Name)
	}
	if rep.Layouts, err = runLayouts(cfg); err != nil {
		return 2, err
	}
	fmt.Fprintf(stderr, "benchdelays: commit %s, RabbitMQ %s (pid %d), sets %s.*, N=%d R=%s, %s msg/s for %s\n",
		env.Provenance.Revision(), env.Provenance.RabbitMQ, env.BrokerPID, r.prefix, cfg.Levels, cfg.Resolution, results.Rate(cfg.Rate), cfg.Duration)

	plans := trialPlans(cfg)
	fmt.Fprint(stderr, describeRun(cfg))
	quiet := newQuietPolicy(env.BrokerIdleCPU, cfg.QuietMax)
	runTrial := func(p trialPlan) (trialResult, error) {
		if len(rep.Trials) > 0 && cfg.Pause > 0 {
			select {
			case <-time.After(cfg.Pause):
			case <-ctx.Done():
			}
		}
		var settled bool
		var settling time.Duration
		if len(brokerPIDs) > 0 {
			settling, settled = quiet.waitQuiet(ctx, brokerCPUSampler(brokerPIDs))
		}
		if ctx.Err() != nil {
			return trialResult{}, context.Cause(ctx)
		}
		started := time.Now()
		t := r.trial(ctx, p)
		t.BrokerSettled, t.BrokerSettling = settled, settling
		rep.Trials = append(rep.Trials, t)
		fmt.Fprintf(stderr, "  %s (%s)\n", describeTrial(t, cfg), time.Since(started).Round(time.Second))
		return t, writeReport(cfg.Out, rep)
	}

	// The main trials first: they are the figures that matter most.
	for _, m := range plans {
		if _, err := runTrial(trialPlan{variant: m.variant, baseline: m.baseline, rate: cfg.Rate, duration: cfg.Duration, main: true}); err != nil {
			return 2, err
		}
	}
	// The idle cost of a set of each radix, before the long rate searches.
	if len(cfg.IdleRadixes) > 0 {
		memUsed := nodeMemUsed(ctx, client, node.Name)
		for _, radix := range cfg.IdleRadixes {
			started := time.Now()
			i := r.idle(ctx, radix, quiet, memUsed)
			rep.Idle = append(rep.Idle, i)
			fmt.Fprintf(stderr, "  idle radix %-2d: broker CPU %s, RSS %s, mem_used %s%s (%s)\n", radix, formatCPUDelta(i.CPUWith, i.CPUWithout),
				formatMemoryDelta(i.RSSWith, i.RSSWithout), formatMemoryDelta(i.MemUsedWith, i.MemUsedWithout), errorSuffix(i.Error), time.Since(started).Round(time.Second))
			if err := writeReport(cfg.Out, rep); err != nil {
				return 2, err
			}
			if ctx.Err() != nil {
				return 2, context.Cause(ctx)
			}
		}
	}
	if len(cfg.Steps) > 0 {
		for _, m := range plans {
			v, baseline := m.variant, m.baseline
			s := searchResult{Variant: v.Name, Baseline: baseline}
			rate, ok := cfg.Rate, true
			if main, found := rep.mainTrial(v.Name, baseline); found && cfg.SearchDuration == cfg.Duration {
				s.Steps = append(s.Steps, stepOf(main, cfg))
				rate, ok = nextRate(cfg.Steps, s.Steps, cfg.Fine)
			}
			for ; ok; rate, ok = nextRate(cfg.Steps, s.Steps, cfg.Fine) {
				t, err := runTrial(trialPlan{variant: v, baseline: baseline, rate: rate, duration: cfg.SearchDuration})
				s.Steps = append(s.Steps, stepOf(t, cfg))
				if err != nil {
					return 2, err
				}
			}
			s.Highest = highestHeld(s.Steps)
			s.Capped = len(cfg.Steps) > 0 && s.Highest >= cfg.Steps[len(cfg.Steps)-1]
			rep.Searches = append(rep.Searches, s)
			if err := writeReport(cfg.Out, rep); err != nil {
				return 2, err
			}
		}
	}

	fmt.Fprint(stdout, markdown(rep, "", ""))
	if cfg.Out != "" {
		fmt.Fprintf(stderr, "benchdelays: wrote %s, its plots and %s in %s\n", markdownFile, jsonFile, cfg.Out)
	}
	return exitCode(rep), nil
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
