package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
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
}

// trialPlan says what one trial measures.
type trialPlan struct {
	variant  variant
	baseline bool
	rate     float64
	duration time.Duration
	main     bool
}

// spec is the set a trial declares: the measured layout in the variant's
// radix, with the fewest digits that hold the run's range, or for the
// baseline a one-level set whose only TTL queue holds every message for the
// baseline delay, both of the variant's queue type and strategy and with one
// route to a queue of their own.
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
		Routes: []topology.Route{{Destination: name + ".work", Key: routeKey}},
	}
}

// trial declares a fresh set, publishes to it at a paced rate while
// consuming its route's queue, waits until every message has arrived or is
// lost, counts, and removes the set whatever happened.
func (r *runner) trial(ctx context.Context, p trialPlan) (result trialResult) {
	spec := r.spec(p)
	route := spec.Routes[0].Destination
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
			result.NodeCPU = cpuBefore.nodeSeconds(cpuAfter)
		}
	}()
	fail := func(err error) {
		result.Error = errors.Join(errorOrNil(result.Error), err).Error()
	}

	conns, err := dialTrial(r.cfg.URL)
	if err != nil {
		fail(err)
		return result
	}
	defer conns.close()
	planned, err := topology.Plan(spec)
	if err != nil {
		fail(err)
		return result
	}
	// The route's queue exists before the set's binding to it, as a user's would.
	if err := messaging.DeclareQueue(conns.consume, route); err != nil {
		fail(err)
		return result
	}
	defer func() {
		if err := r.remove(ctx, spec, route); err != nil {
			fail(err)
		}
	}()
	if err := r.client.Apply(ctx, spec.VHost, topology.Diff(planned, topology.Topology{VHost: spec.VHost}), broker.ApplyOptions{}); err != nil {
		fail(fmt.Errorf("declare set %s: %w", spec.Name, err))
		return result
	}
	if r.cluster {
		if result.Leaders, err = r.leaders(ctx, spec.VHost, planned); err != nil {
			fail(err)
			return result
		}
	}

	consumer, err := messaging.NewConsumer(conns.consume, route, messaging.ConsumerOptions{IDPrefix: spec.Name + "-", Prefetch: r.cfg.Prefetch})
	if err != nil {
		fail(err)
		return result
	}
	defer func() { _ = consumer.Close() }()

	var mu sync.Mutex
	var confirmations []messaging.Confirmation
	publisher, err := messaging.NewStreamPublisher(conns.publish, topology.Names(spec.Name).Ingest(), messaging.StreamOptions{
		MaxInFlight: r.cfg.MaxInFlight,
		OnConfirm: func(c messaging.Confirmation) {
			mu.Lock()
			defer mu.Unlock()
			confirmations = append(confirmations, c)
		},
	})
	if err != nil {
		fail(err)
		return result
	}
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
	send := func(ctx context.Context, routingKey string, m messaging.Message) error {
		_, err := publisher.Publish(ctx, routingKey, m)
		return err
	}
	result.Pacing, err = messaging.PublishPaced(ctx, send, messaging.NewSchedule(p.rate, p.duration), r.cfg.Tick, r.cfg.AbandonLag, start, func(i int) (string, messaging.Message) {
		delay := delays()
		key, _ := set.RoutingKey(routeKey, delay) // delays() stays within the set's range
		return key, messaging.Message{ID: fmt.Sprintf("%s-%07d", spec.Name, i), Delay: delay}
	})
	if err != nil {
		fail(err)
	}
	flushCtx, cancelFlush := context.WithTimeout(ctx, 60*time.Second)
	err = publisher.Flush(flushCtx)
	cancelFlush()
	if err != nil {
		fail(err)
	}
	if err := publisher.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
		fail(err)
	}

	// Wait until every acked message has arrived, or the last one is
	// overdue by the loss window: then the missing ones are lost.
	mu.Lock()
	acked, lastDue := 0, start
	for _, c := range confirmations {
		if c.Acked {
			acked++
			lastDue = latest(lastDue, c.Message.Due())
		}
	}
	mu.Unlock()
	waitCtx, cancelWait := context.WithDeadline(ctx, lastDue.Add(r.cfg.LossWindow))
	err = consumer.WaitFor(waitCtx, acked)
	if err != nil && waitCtx.Err() == nil {
		fail(err) // the consumer stopped, not the clock
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
	// Give a late duplicate a moment to show.
	settleCtx, cancelSettle := context.WithTimeout(ctx, 5*r.cfg.Settle)
	if err := consumer.Settle(settleCtx, r.cfg.Settle); err != nil && settleCtx.Err() == nil {
		fail(err)
	}
	cancelSettle()
	if err := consumer.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
		fail(err)
	}
	unroutable, err := messaging.ReadyMessages(conns.consume, topology.Names(spec.Name).Unroutable())
	if err != nil {
		fail(err)
	}

	mu.Lock()
	defer mu.Unlock()
	result.Measurement = measure(observations{
		format:        set.KeyFormat(),
		confirmations: confirmations, arrivals: consumer.Arrivals(), duplicates: consumer.Duplicates(),
		foreign: len(consumer.Foreign()), unroutable: unroutable,
		start: start, duration: p.duration, longestDelay: r.delayRange(p, spec),
		lossWindow: r.cfg.LossWindow,
	})
	return result
}

// leaders counts the queues of a declared set that each node leads.
func (r *runner) leaders(ctx context.Context, vhost string, planned topology.Topology) (map[string]int, error) {
	placements, err := r.client.ReadPlacements(ctx, vhost, planned.QueueNames())
	if err != nil {
		return nil, fmt.Errorf("read where the set's queues run: %w", err)
	}
	counts := map[string]int{}
	for _, p := range placements {
		counts[p.Leader]++
	}
	return counts, nil
}

// delays returns a generator of the delays a trial asks for: whole ticks,
// uniform over the run's range (that of -levels binary digits, whatever the
// set's radix), or for the baseline always its one tick. Every trial draws
// the same sequence from the run's seed, so the variants carry the same load.
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

// trialConns are a trial's own connections. Publishing and consuming use
// separate ones, so that the broker's flow control of a busy publisher
// never holds up deliveries; each trial dials its own, so a trial that
// overloads the broker until it closes a connection fails alone, not every
// trial after it.
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

// remove deletes a trial's set the way the provider destroys one with
// force_destroy (read it, diff against nothing, apply), then the route's
// queue, over a connection of its own since the trial's may be closed. It
// runs even when ctx has ended, so an interrupted run leaves nothing behind.
func (r *runner) remove(ctx context.Context, spec topology.Spec, route string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	err := r.client.DeleteSet(ctx, spec.VHost, spec.Name, broker.ApplyOptions{ForceDeleteQueues: true})
	if err != nil {
		err = fmt.Errorf("remove set %s: %w", spec.Name, err)
	}
	conn, dialErr := messaging.Dial(r.cfg.URL, 10*time.Second)
	if dialErr != nil {
		return errors.Join(err, fmt.Errorf("remove queue %s: %w", route, dialErr))
	}
	defer func() { _ = conn.Close() }()
	return errors.Join(err, messaging.DeleteQueue(conn, route))
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
