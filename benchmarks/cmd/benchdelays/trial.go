package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// routeKey is the message key of every benchmark message and of the route
// that takes them to the consumed queue.
const routeKey = "bench"

// runner runs trials; what it holds is shared by all of them.
type runner struct {
	cfg    config
	client *broker.Client
	// sets creates and destroys the trials' sets as the provider does.
	sets delayset.Sets
	// prefix makes the run's object names and message ids unique.
	prefix string
	// brokerPIDs are the broker's processes when it runs here: one node's,
	// or each node's of a cluster; none when it does not.
	brokerPIDs []int
	// cluster says the broker has more than one node: trials then record
	// each node's CPU and the leaders of their set's queues.
	cluster bool
	// profiler, when set, reads the broker's processes around main trials.
	profiler *processSampler
	// node is the name of the node the management API answers from.
	node string
}

// trialPlan says what one trial measures.
type trialPlan struct {
	variant  variant
	baseline bool
	rate     float64
	duration time.Duration
	main     bool
}

// spec is the set a trial declares: the variant's, with the fewest digits that
// hold the run's range, or the baseline's one TTL queue of the baseline delay.
func (r *runner) spec(p trialPlan) topology.Spec {
	kind := "set"
	levels, radix, resolution := r.cfg.levelsIn(p.variant.Radix), p.variant.Radix, r.cfg.Resolution
	if p.baseline {
		kind, levels, radix, resolution = "baseline", 1, 2, r.cfg.BaselineDelay
	}
	name := fmt.Sprintf("%s.%s.%s.%d", r.prefix, p.variant.Slug, kind, int(p.rate))
	return topology.Spec{
		Name: name, VHost: r.cfg.VHost, Levels: levels, Radix: radix, Resolution: resolution,
		QueueType: p.variant.QueueType, DeadLetterStrategy: p.variant.Strategy, QueueLeaderLocator: p.variant.LeaderLocator,
		QuorumInitialGroupSize: r.cfg.groupSizeOf(p.variant),
		Routes:                 routesFor(name, len(r.cfg.URLs)),
	}
}

// trial declares a fresh set, publishes to it at a paced rate while consuming
// its routes' queues, counts the arrivals, and removes the set whatever happened.
func (r *runner) trial(ctx context.Context, p trialPlan) (result trialResult) {
	spec := r.spec(p)
	result = trialResult{
		Variant: p.variant.Name, Baseline: p.baseline, Main: p.main, Set: spec.Name,
		Levels: spec.Levels, Radix: spec.Radix, Resolution: spec.Resolution, Rate: p.rate, Duration: p.duration,
		Started: time.Now().UTC(), LoadBefore: machine.LoadAverage(),
	}
	cpuBefore := sampleCPU(r.brokerPIDs)
	defer func() {
		result.LoadAfter = machine.LoadAverage()
		cpuAfter := sampleCPU(r.brokerPIDs)
		result.MachineBusy, result.BrokerCPU = cpuBefore.cpuUse(cpuAfter)
		result.OwnCPU = cpuBefore.selfSeconds(cpuAfter)
		if r.cluster {
			result.NodeCPU, result.NodeThreads = cpuBefore.nodeSeconds(cpuAfter), cpuBefore.nodeThreadSeconds(cpuAfter)
		}
	}()
	fail := func(err error) {
		result.Error = errors.Join(errorOrNil(result.Error), err).Error()
	}

	clients, err := dialClients(r.cfg.URLs, spec.Routes)
	if err != nil {
		fail(err)
		return result
	}
	defer clients.close()
	// The routes' queues exist before the set's bindings to them, as a user's would.
	if err := clients.declareRoutes(); err != nil {
		fail(err)
		return result
	}
	created := delayset.Remembered{Spec: spec} // what a create that failed part-way leaves to delete
	defer func() {
		if err := r.remove(ctx, created); err != nil {
			fail(err)
		}
	}()
	if err := r.declare(ctx, p, &created, &result); err != nil {
		fail(err)
		return result
	}
	var confirms confirmLog
	err = clients.start(topology.Names(spec.Name).Ingest(), messaging.ConsumerOptions{IDPrefix: spec.Name + "-", Prefetch: r.cfg.Prefetch},
		messaging.StreamOptions{MaxInFlight: r.cfg.MaxInFlight, OnConfirm: confirms.add})
	if err != nil {
		fail(err)
		return result
	}
	start, workBefore := r.publish(ctx, p, spec, clients, &result, fail)
	r.await(ctx, clients, &confirms, start, workBefore, &result, fail)
	unroutable, err := r.parked(spec)
	if err != nil {
		fail(err)
	}
	arrivals, duplicates, foreign := clients.observed()
	result.Measurement = measure(observations{
		format:        spec.KeyFormat(),
		confirmations: confirms.all(), arrivals: arrivals, duplicates: duplicates,
		foreign: foreign, unroutable: unroutable,
		start: start, duration: p.duration, longestDelay: r.delayRange(p, spec),
		lossWindow: r.cfg.LossWindow,
	})
	return result
}

// declare creates the trial's set as the provider does, keeps in created what
// the create returned to remember, and on a cluster records where its queues went.
func (r *runner) declare(ctx context.Context, p trialPlan, created *delayset.Remembered, result *trialResult) error {
	spec := created.Spec
	set, err := r.sets.Create(ctx, spec)
	if set.Spec.Name != "" {
		*created = set.Remembered
	}
	if err != nil {
		return fmt.Errorf("declare set %s: %w", spec.Name, err)
	}
	if !r.cluster {
		return nil
	}
	shares := hopShares(set.Set, spec.Radix, spec.Resolution, r.cfg.Levels, p.baseline)
	result.Leaders, result.Replicas, result.Queues, err = r.placement(ctx, spec, set.Set, shares)
	return err
}

// await waits for every acked message, or the loss window past the last due,
// takes the profile's second sample, and lets a late duplicate show.
func (r *runner) await(ctx context.Context, clients *trialClients, confirms *confirmLog, start time.Time, workBefore *brokerSample,
	result *trialResult, fail func(error),
) {
	acked, lastDue := confirms.acked(start)
	waitCtx, cancelWait := context.WithDeadline(ctx, lastDue.Add(r.cfg.LossWindow))
	err := clients.waitFor(waitCtx, acked)
	if err != nil && waitCtx.Err() == nil {
		fail(err) // a consumer stopped, not the clock
	}
	cancelWait()
	if workBefore != nil {
		if after, err := r.profiler.sample(ctx); err != nil {
			fail(fmt.Errorf("broker profile: %w", err))
		} else {
			work := workBetween(*workBefore, after)
			result.BrokerWork = &work
		}
	}
	settleCtx, cancelSettle := context.WithTimeout(ctx, 5*r.cfg.Settle)
	defer cancelSettle()
	if err := clients.settle(settleCtx, r.cfg.Settle); err != nil {
		fail(err)
	}
}

// confirmLog collects a trial's publisher confirms, from every publisher.
type confirmLog struct {
	mu   sync.Mutex
	list []messaging.Confirmation
}

func (l *confirmLog) add(c messaging.Confirmation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, c)
}

func (l *confirmLog) all() []messaging.Confirmation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.list)
}

// acked counts the acked messages by route key, and says when the last of
// them is due (start when none is).
func (l *confirmLog) acked(start time.Time) (map[string]int, time.Time) {
	acked, lastDue := map[string]int{}, start
	for _, c := range l.all() {
		if c.Acked {
			key, _, _ := strings.Cut(c.RoutingKey, ".")
			acked[key]++
			lastDue = latest(lastDue, c.Message.Due())
		}
	}
	return acked, lastDue
}

// publish sends the trial's messages at its paced rate through clients and
// waits for their confirms; it returns when it started, and the profile before.
func (r *runner) publish(ctx context.Context, p trialPlan, spec topology.Spec, clients *trialClients, result *trialResult,
	fail func(error),
) (time.Time, *brokerSample) {
	delays := r.delays(p, spec)
	var workBefore *brokerSample
	if r.profiler != nil && p.main {
		if sample, err := r.profiler.sample(ctx); err != nil {
			fail(fmt.Errorf("broker profile: %w", err))
		} else {
			workBefore = &sample
		}
	}
	set := messaging.Set{IngestExchange: topology.Names(spec.Name).Ingest(), Levels: spec.Levels, Radix: spec.Radix, Resolution: spec.Resolution}
	start := time.Now()
	var err error
	result.Pacing, err = messaging.PublishPaced(ctx, clients.send, messaging.NewSchedule(p.rate, p.duration), r.cfg.Tick, r.cfg.AbandonLag, start, func(i int) (string, messaging.Message) {
		delay := delays()
		key, _ := set.RoutingKey(clients.routeKeyOf(i), delay) // delays() stays within the set's range
		return key, messaging.Message{ID: fmt.Sprintf("%s-%07d", spec.Name, i), Delay: delay}
	})
	if err != nil {
		fail(err)
	}
	flushCtx, cancelFlush := context.WithTimeout(ctx, 60*time.Second)
	defer cancelFlush()
	if err := clients.finishPublishing(flushCtx); err != nil {
		fail(err)
	}
	return start, workBefore
}

// parked counts the messages in the parking lot over a connection of its own,
// which a loaded broker still answers when it refuses a channel on a trial's.
func (r *runner) parked(spec topology.Spec) (int, error) {
	conn, err := messaging.Dial(r.cfg.URL, 10*time.Second)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	return messaging.ReadyMessages(conn, topology.Names(spec.Name).Unroutable())
}

// placement reads where the queues of a declared set run: each node's leaders
// and TTL-queue replicas, and each queue's leader, members and share (shares).
func (r *runner) placement(ctx context.Context, spec topology.Spec, planned topology.Topology, shares map[string]float64) (
	leaders, replicas map[string]int, queues []queuePlacement, err error,
) {
	placements, err := r.client.ReadPlacements(ctx, spec.VHost, planned.QueueNames())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read where the set's queues run: %w", err)
	}
	leaders, replicas = map[string]int{}, map[string]int{}
	for _, q := range planned.Queues {
		p, ok := placements[q.Name]
		if !ok {
			continue
		}
		leaders[p.Leader]++
		queues = append(queues, queuePlacement{Name: q.Name, Leader: p.Leader, Members: p.Members, Hops: shares[q.Name]})
		if q.Arguments.MessageTTL == 0 {
			continue // the parking lot
		}
		for _, node := range p.Members {
			replicas[node]++
		}
	}
	return leaders, replicas, queues, nil
}

// delays draws whole ticks uniformly over the run's range (the baseline: its one
// tick), the same sequence for every trial, so the variants carry the same load.
func (r *runner) delays(p trialPlan, spec topology.Spec) func() time.Duration {
	if p.baseline {
		return func() time.Duration { return spec.Resolution }
	}
	random := rand.New(rand.NewPCG(r.cfg.Seed, 0))
	ticks := uint64(1) << r.cfg.Levels // 0 … 2^N − 1
	return func() time.Duration {
		return time.Duration(random.Uint64N(ticks)) * spec.Resolution
	}
}

// delayRange is the longest delay a trial asks for.
func (r *runner) delayRange(p trialPlan, spec topology.Spec) time.Duration {
	if p.baseline {
		return spec.Resolution
	}
	return r.cfg.maxDelay()
}

// trialConns are a trial's own connections: apart for publishing, so that flow
// control never holds up deliveries, and per trial, so that an overloaded one fails alone.
type trialConns struct {
	publish, consume *amqp.Connection
}

func dialTrial(amqpURL string) (trialConns, error) {
	publish, err := messaging.Dial(amqpURL, 10*time.Second)
	if err != nil {
		return trialConns{}, err
	}
	consume, err := messaging.Dial(amqpURL, 10*time.Second)
	if err != nil {
		_ = publish.Close()
		return trialConns{}, err
	}
	return trialConns{publish: publish, consume: consume}, nil
}

func (c trialConns) close() {
	_ = c.publish.Close()
	_ = c.consume.Close()
}

// remove force-destroys a trial's set, its figures taken, then the routes'
// queues, even when ctx has ended, so an interrupted run leaves nothing behind.
func (r *runner) remove(ctx context.Context, created delayset.Remembered) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	spec := created.Spec
	err := r.sets.Destroy(ctx, created, true)
	if err != nil {
		err = fmt.Errorf("remove set %s: %w", spec.Name, err)
	}
	conn, dialErr := messaging.Dial(r.cfg.URL, 10*time.Second)
	if dialErr != nil {
		return errors.Join(err, fmt.Errorf("remove the routes' queues: %w", dialErr))
	}
	defer func() { _ = conn.Close() }()
	for _, route := range spec.Routes {
		err = errors.Join(err, messaging.DeleteQueue(conn, route.Destination))
	}
	return err
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func errorOrNil(message string) error {
	if message == "" {
		return nil
	}
	return errors.New(message)
}
