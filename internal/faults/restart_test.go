package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
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
	// How late a message may be beyond the outage: the broker's boot after
	// it answers again, and dead-lettering the backlog of expired messages.
	restartLatenessMargin = 10 * time.Second
	// A message whose first level lets it go this long after the broker
	// answers again must be as punctual as without a fault.
	restartSettledAfter = 2 * time.Second
	restartPunctual     = 500 * time.Millisecond
)

// TestFaultBrokerRestart sends 2,000 persistent messages through a quorum
// set on a node of its own, stops the node while they are in flight and
// starts it again: every message must arrive, none early, and those that
// left no queue during the outage on time. It reports the extra lateness.
//
// A message whose level queue expired while the broker was down moves on
// when it is back and then waits the full time of its next level, so its
// lateness is the part of the outage after that expiry.
func TestFaultBrokerRestart(t *testing.T) {
	requireFaults(t)
	n := startNodes(t, nodeConfig{}, restartNode)[0]
	client := brokerClient(t, n.ManagementURL)
	name := "faults-restart-" + strings.ToLower(acctest.RandString(6))
	routeQueue := name + ".work"
	declareQueue(t, client, routeQueue, topology.QueueTypeQuorum)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
		Steps: []resource.TestStep{{
			Config: setConfig(plainProvider(n.ManagementURL), name, restartLevels, restartResolution, topology.AtLeastOnce, route{Queue: routeQueue, Key: "restart"}),
			// The plan after this check also proves the set came back whole.
			Check: func(*terraform.State) error { return restartInFlight(t, n, name, routeQueue) },
		}},
	})
}

func restartInFlight(t *testing.T, n *node, name, routeQueue string) error {
	set := messaging.Set{IngestExchange: topology.Names(name).Ingest(), Levels: restartLevels, Resolution: restartResolution}
	maxDelay := topology.MaxDelayFor(restartLevels, restartResolution)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	conn, err := messaging.Dial(n.AMQPURL, 10*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	idPrefix := name + "-"
	arrivals := newLedger()
	stopConsuming := consume(t, []string{n.AMQPURL}, routeQueue, idPrefix, arrivals)
	defer stopConsuming()
	parked := newLedger()
	stopParking := consume(t, []string{n.AMQPURL}, topology.Names(name).Unroutable(), idPrefix, parked)
	defer stopParking()

	// The same shuffled order every run: the fault, not the order, varies.
	delays := spreadDelays(restartMessages, restartMinDelay, maxDelay, restartResolution, rand.New(rand.NewPCG(1, 2)))
	published := time.Now()
	sent, err := publishDelayed(ctx, conn, set, "restart", idPrefix, delays)
	if err != nil {
		return err
	}
	t.Logf("published %d messages (delays %s–%s) in %s", len(sent), restartMinDelay, maxDelay, time.Since(published).Round(time.Millisecond))

	stopped := time.Now()
	n.stop(t)
	n.start(t)
	back := time.Now()
	outage := back.Sub(stopped)
	t.Logf("the broker was down for %s", outage.Round(time.Millisecond))

	waitCtx, cancelWait := context.WithDeadline(ctx, lastDue(sent).Add(outage+restartLatenessMargin))
	defer cancelWait()
	var problems []error
	if err := arrivals.waitForAll(waitCtx, sent); err != nil {
		problems = append(problems, err)
	}
	arrivals.settle(ctx, 2*time.Second)

	row := arrivals.row("broker restart (1 node, at-least-once) → quorum queue", sent, parked, outage)
	row.Test, row.Strategy = t.Name(), topology.AtLeastOnce
	report.addRow(row)
	t.Logf("%d lost, %d parked, %d duplicated, %d early; lateness p99 %s, max %s",
		row.Lost, row.Parked, row.Duplicated, row.Early, row.P99.Round(time.Millisecond), row.Max.Round(time.Millisecond))
	if row.Lost > 0 || row.Parked > 0 || row.Early > 0 {
		problems = append(problems, fmt.Errorf("%d lost, %d parked and %d early of %d messages", row.Lost, row.Parked, row.Early, row.Messages))
	}
	for _, a := range arrivals.arrivals() {
		switch {
		case a.Lateness > outage+restartLatenessMargin:
			problems = append(problems, fmt.Errorf("%s (delay %s) arrived %s late, more than the outage %s and %s",
				a.Message.ID, a.Message.Delay, a.Lateness, outage, restartLatenessMargin))
		case firstHopDue(a.Message, restartResolution).After(back.Add(restartSettledAfter)) && a.Lateness > restartPunctual:
			problems = append(problems, fmt.Errorf("%s (delay %s) left its first level queue %s after the broker was back but arrived %s late",
				a.Message.ID, a.Message.Delay, firstHopDue(a.Message, restartResolution).Sub(back).Round(time.Millisecond), a.Lateness))
		}
	}
	return joinErrors(problems)
}
