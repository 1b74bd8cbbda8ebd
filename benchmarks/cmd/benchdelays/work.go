package main

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// What each node of a cluster does for a message: its clients' share, the hops
// its leaders make (expire and dead-letter) and the hops its replicas write.

// queuePlacement is where one queue of a trial's set ran, and how many of
// the trial's messages passed it, per message sent.
type queuePlacement struct {
	Name    string   `json:"name"`
	Leader  string   `json:"leader"`
	Members []string `json:"members,omitempty"`
	Hops    float64  `json:"hops_per_message"`
}

// hopShares is, for each TTL queue of planned, the share of the messages that
// pass it when delays are uniform over 0 … 2^levels − 1 ticks; the baseline's takes all.
func hopShares(planned topology.Topology, radix int, resolution time.Duration, levels int, baseline bool) map[string]float64 {
	shares := map[string]float64{}
	ticks := uint64(1) << levels
	for _, q := range planned.Queues {
		if q.Arguments.MessageTTL == 0 {
			continue // the parking lot
		}
		if baseline {
			shares[q.Name] = 1
			continue
		}
		digit, position := digitOf(uint64(q.Arguments.MessageTTL/resolution.Milliseconds()), uint64(radix))
		count := 0
		for t := range ticks {
			if (t/position)%uint64(radix) == digit {
				count++
			}
		}
		shares[q.Name] = float64(count) / float64(ticks)
	}
	return shares
}

// digitOf splits a TTL queue's ticks, v·radix^k, into v and radix^k.
func digitOf(ticks, radix uint64) (digit, position uint64) {
	position = 1
	for ticks/position >= radix {
		position *= radix
	}
	return ticks / position, position
}

// nodeWork is what one node did per message sent in a trial.
type nodeWork struct {
	Clients, LeaderHops, ReplicaHops float64
}

// workByNode sums each node's share of the clients (clientNodes: each client
// URL's node) and the hops its leaders and replicas made, per message sent.
func workByNode(queues []queuePlacement, clientNodes []string) map[string]nodeWork {
	work := map[string]nodeWork{}
	for _, node := range clientNodes {
		w := work[node]
		w.Clients += 1 / float64(len(clientNodes))
		work[node] = w
	}
	for _, q := range queues {
		w := work[q.Leader]
		w.LeaderHops += q.Hops
		work[q.Leader] = w
		for _, m := range q.Members {
			w := work[m]
			w.ReplicaHops += q.Hops
			work[m] = w
		}
	}
	return work
}

// nodesOfURLs names the node each AMQP URL reaches, by its port among the
// cluster's listeners (GET /api/overview); "" where none listens there.
func nodesOfURLs(ctx context.Context, cfg config) ([]string, error) {
	client, err := rabbithole.NewClient(cfg.Endpoint, cfg.Username, cfg.Password)
	if err != nil {
		return nil, err
	}
	overview, err := client.Overview()
	if err != nil {
		return nil, fmt.Errorf("read the cluster's listeners: %w", err)
	}
	byPort := map[string]string{}
	for _, l := range overview.Listeners {
		if l.Protocol == "amqp" {
			byPort[strconv.Itoa(int(l.Port))] = l.Node
		}
	}
	nodes := make([]string, len(cfg.URLs))
	for i, raw := range cfg.URLs {
		if u, err := url.Parse(raw); err == nil {
			nodes[i] = byPort[cmp.Or(u.Port(), "5672")]
		}
	}
	return nodes, ctx.Err()
}

// workMarkdown is the table of what each node did per message in each main
// trial, beside its CPU: "" for a run that did not record where its queues ran.
func workMarkdown(r report) string {
	var b strings.Builder
	rows := [][]string{{"variant", "node", "ms/msg", "schedulers", "dirty I/O", "other threads", "clients", "leads", "leader hops/msg", "replicas", "replica hops/msg"}}
	for _, v := range variants {
		t, ok := r.mainTrial(v.Name, false)
		if !ok || len(t.Queues) == 0 {
			continue
		}
		work := workByNode(t.Queues, r.Environment.ClientNodes)
		for i, n := range r.Environment.Nodes {
			w, cpu := work[n.Name], "–"
			if i < len(t.NodeCPU) {
				cpu = formatOptionalMs(t.perMessage(t.NodeCPU[i]))
			}
			threads := threadColumns(t, i)
			rows = append(rows, []string{v.Name, shortNode(n.Name), cpu, threads[0], threads[1], threads[2], fmt.Sprintf("%.2f", w.Clients),
				strconv.Itoa(t.Leaders[n.Name]), fmt.Sprintf("%.3f", w.LeaderHops),
				strconv.Itoa(t.Replicas[n.Name]), fmt.Sprintf("%.3f", w.ReplicaHops)})
		}
	}
	if len(rows) == 1 {
		return ""
	}
	b.WriteString("\nWhat each node did per message sent, beside its CPU per message and how its threads shared it (its " +
		"**schedulers**, which run the Erlang processes, its **dirty I/O** threads, which write the queues' files, and the rest): **clients** is its share of the publishing and " +
		"consuming (the clients' AMQP connections to it, over all of them), **leads** the set's queues it led and **replicas** its TTL " +
		"queues it held a member of, as the broker said after declaring them; **leader hops/msg** and **replica hops/msg** weigh each " +
		"TTL queue by the share of the messages that pass it (delays uniform over the range): a TTL queue's leader expires and " +
		"dead-letters each message that passes it, and every member writes it.\n\n")
	results.Table(&b, rows, "llrrrrrrrrr")
	return b.String()
}

// threadColumns are node i's CPU per message in its schedulers, its dirty I/O
// threads and its other threads; "–" when not recorded.
func threadColumns(t trialResult, i int) [3]string {
	if i >= len(t.NodeThreads) || t.NodeThreads[i] == nil {
		return [3]string{"–", "–", "–"}
	}
	var sched, dirtyIO, other float64
	for kind, seconds := range t.NodeThreads[i] {
		switch kind {
		case "erts_sched":
			sched += seconds
		case "erts_dios":
			dirtyIO += seconds
		default:
			other += seconds
		}
	}
	ms := func(seconds float64) string { return formatOptionalMs(t.perMessage(seconds)) }
	return [3]string{ms(sched), ms(dirtyIO), ms(other)}
}

// schedulerFlagPrefixes are the VM flags on how its schedulers wait and how many
// there are, as beam.smp's command line has them (erl's +sbwt is -sbwt there).
var schedulerFlagPrefixes = []string{"-sbwt", "-swt", "-S", "-sbt"}

// schedulerFlags are each process's scheduler flags ("-sbwt none"), "" for none;
// nil when no process has any, or a command line is unreadable.
func schedulerFlags(pids []int) []string {
	flags := make([]string, len(pids))
	anySet := false
	for i, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return nil
		}
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		var found []string
		for j := 0; j+1 < len(args); j++ {
			if slices.ContainsFunc(schedulerFlagPrefixes, func(p string) bool { return strings.HasPrefix(args[j], p) }) {
				found = append(found, args[j]+" "+args[j+1])
			}
		}
		flags[i] = strings.Join(found, " ")
		anySet = anySet || len(found) > 0
	}
	if !anySet {
		return nil
	}
	return flags
}
