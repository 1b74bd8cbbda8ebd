package delayset_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Plan without a broker: every generation case the provider's plans show
// (its ModifyPlan tests and the acceptance tests of generations).

// spec3 is a set "delay" of 3 levels of 1 s, edited by edit, resolved.
func spec3(t *testing.T, edit func(*topology.Spec)) topology.Spec {
	t.Helper()
	spec := topology.Spec{Name: "delay", VHost: "/", Levels: 3, Resolution: time.Second}
	if edit != nil {
		edit(&spec)
	}
	resolved, err := topology.Resolve(spec)
	if err != nil {
		t.Fatal(err)
	}
	return resolved
}

// rememberedOf is what is kept of a set of spec as it was planned: its
// objects shown, nothing draining.
func rememberedOf(t *testing.T, spec topology.Spec) delayset.Remembered {
	t.Helper()
	planned, err := delayset.Plan(delayset.Remembered{}, spec, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	prior := planned.Spec
	prior.QueueLeaderLocator = spec.QueueLeaderLocator // kept as it was written
	return delayset.Remembered{Spec: prior, Shown: planned.Set}
}

func classic(s *topology.Spec)  { s.QueueType = topology.QueueTypeClassic }
func balanced(s *topology.Spec) { s.QueueLeaderLocator = topology.LeaderLocatorBalanced }

func TestPlanGeneration(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	quorum := spec3(t, nil)
	old := quorum.CurrentGeneration()
	draining := func(messages int64, switchedAgo time.Duration) func(*delayset.Remembered) {
		return func(r *delayset.Remembered) {
			r.Spec = spec3(t, func(s *topology.Spec) { classic(s); s.Generation, s.FormatGeneration = 1, 0 })
			r.Draining, r.DrainingMessages, r.SwitchedAt = []topology.Generation{old}, []int64{messages}, now.Add(-switchedAgo)
		}
	}
	tests := map[string]struct {
		prior         *topology.Spec // nil: a new set
		priorEdit     func(*delayset.Remembered)
		spec          func(*topology.Spec)
		generation    int
		format        int
		locator       topology.LeaderLocator
		drainingKnown bool
		warnings      []delayset.Reason
	}{
		"new quorum set":                   {locator: topology.LeaderLocatorBalanced, drainingKnown: true},
		"new classic set":                  {spec: classic, drainingKnown: true},
		"new set, client-local":            {spec: func(s *topology.Spec) { s.QueueLeaderLocator = topology.LeaderLocatorClientLocal }, locator: topology.LeaderLocatorClientLocal, drainingKnown: true},
		"set from before, unset: kept":     {prior: &quorum, drainingKnown: true},
		"set from before, asks balanced":   {prior: &quorum, spec: balanced, generation: 1, locator: topology.LeaderLocatorBalanced},
		"set from before, now classic":     {prior: &quorum, spec: classic, generation: 1},
		"classic set from before, quorum":  {prior: ptr(spec3(t, classic)), generation: 1, locator: topology.LeaderLocatorBalanced},
		"balanced set, unset: kept":        {prior: ptr(spec3(t, balanced)), locator: topology.LeaderLocatorBalanced, drainingKnown: true},
		"another group size":               {prior: ptr(spec3(t, func(s *topology.Spec) { s.QuorumInitialGroupSize = 2 })), spec: func(s *topology.Spec) { s.QuorumInitialGroupSize = 3 }, generation: 1, locator: topology.LeaderLocatorBalanced},
		"more levels: in place":            {prior: &quorum, spec: func(s *topology.Spec) { s.Levels = 4 }, drainingKnown: true},
		"another radix: new exchanges too": {prior: &quorum, spec: func(s *topology.Spec) { s.Levels, s.Radix = 2, 4 }, generation: 1, format: 1, locator: topology.LeaderLocatorBalanced},
		"another resolution":               {prior: &quorum, spec: func(s *topology.Spec) { s.Resolution = 2 * time.Second }, generation: 1, format: 1, locator: topology.LeaderLocatorBalanced},
		"another layout: a new set": {prior: &quorum, spec: func(s *topology.Spec) { s.Layout, s.Levels = topology.LayoutCelery, 0 },
			locator: "", drainingKnown: true},
		"drifted queues holding messages: repaired": {prior: &quorum, priorEdit: func(r *delayset.Remembered) { r.DriftedHolding = []string{"delay.level.02"} },
			generation: 1, warnings: []delayset.Reason{delayset.DriftRepaired}},
		"drifted holding beside a draining generation: past it": {prior: &quorum, priorEdit: func(r *delayset.Remembered) {
			draining(3, time.Hour)(r)
			r.DriftedHolding = []string{"delay.level.02.g1"}
		}, spec: classic, generation: 2, format: 0, warnings: []delayset.Reason{delayset.DriftRepaired}},
		"draining, holding a message": {prior: &quorum, priorEdit: draining(1, time.Hour), spec: classic, generation: 1, drainingKnown: true},
		"draining, empty, just switched: not called empty": {prior: &quorum, priorEdit: draining(0, broker.StatisticsLag-time.Millisecond),
			spec: classic, generation: 1, drainingKnown: true},
		"draining, empty, settled: called empty": {prior: &quorum, priorEdit: draining(0, broker.StatisticsLag), spec: classic, generation: 1,
			warnings: []delayset.Reason{delayset.GenerationEmpty}},
		"draining with no count: not called empty": {prior: &quorum, priorEdit: func(r *delayset.Remembered) {
			draining(0, time.Hour)(r)
			r.DrainingMessages = nil
		}, spec: classic, generation: 1, drainingKnown: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var prior delayset.Remembered
			if tt.prior != nil {
				prior = rememberedOf(t, *tt.prior)
			}
			if tt.priorEdit != nil {
				tt.priorEdit(&prior)
			}
			spec := spec3(t, tt.spec)
			planned, err := delayset.Plan(prior, spec, now)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			got := planned.Spec
			if got.Generation != tt.generation || got.FormatGeneration != tt.format || got.QueueLeaderLocator != tt.locator {
				t.Errorf("planned generation %d, exchanges %d, locator %q; want %d, %d, %q",
					got.Generation, got.FormatGeneration, got.QueueLeaderLocator, tt.generation, tt.format, tt.locator)
			}
			if planned.DrainingKnown != tt.drainingKnown {
				t.Errorf("draining known: %t, want %t", planned.DrainingKnown, tt.drainingKnown)
			}
			var reasons []delayset.Reason
			for _, w := range planned.Warnings {
				reasons = append(reasons, w.Reason)
			}
			if d := cmp.Diff(tt.warnings, reasons); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
			want, err := topology.PlanGenerations(got, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The parking lot keeps the type it has: declaring it again would drop what it parks.
			want = topology.KeepParkingLot(got.Name, want, topology.ParkingLotType(got.Name, prior.Shown))
			if g, w := topology.Lines(planned.Set.Queues), topology.Lines(want.Queues); g != w {
				t.Errorf("planned queues\n%s\nwant those of the generation planned\n%s", g, w)
			}
		})
	}
}

// TestPlanRefuses: a change whose new generation's names would not fit,
// the same for a repair, and a set planned from that cannot be resolved
// (unless the layout changes, which replaces it).
func TestPlanRefuses(t *testing.T) {
	t.Parallel()
	long := func(s *topology.Spec) { s.Name = strings.Repeat("d", 241) }
	longQuorum := spec3(t, long)
	tests := map[string]struct {
		prior delayset.Remembered
		spec  topology.Spec
		step  delayset.PlanStep
		fails bool
	}{
		"a switch whose names do not fit": {prior: rememberedOf(t, longQuorum),
			spec: spec3(t, func(s *topology.Spec) { long(s); classic(s) }), step: delayset.PlanningSwitch, fails: true},
		"a repair whose names do not fit": {prior: func() delayset.Remembered {
			r := rememberedOf(t, longQuorum)
			r.DriftedHolding = []string{longQuorum.CurrentGeneration().Queues(longQuorum.Name)[0]}
			return r
		}(), spec: longQuorum, step: delayset.PlanningRepair, fails: true},
		"an unresolved set": {prior: delayset.Remembered{Spec: topology.Spec{Name: "delay", VHost: "/"}, Unresolved: true},
			spec: spec3(t, nil), step: delayset.PlanningPrior, fails: true},
		"an unresolved set of another layout: replaced": {prior: delayset.Remembered{Spec: topology.Spec{Name: "delay", VHost: "/"}, Unresolved: true},
			spec: spec3(t, func(s *topology.Spec) { s.Layout, s.Levels = topology.LayoutCelery, 0 })},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := delayset.Plan(tt.prior, tt.spec, time.Time{})
			var planErr *delayset.PlanError
			if !tt.fails {
				if err != nil {
					t.Fatalf("Plan = %v, want a plan", err)
				}
				return
			}
			if !errors.As(err, &planErr) || planErr.Step != tt.step {
				t.Fatalf("Plan = %#v, want a PlanError at step %d", err, tt.step)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
