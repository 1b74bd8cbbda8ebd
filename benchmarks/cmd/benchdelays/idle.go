package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// runLayouts are the planner's figures for every radix the run measures,
// in its trials or idle, ascending, with the first variant's queue kind.
func runLayouts(cfg config) ([]layoutFigures, error) {
	var radixes []int
	for _, v := range cfg.Variants {
		radixes = append(radixes, v.Radix)
	}
	radixes = append(radixes, cfg.IdleRadixes...)
	slices.Sort(radixes)
	kind := cfg.idleKind()
	var layouts []layoutFigures
	for _, radix := range slices.Compact(radixes) {
		l, err := radixFiguresOf(radix, cfg.maxDelay(), cfg.Resolution, kind.QueueType, kind.Strategy)
		if err != nil {
			return nil, fmt.Errorf("plan a set of radix %d: %w", radix, err)
		}
		layouts = append(layouts, l)
	}
	return layouts, nil
}

// idleKind is the queue kind of the idle sets: the first variant's.
func (c config) idleKind() variant {
	if len(c.Variants) == 0 {
		return queueKinds[1]
	}
	return kindOf(c.Variants[0])
}

// idle measures the idle cost of a set of radix: the broker's CPU and memory,
// once settled, without the set and then with it declared and empty.
func (r *runner) idle(ctx context.Context, radix int, quiet quietPolicy, memUsed func() int64) (result idleResult) {
	kind := r.cfg.idleKind()
	spec := topology.Spec{
		Name: fmt.Sprintf("%s.idle.r%d", r.prefix, radix), VHost: r.cfg.VHost, MaxDelay: r.cfg.maxDelay(), Radix: radix,
		Resolution: r.cfg.Resolution, QueueType: kind.QueueType, DeadLetterStrategy: kind.Strategy,
	}
	result = idleResult{Radix: radix, Set: spec.Name, QueueType: kind.QueueType, Strategy: kind.Strategy, Window: r.cfg.IdleWindow,
		CPUWithout: -1, CPUWith: -1, RSSWithout: -1, RSSWith: -1, MemUsedWithout: -1, MemUsedWith: -1}
	var err error
	if spec, err = topology.Resolve(spec); err != nil {
		result.Error = err.Error()
		return result
	}
	settledBefore := r.waitQuiet(ctx, quiet)
	result.CPUWithout, result.RSSWithout, result.MemUsedWithout = r.sampleIdle(ctx, memUsed)
	if ctx.Err() != nil {
		result.Error = context.Cause(ctx).Error()
		return result
	}
	created := delayset.Remembered{Spec: spec} // what a create that failed part-way leaves to delete
	defer func() {
		// Not forced: the empty set's destroy passes the guard as a user's would,
		// which may wait minutes for fresh statistics of each quorum queue.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		if err := r.sets.Destroy(cleanup, created, false); err != nil {
			result.Error = errors.Join(errorOrNil(result.Error), fmt.Errorf("remove set %s: %w", spec.Name, err)).Error()
		}
	}()
	set, err := r.sets.Create(ctx, spec)
	if set.Spec.Name != "" {
		created = set.Remembered
	}
	if err != nil {
		result.Error = fmt.Sprintf("declare set %s: %v", spec.Name, err)
		return result
	}
	settledWith := r.waitQuiet(ctx, quiet)
	result.CPUWith, result.RSSWith, result.MemUsedWith = r.sampleIdle(ctx, memUsed)
	result.Settled = settledBefore && settledWith
	if ctx.Err() != nil {
		result.Error = context.Cause(ctx).Error()
	}
	return result
}

// waitQuiet waits for the broker to settle, when its CPU can be seen.
func (r *runner) waitQuiet(ctx context.Context, quiet quietPolicy) bool {
	if len(r.brokerPIDs) == 0 {
		return false
	}
	_, settled := quiet.waitQuiet(ctx, brokerCPUSampler(r.brokerPIDs))
	return settled
}

// sampleIdle is the broker's CPU use over the idle window in percent of
// one CPU, then its RSS and mem_used; -1 for what is unknown.
func (r *runner) sampleIdle(ctx context.Context, memUsed func() int64) (cpu float64, rss, used int64) {
	cpu, rss = -1, -1
	before, started := sampleCPU(r.brokerPIDs), time.Now()
	select {
	case <-time.After(r.cfg.IdleWindow):
	case <-ctx.Done():
		return -1, -1, -1
	}
	if _, seconds := before.cpuUse(sampleCPU(r.brokerPIDs)); seconds >= 0 {
		cpu = 100 * seconds / time.Since(started).Seconds()
	}
	for i, pid := range r.brokerPIDs {
		node := machine.ResidentBytes(pid)
		switch {
		case node < 0:
			rss = -1
		case i == 0:
			rss = node
		case rss >= 0:
			rss += node
		}
	}
	return cpu, rss, memUsed()
}

// nodeMemUsed returns a function that reads the node's mem_used in bytes, -1
// when it cannot; the broker updates it every 5 s, within the idle window.
func nodeMemUsed(ctx context.Context, client *broker.Client, node string) func() int64 {
	return func() int64 {
		if node == "" {
			return -1
		}
		used, err := client.NodeMemUsed(ctx, node)
		if err != nil {
			return -1
		}
		return used
	}
}
