package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
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
