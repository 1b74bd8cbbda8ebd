package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
)

// The scaling model of a set on a cluster (-model-fit, -model-check), fitted
// by least squares: cpu = idle + a·clients + b·leader hops + c·replica hops.

// modelFile is the results file of the model.
const modelFile = "model.md"

// modelPoint is one node of one main trial: what it did and its CPU.
type modelPoint struct {
	Run, Variant, Node string
	Nodes              int
	Work               nodeWork
	Idle, CPU          float64 // ms per message sent
}

// modelCoefficients are a fit's costs, in ms of CPU per unit of work.
type modelCoefficients struct{ Clients, LeaderHop, ReplicaHop float64 }

func (c modelCoefficients) predict(p modelPoint) float64 {
	return p.Idle + c.Clients*p.Work.Clients + c.LeaderHop*p.Work.LeaderHops + c.ReplicaHop*p.Work.ReplicaHops
}

// writeModel fits the model to the fit runs, checks it against the check
// runs and writes model.md into dir.
func writeModel(fitPaths, checkPaths []string, dir string) error {
	fit, err := modelPoints(fitPaths)
	if err != nil {
		return err
	}
	check, err := modelPoints(checkPaths)
	if err != nil {
		return err
	}
	coefficients, err := fitModel(fit)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, modelFile), []byte(modelMarkdown(fitPaths, checkPaths, fit, check, coefficients)), 0o644)
}

// modelPoints reads every node of every main trial of a set, on a cluster
// whose trials recorded where their queues ran, from the runs' delays.json.
func modelPoints(paths []string) ([]modelPoint, error) {
	var points []modelPoint
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var r report
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		found := pointsOf(path, r)
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no main trial on a cluster recorded where its queues ran and each node's CPU", path)
		}
		points = append(points, found...)
	}
	return points, nil
}

// pointsOf are the model's points of one run.
func pointsOf(path string, r report) []modelPoint {
	e := r.Environment
	var points []modelPoint
	for _, t := range r.Trials {
		if !t.Main || t.Baseline || len(t.Queues) == 0 || len(t.NodeCPU) != len(e.Nodes) || t.Pacing.Sent == 0 {
			continue
		}
		work := workByNode(t.Queues, e.ClientNodes)
		// The broker's idle CPU, before the first trial, shared by its
		// nodes, over the trial's publishing and its longest delay.
		window := (t.Duration + r.Settings.maxDelay()).Seconds()
		idle := e.BrokerIdleCPU / 100 / float64(len(e.Nodes)) * window / float64(t.Pacing.Sent) * 1000
		for i, n := range e.Nodes {
			points = append(points, modelPoint{Run: path, Variant: t.Variant, Node: shortNode(n.Name), Nodes: len(e.Nodes),
				Work: work[n.Name], Idle: idle, CPU: t.perMessage(t.NodeCPU[i]).Seconds() * 1000})
		}
	}
	return points
}

// fitModel solves the least-squares fit of cpu − idle on the three kinds
// of work, without intercept.
func fitModel(points []modelPoint) (modelCoefficients, error) {
	var m [3][4]float64 // the normal equations, augmented
	for _, p := range points {
		x := [3]float64{p.Work.Clients, p.Work.LeaderHops, p.Work.ReplicaHops}
		for i := range 3 {
			for j := range 3 {
				m[i][j] += x[i] * x[j]
			}
			m[i][3] += x[i] * (p.CPU - p.Idle)
		}
	}
	for col := range 3 { // Gauss-Jordan with partial pivoting
		pivot := col
		for row := col + 1; row < 3; row++ {
			if math.Abs(m[row][col]) > math.Abs(m[pivot][col]) {
				pivot = row
			}
		}
		if math.Abs(m[pivot][col]) < 1e-12 {
			return modelCoefficients{}, errors.New("the fit runs do not tell the kinds of work apart: vary the clients and the leaders from node to node")
		}
		m[col], m[pivot] = m[pivot], m[col]
		for row := range 3 {
			if row != col {
				f := m[row][col] / m[col][col]
				for k := col; k < 4; k++ {
					m[row][k] -= f * m[col][k]
				}
			}
		}
	}
	return modelCoefficients{m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]}, nil
}

// modelMarkdown is model.md.
func modelMarkdown(fitPaths, checkPaths []string, fit, check []modelPoint, c modelCoefficients) string {
	var b strings.Builder
	b.WriteString("# A set on a cluster: a model of each node's CPU per message\n\n")
	fmt.Fprintf(&b, "Written by `benchdelays -model-fit %s -model-check %s`, from those results files only.\n\n",
		strings.Join(fitPaths, ","), strings.Join(checkPaths, ","))
	b.WriteString("Each node's CPU per message sent is modelled as its idle CPU spread over the messages plus a cost per unit of each " +
		"kind of work it does for a message: **clients** (its share of the publishing and consuming: the AMQP channels, routing from " +
		"the ingest exchange, the route's queue and its deliveries), **leader hops** (a TTL queue's leader expires each message that " +
		"passes it and dead-letters it to the next queue or out) and **replica hops** (every member of a quorum queue writes each " +
		"message that passes it). The costs are fitted by least squares to every node of every main trial of the fit runs.\n\n")
	fmt.Fprintf(&b, "| cost | ms of CPU |\n|---|--:|\n| per message published and consumed | %.3f |\n| per leader hop | %.3f |\n| per replica hop | %.3f |\n\n",
		c.Clients, c.LeaderHop, c.ReplicaHop)
	b.WriteString("## Each node, measured and modelled\n\n")
	writePointsTable(&b, "The fit runs", fit, c)
	writePointsTable(&b, "The check runs, which the fit did not see", check, c)
	writeBusiest(&b, check, c)
	writeExtrapolation(&b, c)
	return b.String()
}

// writePointsTable writes each node's work, measured CPU and modelled CPU.
func writePointsTable(b *strings.Builder, title string, points []modelPoint, c modelCoefficients) {
	fmt.Fprintf(b, "%s:\n\n", title)
	rows := [][]string{{"run", "variant", "node", "clients", "leader hops", "replica hops", "idle ms/msg", "ms/msg", "model ms/msg", "model ÷ measured"}}
	for _, p := range points {
		predicted := c.predict(p)
		rows = append(rows, []string{p.Run, p.Variant, p.Node, fmt.Sprintf("%.2f", p.Work.Clients), fmt.Sprintf("%.3f", p.Work.LeaderHops),
			fmt.Sprintf("%.3f", p.Work.ReplicaHops), fmt.Sprintf("%.3f", p.Idle), fmt.Sprintf("%.2f", p.CPU), fmt.Sprintf("%.2f", predicted),
			fmt.Sprintf("%.2f", predicted/p.CPU)})
	}
	results.Table(b, rows, "lllrrrrrrr")
	b.WriteString("\n")
}

// writeBusiest compares the busiest node of each check run with the model.
func writeBusiest(b *strings.Builder, points []modelPoint, c modelCoefficients) {
	type key struct{ run, variant string }
	busiest, predicted := map[key]float64{}, map[key]float64{}
	var order []key
	for _, p := range points {
		k := key{p.Run, p.Variant}
		if _, seen := busiest[k]; !seen {
			order = append(order, k)
		}
		busiest[k] = max(busiest[k], p.CPU)
		predicted[k] = max(predicted[k], c.predict(p))
	}
	b.WriteString("The busiest node of each check run, measured and modelled:\n\n")
	rows := [][]string{{"run", "variant", "busiest ms/msg", "model ms/msg", "model ÷ measured"}}
	for _, k := range order {
		rows = append(rows, []string{k.run, k.variant, fmt.Sprintf("%.2f", busiest[k]), fmt.Sprintf("%.2f", predicted[k]),
			fmt.Sprintf("%.2f", predicted[k]/busiest[k])})
	}
	results.Table(b, rows, "llrrr")
	b.WriteString("\n")
}

// Larger clusters: a radix-16 set holding 0–255 ticks has 30 TTL queues, each
// passed by 1/16 of the messages; each queue has modelReplicas members.
const (
	modelQueues   = 30
	modelQueueHop = 1.0 / 16
	modelReplicas = 3
)

// modelLayout is a way to lay a set out on n nodes, and the work of its
// busiest node.
type modelLayout struct {
	name string
	work func(n int) nodeWork
}

// modelLayouts are the layouts the extrapolation compares, each placed ideally:
// one set, a chain per node, and every queue declared through one node.
var modelLayouts = []modelLayout{
	{"one set, replicas on 3, clients spread", func(n int) nodeWork { return busiestOf(n, modelQueues) }},
	{"n copies of the chain, replicas on 3, clients spread", func(n int) nodeWork { return busiestOf(n, modelQueues*n) }},
	{"one set declared through one node, replicas on 3, clients spread", func(n int) nodeWork {
		w := busiestOf(n, modelQueues)
		w.ReplicaHops = modelQueues * modelQueueHop // the declaring node holds every queue
		return w
	}},
}

// busiestOf is the busiest node's work with queues TTL queues of modelReplicas
// members, the messages shared evenly among them and the clients among n nodes.
func busiestOf(n, queues int) nodeWork {
	perQueue := modelQueueHop * modelQueues / float64(queues)
	return nodeWork{Clients: 1 / float64(n), LeaderHops: math.Ceil(float64(queues)/float64(n)) * perQueue,
		ReplicaHops: math.Ceil(float64(queues*min(modelReplicas, n))/float64(n)) * perQueue}
}

// writeExtrapolation writes, for 3 to 50 nodes and each layout, the busiest
// node's CPU per message, which work dominates it, and the msg/s per core.
func writeExtrapolation(b *strings.Builder, c modelCoefficients) {
	b.WriteString("## Larger clusters\n\n")
	b.WriteString("The model applied to a radix-16 set holding 0–255 ticks (30 TTL queues, each passed by 1/16 of the messages) on n nodes, " +
		"each on a machine of its own, at the rate that keeps the busiest node busy (idle work left out): the busiest node's CPU per " +
		"message, the share of it each kind of work takes, and **msg/s per core** = 1 s ÷ that CPU, which the cluster carries per core " +
		"of its busiest node.\n\n")
	rows := [][]string{{"layout", "nodes", "busiest ms/msg", "clients", "leader hops", "replica hops", "first limit", "msg/s per core"}}
	for _, l := range modelLayouts {
		for _, n := range []int{3, 5, 10, 20, 50} {
			w := l.work(n)
			parts := []float64{c.Clients * w.Clients, c.LeaderHop * w.LeaderHops, c.ReplicaHop * w.ReplicaHops}
			total := parts[0] + parts[1] + parts[2]
			names := []string{"clients", "leader hops", "replica hops"}
			first := names[slices.Index(parts, slices.Max(parts))]
			rows = append(rows, []string{l.name, fmt.Sprint(n), fmt.Sprintf("%.3f", total), percentOf(parts[0], total),
				percentOf(parts[1], total), percentOf(parts[2], total), first, results.Rate(1000 / total)})
		}
	}
	results.Table(b, rows, "lrrrrrlr")
}

func percentOf(part, total float64) string { return fmt.Sprintf("%.0f %%", 100*part/total) }
