package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The cluster: the script's nodes 1–3.
var clusterNodes = []int{1, 2, 3}

const (
	clusterLevels     = 5
	clusterResolution = time.Second
	// Messages per destination.
	clusterMessagesEach = 700
	clusterMinDelay     = time.Second
	// The node is killed this long after the last publish was confirmed,
	// so messages sit in every level, and stays down this long.
	clusterKillAfter = 3 * time.Second
	clusterDownFor   = 10 * time.Second
	// Messages to the single-replica destination are due this long after
	// the last publish at the earliest, well after the kill, so no
	// dead-letter worker has published to it before.
	clusterAwayMinDelay = clusterKillAfter + 5*time.Second

	// dlxConfirmTimeoutEnv overrides clusterConfirmTimeout, e.g. with
	// 180s, the broker's default, to see what the setting prevents.
	dlxConfirmTimeoutEnv = "FAULTS_DLX_CONFIRM_TIMEOUT"
	// clusterConfirmTimeout is the cluster's
	// rabbit.dead_letter_worker_publisher_confirm_timeout: how long the
	// at-least-once dead-letter worker waits for a target queue to confirm
	// or after it refused, before it publishes the message again.
	clusterConfirmTimeout = 10 * time.Second
	// How long at-most-once, which may lose messages, is waited for after
	// two confirm timeouts once the lost node is back: the worker's round of
	// publishing again, the consumer attaching again. Past it a message
	// counts as lost; at-least-once, which must lose none, gets lossWindow.
	clusterRecoveryMargin = 5 * time.Second
	// A message counts as held when it arrives this long after it was due
	// and the lost node was back.
	clusterHeld = time.Second
)

// TestFaultClusterNodeLoss applies a quorum set to a 3-node cluster, its
// leaders spread over the nodes, and kills (kill -9) the node that leads the
// most of its level queues while messages are in flight, then starts it
// again; once per dead-letter strategy. Its routes go to a three-replica
// quorum queue, a classic queue on the lost node and a one-replica quorum
// queue on it. At-least-once must lose nothing (how late each message came
// is reported); at-most-once may lose; neither may be early, and the set
// must come through whole. DESIGN.md ("Fault tests: a node lost") says why
// each destination behaves as it does.
func TestFaultClusterNodeLoss(t *testing.T) {
	requireFaults(t)
	confirmTimeout := clusterConfirmTimeout
	if s := os.Getenv(dlxConfirmTimeoutEnv); s != "" {
		var err error
		if confirmTimeout, err = time.ParseDuration(s); err != nil || confirmTimeout <= 0 {
			t.Fatalf("%s=%q is not a positive duration", dlxConfirmTimeoutEnv, s)
		}
	}
	nodes := startNodes(t, nodeConfig{
		AdvancedConfig: fmt.Sprintf("[{rabbit, [{dead_letter_worker_publisher_confirm_timeout, %d}]}].", confirmTimeout.Milliseconds()),
	}, clusterNodes...)
	t.Logf("dead_letter_worker_publisher_confirm_timeout = %s", confirmTimeout)
	t.Run("leaders", func(t *testing.T) { testLeadersSpread(t, nodes) })
	for _, strategy := range topology.DeadLetterStrategies {
		t.Run(string(strategy), func(t *testing.T) { testNodeLoss(t, nodes, strategy, confirmTimeout) })
	}
}

// destination is one route of the node-loss set and what is expected of it.
type destination struct {
	route
	description string
	minDelay    time.Duration
	// whether messages may be parked, and whether some must be held
	mayPark, mustHold bool
}

// lossRun is one node-loss scenario: a set, its destinations and the node
// that will be lost.
type lossRun struct {
	nodes          []*node
	name           string
	strategy       topology.DeadLetterStrategy
	confirmTimeout time.Duration
	destinations   []destination // replicated, classic on the victim, single replica on the victim
	victim         *node
}

func testNodeLoss(t *testing.T, nodes []*node, strategy topology.DeadLetterStrategy, confirmTimeout time.Duration) {
	apiNode := nodes[0]
	client := brokerClient(t, apiNode.ManagementURL)
	name := "faults-loss-" + strings.ToLower(acctest.RandString(6))
	replicated := destination{route: route{Queue: name + ".replicated", Key: "replicated"},
		description: "quorum queue, 3 replicas", minDelay: clusterMinDelay}
	classic := destination{route: route{Queue: name + ".classic", Key: "classic"},
		description: "classic queue on the lost node", minDelay: clusterMinDelay, mayPark: true}
	single := destination{route: route{Queue: name + ".single", Key: "single"},
		description: "quorum queue, 1 replica on the lost node", minDelay: clusterAwayMinDelay, mustHold: strategy == topology.AtLeastOnce}
	run := &lossRun{nodes: nodes, name: name, strategy: strategy, confirmTimeout: confirmTimeout,
		destinations: []destination{replicated, classic, single}}
	declareQueue(t, client, replicated.Queue, topology.QueueTypeQuorum)
	provider := plainProvider(apiNode.ManagementURL)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
		Steps: []resource.TestStep{
			{Config: setConfig(provider, name, clusterLevels, clusterResolution, strategy, "", replicated.route)},
			{
				// The victim is known once the set's queues have leaders;
				// the other destinations go on it, and the set gets routes
				// to them in place.
				PreConfig: func() {
					// The set's leaders are spread, so dead-lettering
					// crosses nodes and the victim leads only some of the
					// level queues.
					victim, err := mostLeaders(t, nodes, topology.Names(name), clusterLevels)
					if err != nil {
						t.Fatal(err)
					}
					run.victim = victim
					t.Logf("%s leads the most level queues; it will be killed, and holds %s and %s", victim.Name, classic.Queue, single.Queue)
					declareQueue(t, brokerClient(t, victim.ManagementURL), classic.Queue, topology.QueueTypeClassic)
					declareSingleReplicaQueue(t, victim, single.Queue)
				},
				Config: setConfig(provider, name, clusterLevels, clusterResolution, strategy, "", replicated.route, classic.route, single.route),
				// The plan after this check also proves the set came through whole.
				Check: func(*terraform.State) error { return run.loseNodeInFlight(t) },
			},
		},
	})
}

func (r *lossRun) loseNodeInFlight(t *testing.T) error {
	names := topology.Names(r.name)
	set := messaging.Set{IngestExchange: names.Ingest(), Levels: clusterLevels, Resolution: clusterResolution}
	maxDelay := topology.MaxDelayFor(clusterLevels, clusterResolution)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	var survivorURLs []string
	for _, n := range r.nodes {
		if n != r.victim {
			survivorURLs = append(survivorURLs, n.AMQPURL)
		}
	}
	conn, err := messaging.Dial(survivorURLs[0], 10*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()

	// The same shuffled order every run: the faults, not the order, vary.
	rng := rand.New(rand.NewPCG(1, 2))
	parked := newLedger()
	stopParking := consume(t, survivorURLs, names.Unroutable(), r.name+"-", parked)
	defer stopParking()
	arrivals := make([]*ledger, len(r.destinations))
	sent := make([][]messaging.Message, len(r.destinations))
	published := time.Now()
	for i, d := range r.destinations {
		idPrefix := fmt.Sprintf("%s-%s-", r.name, d.Key)
		arrivals[i] = newLedger()
		stopConsuming := consume(t, survivorURLs, d.Queue, idPrefix, arrivals[i])
		defer stopConsuming()
		delays := spreadDelays(clusterMessagesEach, d.minDelay, maxDelay, clusterResolution, rng)
		if sent[i], err = publishDelayed(ctx, conn, set, d.Key, idPrefix, delays); err != nil {
			return err
		}
	}
	t.Logf("published %d messages (delays %s–%s) in %s", clusterMessagesEach*len(r.destinations), clusterMinDelay, maxDelay,
		time.Since(published).Round(time.Millisecond))

	time.Sleep(clusterKillAfter)
	killed := time.Now()
	r.victim.kill(t)
	time.Sleep(clusterDownFor)
	r.victim.start(t)
	back := time.Now()
	outage := back.Sub(killed)
	t.Logf("%s was down for %s", r.victim.Name, outage.Round(time.Millisecond))
	if _, err := mostLeaders(t, r.nodes, names, clusterLevels); err != nil {
		return err
	}

	// At-most-once's loss is a figure, counted over a window; at-least-once
	// must lose nothing, and gets a generous one.
	window := 2*r.confirmTimeout + clusterRecoveryMargin
	if r.strategy == topology.AtLeastOnce {
		window = 2*r.confirmTimeout + lossWindow
	}
	var problems []error
	for i, d := range r.destinations {
		// Parked messages never arrive: wait for the rest.
		var expected []messaging.Message
		for _, m := range sent[i] {
			if !d.mayPark || !parked.has(m.ID) {
				expected = append(expected, m)
			}
		}
		waitCtx, cancelWait := context.WithDeadline(ctx, latest(lastDue(sent[i]), back).Add(window))
		err := arrivals[i].waitForAll(waitCtx, expected)
		cancelWait()
		if err != nil && r.strategy == topology.AtLeastOnce {
			problems = append(problems, fmt.Errorf("to %s: %w", d.Queue, err))
			logQueueDepths(t, r.nodes)
		}
	}
	parked.settle(ctx, 3*time.Second)
	for i, d := range r.destinations {
		arrivals[i].settle(ctx, 3*time.Second)
		row := arrivals[i].row(fmt.Sprintf("node loss (3 nodes, %s) → %s", r.strategy, d.description), sent[i], parked, outage)
		held, maxHeld := 0, time.Duration(0)
		for _, a := range arrivals[i].arrivals() {
			afterBack := a.ArrivedAt.Sub(latest(a.Message.Due(), back))
			if afterBack > clusterHeld {
				held++
			}
			maxHeld = max(maxHeld, afterBack)
		}
		row.Test, _, _ = strings.Cut(t.Name(), "/")
		row.Strategy, row.Destination, row.ConfirmTimeout, row.AfterBack = r.strategy, d.Key, r.confirmTimeout, maxHeld
		report.addRow(row)
		t.Logf("→ %s: %d lost, %d parked, %d duplicated, %d early; lateness p99 %s, max %s; %d held more than %s after they were due and the node was back, the longest %s",
			d.description, row.Lost, row.Parked, row.Duplicated, row.Early, row.P99.Round(time.Millisecond), row.Max.Round(time.Millisecond),
			held, clusterHeld, maxHeld.Round(time.Millisecond))
		if row.Early > 0 {
			problems = append(problems, fmt.Errorf("%d messages to %s arrived early", row.Early, d.Queue))
		}
		if row.Parked > 0 && !d.mayPark {
			problems = append(problems, fmt.Errorf("%d messages to %s were parked in %s", row.Parked, d.Queue, names.Unroutable()))
		}
		if r.strategy == topology.AtLeastOnce && row.Lost > 0 {
			problems = append(problems, fmt.Errorf("at-least-once lost %d of %d messages to %s", row.Lost, row.Messages, d.Queue))
		}
		if d.mustHold && held == 0 {
			problems = append(problems, fmt.Errorf("no message to %s waited for the confirm timeout, so the test did not show its bound", d.Queue))
		}
	}
	return joinErrors(problems)
}

// declareSingleReplicaQueue declares a quorum queue with its only replica
// on n, and deletes it when the test ends.
func declareSingleReplicaQueue(t *testing.T, n *node, name string) {
	t.Helper()
	conn, err := messaging.Dial(n.AMQPURL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ch.Close() }()
	args := amqp.Table{"x-queue-type": string(topology.QueueTypeQuorum), "x-quorum-initial-group-size": 1}
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declaring %s with one replica on %s: %v", name, n.Name, err)
	}
	t.Cleanup(func() {
		conn, err := messaging.Dial(n.AMQPURL, 10*time.Second)
		if err != nil {
			t.Errorf("deleting %s: %v", name, err)
			return
		}
		defer func() { _ = conn.Close() }()
		if err := messaging.DeleteQueue(conn, name); err != nil {
			t.Error(err)
		}
	})
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// mostLeaders returns the node that leads the most of the set's level
// queues, as the management API of the first node that answers says, and
// logs where every queue's leader is; an error when they all lead on one
// node.
func mostLeaders(t *testing.T, nodes []*node, names topology.Names, levels int) (*node, error) {
	var queues []rabbithole.QueueInfo
	var err error
	for _, n := range nodes {
		var rmq *rabbithole.Client
		if rmq, err = rabbithole.NewClient(n.ManagementURL, "guest", "guest"); err != nil {
			return nil, err
		}
		if queues, err = rmq.ListQueuesIn("/"); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("listing queues and their leaders: %w", err)
	}
	leaders := map[string][]string{}
	for _, q := range queues {
		leaders[q.Leader] = append(leaders[q.Leader], q.Name)
	}
	levelsLed := func(n *node) int {
		led := 0
		for level := range levels {
			if slices.Contains(leaders[n.Name], names.Level(level)) {
				led++
			}
		}
		return led
	}
	var most *node
	var summary []string
	leading := 0
	for _, n := range nodes {
		summary = append(summary, fmt.Sprintf("%s leads %v", n.Name, leaders[n.Name]))
		if most == nil || levelsLed(n) > levelsLed(most) {
			most = n
		}
		if levelsLed(n) > 0 {
			leading++
		}
	}
	t.Logf("queue leaders: %s", strings.Join(summary, "; "))
	if leading < 2 {
		return nil, fmt.Errorf("the set's level queues lead on %d node: the provider did not spread them (%s)", leading, strings.Join(summary, "; "))
	}
	return most, nil
}

// logQueueDepths logs what each queue holds, dead-lettered messages waiting
// for at-least-once delivery (messages_dlx) included, as the first node that
// answers says. It helps to tell where missing messages are.
func logQueueDepths(t *testing.T, nodes []*node) {
	for _, n := range nodes {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, n.ManagementURL+"/api/queues/%2F?columns=name,type,node,leader,messages,messages_dlx,state", nil)
		if err != nil {
			t.Log(err)
			return
		}
		req.SetBasicAuth("guest", "guest")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		var queues []map[string]any
		err = json.NewDecoder(resp.Body).Decode(&queues)
		_ = resp.Body.Close()
		if err != nil {
			t.Logf("queue depths from %s: %v", n.Name, err)
			return
		}
		var lines []string
		for _, q := range queues {
			lines = append(lines, fmt.Sprintf("%v (%v on %v%v, %v): %v messages, %v dead-lettered waiting", q["name"], q["type"], q["node"], q["leader"], q["state"], q["messages"], q["messages_dlx"]))
		}
		t.Logf("queues, as %s says:\n%s", n.Name, strings.Join(lines, "\n"))
		return
	}
}
