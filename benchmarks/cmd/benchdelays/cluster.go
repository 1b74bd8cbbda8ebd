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

// clusterMarkdown is the section on a cluster's nodes: each main trial's leaders,
// each node's CPU per message, and the busiest node's bound; "" off a cluster.
func clusterMarkdown(r report) string {
	if !r.Environment.cluster() {
		return ""
	}
	nodes := r.Environment.Nodes
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Per node of the cluster\n\n")
	fmt.Fprintf(&b, "The %d nodes ran on this one machine and shared its CPUs with each other and with this program. For each set at %s msg/s: "+
		"the queues of the set each node led (the TTL queues and the parking lot, as the broker said right after declaring them), each node's "+
		"CPU per message sent (its process's CPU time during the trial, its background work included), and the busiest node's. "+
		"On machines of their own, a node with C cores carries at most C ÷ (its CPU per message) messages per second, so the cluster's rate is "+
		"bounded by its busiest node: **msg/s per core** is 1 s ÷ the busiest node's CPU per message. That bound leaves out the network between "+
		"machines and the publishers and consumers (here this program: **own CPU** in the table above), and assumes each node keeps "+
		"the CPU per message it had here. The **highest rate** is the search's on this machine, where the nodes share its cores.\n\n",
		len(nodes), results.Rate(r.Settings.Rate))
	header := []string{"variant", "leaders"}
	for _, n := range nodes {
		header = append(header, shortNode(n.Name)+" ms/msg")
	}
	header = append(header, "cluster ms/msg", "busiest node", "msg/s per core", "highest rate here")
	rows := [][]string{header}
	for _, v := range variants {
		t, ok := r.mainTrial(v.Name, false)
		if !ok {
			continue
		}
		row := []string{v.Name, formatLeaders(t.Leaders, nodes)}
		busiest, busiestNode := time.Duration(-1), "–"
		for i, n := range nodes {
			cell := "–"
			if i < len(t.NodeCPU) {
				perMessage := t.perMessage(t.NodeCPU[i])
				cell = formatOptionalMs(perMessage)
				if perMessage > busiest {
					busiest, busiestNode = perMessage, shortNode(n.Name)
				}
			}
			row = append(row, cell)
		}
		perCore := "–"
		if busiest > 0 {
			perCore = results.Rate(float64(time.Second) / float64(busiest))
		}
		highest := "–"
		if s, ok := r.search(v.Name, false); ok {
			highest = formatHighest(s)
		}
		row = append(row, formatOptionalMs(t.perMessage(t.BrokerCPU)), busiestNode, perCore, highest)
		rows = append(rows, row)
	}
	align := "ll" + strings.Repeat("r", len(nodes)) + "rlrr"
	results.Table(&b, rows, align)
	b.WriteString(workMarkdown(r))
	return b.String()
}

// formatLeaders writes how many queues each node led, in the order of nodes:
// "rabbit-f7 17 · rabbit-f8 0"; "–" when unknown.
func formatLeaders(leaders map[string]int, nodes []clusterNode) string {
	if leaders == nil {
		return "–"
	}
	parts := make([]string, 0, len(nodes)+1)
	counted := 0
	for _, n := range nodes {
		parts = append(parts, shortNode(n.Name)+" "+strconv.Itoa(leaders[n.Name]))
		counted += leaders[n.Name]
	}
	total := 0
	for _, count := range leaders {
		total += count
	}
	if other := total - counted; other > 0 {
		parts = append(parts, "no leader "+strconv.Itoa(other))
	}
	return strings.Join(parts, " · ")
}

// shortNode is a node's name without its host, which every node of a
// cluster on one machine shares.
func shortNode(name string) string {
	short, _, _ := strings.Cut(name, "@")
	return short
}

// nodeOfPID is the name of the cluster's node whose process is the one
// the run talked to.
func nodeOfPID(e environment) string {
	for _, n := range e.Nodes {
		if n.PID == e.BrokerPID {
			return shortNode(n.Name)
		}
	}
	return "?"
}

// clientsWhere says through which nodes the sets were declared and the messages
// went, and with which scheduler flags the nodes ran.
func clientsWhere(e environment, s settings) string {
	flags := ""
	if len(e.NodeFlags) > 0 && e.NodeFlags[0] != "" {
		flags = fmt.Sprintf(" The nodes' Erlang VMs ran with %s (the first node's command line).", e.NodeFlags[0])
	}
	if len(s.ClientURLs) < 2 {
		return fmt.Sprintf("The sets were declared, and the messages published and consumed, through one node, %s (process %d): "+
			"its management API and its AMQP listener.%s", nodeOfPID(e), e.BrokerPID, flags)
	}
	declared := fmt.Sprintf("The sets were declared through the management API of %s (process %d)", nodeOfPID(e), e.BrokerPID)
	if s.GroupSize > 0 {
		declared += fmt.Sprintf(", with x-quorum-initial-group-size %d, each quorum queue through the nodes in turn as the provider declares it", s.GroupSize)
	}
	return fmt.Sprintf("%s. Each trial spread its publishers and consumers over %d AMQP URLs, one per node, round-robin (%s): message i "+
		"was published through URL i mod %d with a route key of its own, whose queue (classic) was declared and consumed through the same URL, "+
		"so each node published, routed and delivered its share.%s", declared, len(s.ClientURLs), strings.Join(s.ClientURLs, ", "), len(s.ClientURLs), flags)
}

// scriptNodes names the nodes of scripts/rabbitmq-nodes.sh a cluster ran
// on, by their numbers: "nodes 7, 8 and 9" for rabbit-f7@… to rabbit-f9@….
func scriptNodes(nodes []clusterNode) string {
	numbers := make([]string, len(nodes))
	for i, n := range nodes {
		numbers[i] = strings.TrimPrefix(shortNode(n.Name), "rabbit-f")
	}
	if len(numbers) < 2 {
		return "node " + strings.Join(numbers, "")
	}
	return "nodes " + strings.Join(numbers[:len(numbers)-1], ", ") + " and " + numbers[len(numbers)-1]
}

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
