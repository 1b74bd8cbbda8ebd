package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const (
	// restartNode is the script's node the restart test runs alone.
	restartNode = 4
	// The set holds delays up to 31 s; messages are due from 1 s to 31 s
	// after publishing, so some are due while the broker is down (about
	// 15 s from the stop) and some after it is back.
	restartLevels     = 5
	restartResolution = time.Second
	restartMessages   = 2000
	restartMinDelay   = time.Second
	// restartKey is the route key of the restart tests' sets.
	restartKey = "restart"
	// The draining test's set: 4 levels, so delays up to 15 s at 1 s and 7.5 s at 500 ms.
	drainingLevels = 4
	// drainedWait is the migration_wait of the apply after the restart: the
	// old generation's statistics count nothing within broker.StatisticsLag
	// of its last message leaving, and every message has arrived by then.
	drainedWait = "1m"
)

// TestFaultBrokerRestart sends 2,000 persistent messages through a quorum
// set on a node of its own, stops the node while they are in flight and
// starts it again: every message must arrive, none early and none parked.
// It reports the extra lateness.
//
// A message whose level queue expired while the broker was down moves on
// when it is back and then waits the full time of its next level, so its
// lateness is the part of the outage after that expiry.
func TestFaultBrokerRestart(t *testing.T) {
	n, client, name, routeQueue := setUpNode(t, restartNode, nodeConfig{}, "faults-restart-")

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
		Steps: []resource.TestStep{{
			Config: setConfig(plainProvider(n.ManagementURL), name, restartLevels, restartResolution, topology.AtLeastOnce, "", route{Queue: routeQueue, Key: restartKey}),
			// The plan after this check also proves the set came back whole.
			Check: func(*terraform.State) error {
				f := newFlight(t, n, name, routeQueue)
				defer f.close()
				set := messaging.Set{IngestExchange: topology.Names(name).Ingest(), Levels: restartLevels, Resolution: restartResolution}
				// The same shuffled order every run: the fault, not the order, varies.
				delays := spreadDelays(restartMessages, restartMinDelay, topology.MaxDelayFor(restartLevels, restartResolution), restartResolution,
					rand.New(rand.NewPCG(1, 2)))
				if err := f.publish(set, delays); err != nil {
					return err
				}
				return f.restart("broker restart (1 node, at-least-once) → quorum queue")
			},
		}},
	})
}

// TestFaultRestartWhileDraining changes the resolution of a quorum
// at-least-once set holding messages, so that the old generation drains,
// publishes more in both key formats and restarts the broker: every message
// of both generations arrives, none early. The next apply, given a wait,
// deletes the drained generation and the plan after is empty. The wait is
// not 0 s because the statistics count a drained queue for up to
// broker.StatisticsLag (DESIGN.md, "What counts as a delivery, by version").
func TestFaultRestartWhileDraining(t *testing.T) {
	n, client, name, routeQueue := setUpNode(t, restartNode, nodeConfig{}, "faults-draining-")
	config := func(resolution time.Duration, migrationWait string) string {
		return setConfig(plainProvider(n.ManagementURL), name, drainingLevels, resolution, topology.AtLeastOnce, migrationWait, route{Queue: routeQueue, Key: restartKey})
	}
	names := topology.Names(name)
	before := messaging.Set{IngestExchange: names.Ingest(), Levels: drainingLevels, Resolution: restartResolution}
	after := messaging.Set{IngestExchange: names.Generation(1).Ingest(), Levels: drainingLevels, Resolution: restartResolution / 2}
	rng := rand.New(rand.NewPCG(3, 4))
	spread := func(n int, set messaging.Set) []time.Duration {
		return spreadDelays(n, set.Resolution, topology.MaxDelayFor(set.Levels, set.Resolution), set.Resolution, rng)
	}
	var f *flight // started by a step
	t.Cleanup(func() { f.close() })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
		Steps: []resource.TestStep{
			{Config: config(restartResolution, "0s")},
			{
				PreConfig: func() {
					f = newFlight(t, n, name, routeQueue)
					if err := f.publish(before, spread(restartMessages/2, before)); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(restartResolution/2, "0s"),
				Check: func(*terraform.State) error {
					if err := f.publish(before, spread(restartMessages/4, before)); err != nil {
						return err
					}
					if err := f.publish(after, spread(restartMessages/4, after)); err != nil {
						return err
					}
					held, err := client.HeldMessages(t.Context(), "/", topology.Generation{Levels: drainingLevels, Radix: topology.DefaultRadix}.Queues(name))
					if err != nil {
						return err
					}
					if len(held) == 0 {
						return fmt.Errorf("the old generation holds no message before the restart: the test proves nothing")
					}
					return nil
				},
			},
			{
				// The restart comes after the step's own plan check, which
				// must still find the old generation holding messages; by
				// the end of it every message has arrived. This apply (of a
				// longer migration_wait) waits until the statistics count
				// nothing in the old generation, checks it exactly and
				// deletes it.
				PreConfig: func() {
					if err := f.restart("broker restart while a generation drains (1 node, at-least-once) → quorum queue"); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(restartResolution/2, drainedWait),
				Check: func(*terraform.State) error {
					want, err := topology.Plan(topology.Spec{Name: name, VHost: "/", Levels: drainingLevels, Resolution: restartResolution / 2,
						QueueType: topology.QueueTypeQuorum, DeadLetterStrategy: topology.AtLeastOnce, Generation: 1, FormatGeneration: 1,
						QueueLeaderLocator: topology.LeaderLocatorBalanced, // a new generation's quorum queues
						Routes:             []topology.Route{{Destination: routeQueue, Key: restartKey}}})
					if err != nil {
						return err
					}
					actual, err := client.ReadSet(t.Context(), "/", name)
					if err != nil {
						return err
					}
					if changes := topology.Diff(want, actual); len(changes) > 0 {
						return fmt.Errorf("the set differs from its new generation alone by %d changes, the first: %s %s", len(changes), changes[0].Kind, changes[0].Reason)
					}
					return nil
				},
			},
		},
	})
}

// flight is messages in flight through a set on node n, and the consumers
// of its route's queue and its parking lot, which count what arrives.
type flight struct {
	t                *testing.T
	n                *node
	conn             *amqp.Connection
	idPrefix         string
	arrivals, parked *ledger
	sent             []messaging.Message
	stop             []func()
}

func newFlight(t *testing.T, n *node, name, routeQueue string) *flight {
	conn, err := messaging.Dial(n.AMQPURL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	f := &flight{t: t, n: n, conn: conn, idPrefix: name + "-", arrivals: newLedger(), parked: newLedger()}
	f.stop = append(f.stop,
		consume(t, []string{n.AMQPURL}, routeQueue, f.idPrefix, f.arrivals),
		consume(t, []string{n.AMQPURL}, topology.Names(name).Unroutable(), f.idPrefix, f.parked))
	return f
}

// close stops the consumers and closes the connection; a flight not
// started yet (nil) has nothing to close.
func (f *flight) close() {
	if f == nil {
		return
	}
	for _, stop := range f.stop {
		stop()
	}
	f.stop = nil
	_ = f.conn.Close()
}

// publish sends one persistent message per delay to set with restartKey and
// returns once the broker has confirmed every one.
func (f *flight) publish(set messaging.Set, delays []time.Duration) error {
	ctx, cancel := context.WithTimeout(f.t.Context(), time.Minute)
	defer cancel()
	started := time.Now()
	sent, err := publishDelayed(ctx, f.conn, set, restartKey, fmt.Sprintf("%s%d-", f.idPrefix, len(f.sent)), delays)
	if err != nil {
		return err
	}
	f.sent = append(f.sent, sent...)
	f.t.Logf("published %d messages to %s (delays %s–%s) in %s", len(sent), set.IngestExchange, slices.Min(delays), slices.Max(delays),
		time.Since(started).Round(time.Millisecond))
	return nil
}

// restart stops the node and starts it again, waits for every message
// sent (calling it lost lossWindow after the last was due and the broker
// back), adds the scenario's row to the fault table and says what went
// wrong: a message lost, parked or early.
func (f *flight) restart(scenario string) error {
	t := f.t
	stopped := time.Now()
	f.n.stop(t)
	f.n.start(t)
	back := time.Now()
	outage := back.Sub(stopped)
	t.Logf("the broker was down for %s", outage.Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	waitCtx, cancelWait := context.WithDeadlineCause(ctx, lastDue(f.sent).Add(outage+lossWindow), errHung)
	defer cancelWait()
	var problems []error
	if err := f.arrivals.waitForAll(waitCtx, f.sent); err != nil {
		problems = append(problems, err)
	}
	f.arrivals.settle(ctx, 2*time.Second)

	row := f.arrivals.row(scenario, f.sent, f.parked, outage)
	row.Test, row.Strategy = t.Name(), topology.AtLeastOnce
	report.addRow(row)
	t.Logf("%d lost, %d parked, %d duplicated, %d early; lateness p99 %s, max %s",
		row.Lost, row.Parked, row.Duplicated, row.Early, row.P99.Round(time.Millisecond), row.Max.Round(time.Millisecond))
	if row.Lost > 0 || row.Parked > 0 || row.Early > 0 {
		problems = append(problems, fmt.Errorf("%d lost, %d parked and %d early of %d messages", row.Lost, row.Parked, row.Early, row.Messages))
	}
	return joinErrors(problems)
}
