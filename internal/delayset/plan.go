package delayset

import (
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Planned is what a plan shows of a set before the apply.
type Planned struct {
	// Spec is what the apply makes: the generation it takes, and the leader
	// locator of a spec that named none.
	Spec topology.Spec
	// Set is the objects of Spec's generation, the parking lot as the prior
	// set showed it.
	Set topology.Topology
	// DrainingKnown: the generations that drain after the apply are the
	// prior's. Otherwise the apply finds them: it switches to a new
	// generation, or may delete one found empty.
	DrainingKnown bool
	// Updates: the apply updates prior's set. Otherwise it creates one,
	// replacing prior's set of another layout, if any.
	Updates  bool
	Warnings []Warning
}

// Plan is what an apply of spec, resolved, does to prior, the set planned
// from (a Remembered without a name for a new set), at now: a set of
// another layout is replaced, so spec is planned as a new set. It reads no
// broker: what it tells of draining generations is from the last look.
func Plan(prior Remembered, spec topology.Spec, now time.Time) (Planned, error) {
	follows := prior.Spec.Name != "" && prior.Spec.Layout.OrDefault() == spec.Layout.OrDefault()
	if follows && prior.Unresolved {
		return Planned{}, &PlanError{Step: PlanningPrior, Err: errUnresolved}
	}
	var current *topology.Spec
	if follows {
		current = &prior.Spec
	}
	if spec.QueueLeaderLocator == "" {
		spec.QueueLeaderLocator = topology.UnsetLeaderLocator(spec, current)
	}
	planned := Planned{Spec: spec, DrainingKnown: true}
	if follows {
		var err error
		if planned, err = planGeneration(prior, spec, now); err != nil {
			return Planned{}, err
		}
	}
	set, err := desired(planned.Spec, nil, prior.Shown)
	if err != nil {
		return Planned{}, &PlanError{Step: PlanningObjects, Err: err}
	}
	planned.Set = set
	if follows {
		planned.Warnings = append(planned.Warnings, routesStayBound(prior, planned.Spec, set)...)
	}
	return planned, nil
}

// planGeneration moves spec to the generation an update of prior takes:
// prior's own, or a new one beside it, which then drains, when the queues'
// kind or key format changes or when queues of prior's generation drifted
// and hold messages. It warns of each generation it calls empty.
func planGeneration(prior Remembered, spec topology.Spec, now time.Time) (Planned, error) {
	next, err := topology.NextGeneration(spec, prior.Spec, prior.Draining)
	if err != nil {
		return Planned{}, &PlanError{Step: PlanningSwitch, Err: err}
	}
	var warnings []Warning
	if len(prior.DriftedHolding) > 0 && next.Generation == prior.Spec.Generation {
		if next, err = topology.NewGeneration(next, prior.Spec, prior.Draining); err != nil {
			return Planned{}, &PlanError{Step: PlanningRepair, Err: err}
		}
		warnings = append(warnings, Warning{Reason: DriftRepaired, Generation: next.Generation, Queues: prior.DriftedHolding})
	}
	planned := Planned{Spec: next, DrainingKnown: next.Generation == prior.Spec.Generation, Updates: true, Warnings: warnings}
	if len(prior.DrainingMessages) != len(prior.Draining) {
		return planned, nil // no count to call any of them empty by
	}
	for _, g := range CalledEmpty(prior.Draining, prior.DrainingMessages, Settled(now, prior.SwitchedAt)) {
		planned.Warnings = append(planned.Warnings, Warning{Reason: GenerationEmpty, Generation: g.Number, Queues: g.Queues(next.Name)})
		planned.DrainingKnown = false
	}
	return planned, nil
}

// routesStayBound warns when a plan of a set of a library layout drops
// routes whose bindings prior showed: the library binds its destinations
// from the delivery exchange too, and on the broker a route's binding and
// the library's are one binding, so the apply leaves it.
func routesStayBound(prior Remembered, spec topology.Spec, set topology.Topology) []Warning {
	if !spec.Layout.DeclaredByLibrary() {
		return nil
	}
	before, err := desired(prior.Spec, nil, prior.Shown)
	if err != nil {
		return nil // a prior that plans no set had no routes to remove
	}
	shown := map[string]bool{}
	for _, b := range prior.Shown.Bindings {
		shown[b.String()] = true
	}
	var staying []topology.Binding
	for _, b := range topology.LibraryBindings(spec, set, before) {
		if shown[b.String()] {
			staying = append(staying, b)
		}
	}
	if len(staying) == 0 {
		return nil
	}
	return []Warning{{Reason: RoutesStayBound, Bindings: staying}}
}
