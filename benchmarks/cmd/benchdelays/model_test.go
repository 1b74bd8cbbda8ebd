package main

import (
	"math"
	"strings"
	"testing"
)

// TestFitModel recovers the costs that made the points: 0.5 ms per
// message published and consumed, 0.2 per leader hop, 0.3 per replica hop,
// over idle work of 0.05 ms.
func TestFitModel(t *testing.T) {
	t.Parallel()
	truth := modelCoefficients{Clients: 0.5, LeaderHop: 0.2, ReplicaHop: 0.3}
	var points []modelPoint
	for _, w := range []nodeWork{
		{Clients: 1, LeaderHops: 1.875, ReplicaHops: 1.875}, {ReplicaHops: 1.875},
		{Clients: 1, LeaderHops: 0.625, ReplicaHops: 1.875}, {LeaderHops: 0.625, ReplicaHops: 1.875},
		{Clients: 0.2, LeaderHops: 0.375, ReplicaHops: 1.125},
	} {
		p := modelPoint{Work: w, Idle: 0.05}
		p.CPU = truth.predict(p)
		points = append(points, p)
	}
	got, err := fitModel(points)
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]float64{"clients": {got.Clients, truth.Clients}, "leader": {got.LeaderHop, truth.LeaderHop},
		"replica": {got.ReplicaHop, truth.ReplicaHop}} {
		if math.Abs(pair[0]-pair[1]) > 1e-9 {
			t.Errorf("%s cost %g, want %g", name, pair[0], pair[1])
		}
	}
	// Clients and leaders alike on every node, as in runs with both spread:
	// the fit cannot tell them from the replicas.
	if _, err := fitModel(points[4:]); err == nil {
		t.Error("a fit of one kind of node told the kinds of work apart")
	}
}

// TestBusiestOf: the busiest node of n holds the most queues and replicas
// any node must when they are spread as evenly as they can be.
func TestBusiestOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, queues int
		want      nodeWork
	}{
		{3, 30, nodeWork{Clients: 1.0 / 3, LeaderHops: 10.0 / 16, ReplicaHops: 30.0 / 16}},
		{5, 30, nodeWork{Clients: 0.2, LeaderHops: 6.0 / 16, ReplicaHops: 18.0 / 16}},
		// 50 nodes, 30 queues: a node leads at most one and holds at most 2 of the 90 replicas.
		{50, 30, nodeWork{Clients: 0.02, LeaderHops: 1.0 / 16, ReplicaHops: 2.0 / 16}},
	} {
		got := busiestOf(tc.n, tc.queues)
		if math.Abs(got.Clients-tc.want.Clients)+math.Abs(got.LeaderHops-tc.want.LeaderHops)+math.Abs(got.ReplicaHops-tc.want.ReplicaHops) > 1e-12 {
			t.Errorf("busiestOf(%d, %d) = %+v, want %+v", tc.n, tc.queues, got, tc.want)
		}
	}
	var b strings.Builder
	writeExtrapolation(&b, modelCoefficients{Clients: 0.5, LeaderHop: 0.2, ReplicaHop: 0.3})
	if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), "| n copies of the chain, replicas on 3, clients spread | 50 |") {
		t.Errorf("the extrapolation lacks the copies layout:\n%s", b.String())
	}
}
