package topology

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// generationCase is a set in the middle of changes: its current spec and
// the generations that drain.
type generationCase struct {
	spec     Spec
	draining []Generation
}

// generationCases are the changes a set goes through, small enough for the
// simulator to try every delay: same key format (queue type, strategy),
// new key format (resolution, radix, levels with a queue type), and
// three generations at once.
var generationCases = map[string]generationCase{
	"classic to quorum": {
		spec:     Spec{Name: "delay", VHost: "/", Levels: 4, Resolution: time.Millisecond, Generation: 1, FormatGeneration: 0, Routes: simRoutes},
		draining: []Generation{{Number: 0, Format: 0, Levels: 4, Radix: 2, Resolution: time.Millisecond, QueueType: QueueTypeClassic, DeadLetterStrategy: AtMostOnce}},
	},
	"at-most-once to at-least-once, radix 4": {
		spec: Spec{Name: "delay", VHost: "/", Levels: 3, Radix: 4, Resolution: time.Millisecond, Generation: 3, FormatGeneration: 2, Routes: simRoutes},
		draining: []Generation{{Number: 2, Format: 2, Levels: 3, Radix: 4, Resolution: time.Millisecond,
			QueueType: QueueTypeQuorum, DeadLetterStrategy: AtMostOnce}},
	},
	"resolution 2ms to 1ms": {
		spec: Spec{Name: "delay", VHost: "/", Levels: 5, Resolution: time.Millisecond, Generation: 1, FormatGeneration: 1, Routes: simRoutes},
		draining: []Generation{{Number: 0, Format: 0, Levels: 4, Radix: 2, Resolution: 2 * time.Millisecond,
			QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce}},
	},
	"radix 2 to 16": {
		spec: Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 16, Resolution: time.Millisecond, Generation: 1, FormatGeneration: 1, Routes: simRoutes},
		draining: []Generation{{Number: 0, Format: 0, Levels: 8, Radix: 2, Resolution: time.Millisecond,
			QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce}},
	},
	"three generations, two formats": {
		spec: Spec{Name: "delay", VHost: "/", Levels: 3, Radix: 4, Resolution: time.Millisecond, Generation: 5, FormatGeneration: 5,
			QueueType: QueueTypeClassic, Routes: simRoutes},
		draining: []Generation{
			{Number: 1, Format: 0, Levels: 5, Radix: 2, Resolution: time.Millisecond, QueueType: QueueTypeClassic, DeadLetterStrategy: AtMostOnce},
			{Number: 4, Format: 0, Levels: 5, Radix: 2, Resolution: time.Millisecond, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtMostOnce},
		},
	},
	"replicas on 3 nodes to 2, radix 16": {
		spec: Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 16, Resolution: time.Millisecond, QuorumInitialGroupSize: 2,
			Generation: 1, FormatGeneration: 0, Routes: simRoutes},
		draining: []Generation{{Number: 0, Format: 0, Levels: 2, Radix: 16, Resolution: time.Millisecond,
			QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce, QuorumInitialGroupSize: 3}},
	},
	"a drained generation's exchanges live on": {
		spec: Spec{Name: "delay", VHost: "/", Levels: 3, Resolution: time.Millisecond, Generation: 2, FormatGeneration: 1, Routes: simRoutes},
	},
}

func mustPlanGenerations(t *testing.T, c generationCase) Topology {
	t.Helper()
	top, err := PlanGenerations(c.spec, c.draining)
	if err != nil {
		t.Fatal(err)
	}
	return top
}

// TestInferGenerationsExplainsPlan checks that InferGenerations reads back
// every generation of a set in the middle of changes, with its exchanges.
func TestInferGenerationsExplainsPlan(t *testing.T) {
	t.Parallel()
	for name, c := range generationCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkInferGenerations(t, mustPlanGenerations(t, c), c, c.spec.Routes)
		})
	}
}

// TestInferGenerationsCutOff checks the generations of a set whose change
// was cut off before its new chain had any binding: the new generation is
// current, and its exchanges are the old ones when the key format is the
// same, and its own otherwise.
func TestInferGenerationsCutOff(t *testing.T) {
	t.Parallel()
	forEachChange(t, func(t *testing.T, c generationCase) {
		old := mustPlanGenerations(t, c.beforeChange())
		next := mustPlan(t, c.spec)
		// The new chain's queues and done exchanges, nothing else.
		cutOff := editTopology(old, func(top *Topology) {
			for _, q := range next.Queues {
				if Names(c.spec.Name).parse(q.Name).generation == c.spec.Generation && !slices.ContainsFunc(top.Queues, func(have Queue) bool { return have.Name == q.Name }) {
					top.Queues = append(top.Queues, q)
				}
			}
			for _, e := range next.Exchanges {
				if o := Names(c.spec.Name).parse(e.Name); o.kind == kindDone {
					top.Exchanges = append(top.Exchanges, e)
				}
			}
		})
		// The routes are read from the out of the new generation's format,
		// which a new format has not declared yet.
		routes := c.spec.Routes
		if c.spec.FormatGeneration == c.spec.Generation {
			routes = nil
		}
		checkInferGenerations(t, cutOff, c, routes)
	})
}

// forEachChange runs check, in parallel, on every case in the middle of a
// change: with a draining generation.
func forEachChange(t *testing.T, check func(t *testing.T, c generationCase)) {
	t.Helper()
	for name, c := range generationCases {
		if len(c.draining) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check(t, c)
		})
	}
}

// checkInferGenerations checks that InferGenerations reads top as c's
// generations, with routes.
func checkInferGenerations(t *testing.T, top Topology, c generationCase, routes []Route) {
	t.Helper()
	spec, draining, err := InferGenerations(c.spec.Name, top)
	if err != nil {
		t.Fatal(err)
	}
	want := mustResolve(t, c.spec)
	want.Routes = mustResolve(t, Spec{Name: want.Name, VHost: want.VHost, Levels: want.Levels, Routes: routes}).Routes
	if d := cmp.Diff(want, spec); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
	if d := cmp.Diff(c.draining, draining); d != "" {
		t.Errorf("draining (-want +got):\n%s", d)
	}
}

// TestSimulateGenerations proves the data-path invariants of a set in the
// middle of changes, for every delay: a message published to the current
// ingest passes exactly the current generation's queues of its nonzero
// digits; a message waiting in any queue of a draining generation goes on
// through that generation's queues only and leaves through its format's
// out exactly when due; a message published to a draining format's ingest
// is delayed by that format's newest generation. None is early, none
// passes a queue twice, and each reaches exactly its routes.
func TestSimulateGenerations(t *testing.T) {
	t.Parallel()
	for name, c := range generationCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			broker, names := newSimBroker(mustPlanGenerations(t, c)), Names(c.spec.Name)
			current := mustResolve(t, c.spec).CurrentGeneration()
			simCheckGenerationPublished(t, broker, names, current)
			newestOfFormat := map[int]Generation{}
			for _, g := range c.draining {
				simCheckGenerationWaiting(t, broker, names, g)
				if g.Format != current.Format {
					newestOfFormat[g.Format] = g
				}
			}
			for _, g := range newestOfFormat {
				simCheckGenerationPublished(t, broker, names, g)
			}
		})
	}
}

// simCheckGenerationPublished publishes every delay of g's format with
// every message key to g's ingest.
func simCheckGenerationPublished(t *testing.T, broker *simBroker, names Names, g Generation) {
	t.Helper()
	chain, exchanges := names.Generation(g.Number), names.Generation(g.Format)
	for ticks := range maxTicks(g.Levels, g.Radix) + 1 {
		digits := simDigits(ticks, g.Levels, g.Radix)
		var wantQueues []simStep
		for k := g.Levels - 1; k >= 0; k-- {
			if digits[k] != 0 {
				wantQueues = append(wantQueues, simStep{DestinationQueue, chain.Queue(g.Radix, k, digits[k])})
			}
		}
		delay := time.Duration(ticks) * g.Resolution
		for key, wantDestinations := range simMessages {
			routingKey, err := g.KeyFormat().Encode(key, delay)
			if err != nil {
				t.Fatal(err)
			}
			simCheckDeliveries(t, names, exchanges.Out(), routingKey,
				simulate(t, broker, exchanges.Ingest(), routingKey), wantQueues, delay, wantDestinations)
		}
	}
}

// simCheckGenerationWaiting starts a message in every queue of g, with
// every key that can be there: its digit at the queue's level is the
// queue's digit, the lower ones any, the higher ones (already passed) a
// sample.
func simCheckGenerationWaiting(t *testing.T, broker *simBroker, names Names, g Generation) {
	t.Helper()
	chain, out := names.Generation(g.Number), names.Generation(g.Format).Out()
	for ticks := range maxTicks(g.Levels, g.Radix) + 1 {
		digits := simDigits(ticks, g.Levels, g.Radix)
		for k := g.Levels - 1; k >= 0; k-- {
			if digits[k] == 0 {
				continue
			}
			// The message waits in (k, digit k) for digit·radix^k ticks, then
			// in the queues of its lower nonzero digits.
			var wantQueues []simStep
			remaining := uint64(0)
			for j := k; j >= 0; j-- {
				if digits[j] != 0 {
					wantQueues = append(wantQueues, simStep{DestinationQueue, chain.Queue(g.Radix, j, digits[j])})
					remaining += uint64(digits[j]) * (maxTicks(j, g.Radix) + 1)
				}
			}
			delay := time.Duration(remaining) * g.Resolution
			for key, wantDestinations := range simMessages {
				routingKey, err := g.KeyFormat().Encode(key, time.Duration(ticks)*g.Resolution)
				if err != nil {
					t.Fatal(err)
				}
				simCheckDeliveries(t, names, out, routingKey,
					simulateFrom(t, broker, wantQueues[0], routingKey), wantQueues, delay, wantDestinations)
			}
		}
	}
}

// simCheckDeliveries checks every copy of one message: its path (see
// simCheckDelayPath) and, together, their destinations.
func simCheckDeliveries(t *testing.T, names Names, out, routingKey string, deliveries []simDelivery, wantQueues []simStep,
	delay time.Duration, wantDestinations []simStep,
) {
	t.Helper()
	var got []simStep
	for _, d := range deliveries {
		got = append(got, d.Destination)
		simCheckDelayPath(t, names, out, routingKey, d, wantQueues, delay)
	}
	slices.SortFunc(got, func(a, b simStep) int { return strings.Compare(a.String(), b.String()) })
	if !slices.Equal(wantDestinations, got) {
		t.Fatalf("routing key %q: destinations (-want +got):\n%s", routingKey, cmp.Diff(wantDestinations, got))
	}
}

func TestNextGeneration(t *testing.T) {
	t.Parallel()
	actual := mustResolve(t, Spec{Name: "delay", VHost: "/", Levels: 4, Resolution: time.Second, QueueType: QueueTypeClassic,
		Generation: 3, FormatGeneration: 2})
	draining := []Generation{{Number: 1, Format: 0}, {Number: 6, Format: 6}}
	tests := map[string]struct {
		desired                  Spec
		generation, formatNumber int
	}{
		"no change":                   {Spec{Name: "delay", VHost: "/", Levels: 4, QueueType: QueueTypeClassic}, 3, 2},
		"more levels, in place":       {Spec{Name: "delay", VHost: "/", Levels: 6, QueueType: QueueTypeClassic}, 3, 2},
		"routes, in place":            {Spec{Name: "delay", VHost: "/", Levels: 4, QueueType: QueueTypeClassic, Routes: []Route{{Destination: "q"}}}, 3, 2},
		"queue type: same exchanges":  {Spec{Name: "delay", VHost: "/", Levels: 4}, 7, 2},
		"strategy: same exchanges":    {Spec{Name: "delay", VHost: "/", Levels: 4, DeadLetterStrategy: AtMostOnce}, 7, 2},
		"resolution: own exchanges":   {Spec{Name: "delay", VHost: "/", Levels: 4, Resolution: time.Millisecond, QueueType: QueueTypeClassic}, 7, 7},
		"radix: own exchanges":        {Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 4, QueueType: QueueTypeClassic}, 7, 7},
		"queue type and levels: own":  {Spec{Name: "delay", VHost: "/", Levels: 5}, 7, 7},
		"max delay that keeps levels": {Spec{Name: "delay", VHost: "/", MaxDelay: 15 * time.Second}, 7, 2},
		"leader locator: same exchanges": {Spec{Name: "delay", VHost: "/", Levels: 4, QueueType: QueueTypeClassic,
			QueueLeaderLocator: LeaderLocatorBalanced}, 7, 2},
		"group size: same exchanges": {Spec{Name: "delay", VHost: "/", Levels: 4, QuorumInitialGroupSize: 2}, 7, 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := NextGeneration(tc.desired, actual, draining)
			if err != nil {
				t.Fatal(err)
			}
			if got.Generation != tc.generation || got.FormatGeneration != tc.formatNumber {
				t.Errorf("generation %d with the exchanges of %d, want %d with those of %d", got.Generation, got.FormatGeneration, tc.generation, tc.formatNumber)
			}
		})
	}
	// More levels while a draining generation shares the exchanges: their
	// keys would lose their route, so a new generation with its own.
	shared := []Generation{{Number: 1, Format: 2}}
	if got, err := NextGeneration(Spec{Name: "delay", VHost: "/", Levels: 6, QueueType: QueueTypeClassic}, actual, shared); err != nil ||
		got.Generation != 4 || got.FormatGeneration != 4 {
		t.Errorf("more levels beside a draining generation of the same exchanges: generation %d with the exchanges of %d, %v; want 4 and 4",
			got.Generation, got.FormatGeneration, err)
	}
	if _, err := NextGeneration(Spec{Name: "delay", VHost: "/", Levels: 0}, actual, draining); err == nil {
		t.Error("NextGeneration of an invalid spec succeeded")
	}
	long := mustResolve(t, Spec{Name: strings.Repeat("n", MaxSetNameLength), VHost: "/", Levels: 2})
	_, err := NextGeneration(Spec{Name: long.Name, VHost: "/", Levels: 2, QueueType: QueueTypeClassic}, long, nil)
	if err == nil || !strings.Contains(err.Error(), "generation 1") {
		t.Errorf("NextGeneration of a set whose name leaves no room for a generation = %v, want an error naming it", err)
	}
}

func TestPlanGenerationsRefuses(t *testing.T) {
	t.Parallel()
	spec := Spec{Name: "delay", VHost: "/", Levels: 3, Generation: 2, FormatGeneration: 2}
	valid := Generation{Number: 1, Format: 1, Levels: 3, Radix: 2, Resolution: time.Second, QueueType: QueueTypeClassic}
	tests := map[string]struct {
		draining []Generation
		want     string
	}{
		"not older":                         {[]Generation{{Number: 2, Format: 2, Levels: 3}}, "is not older than the current generation 2"},
		"exchanges of later":                {[]Generation{{Number: 1, Format: 2, Levels: 3}}, "has the exchanges of generation 2"},
		"no levels":                         {[]Generation{{Number: 1, Format: 1}}, "has no levels"},
		"invalid":                           {[]Generation{{Number: 1, Format: 1, Levels: 3, Radix: 3}}, "radix: must be one of"},
		"descending":                        {[]Generation{valid, {Number: 0, Format: 0, Levels: 3}}, "not in ascending order"},
		"current's exchanges, other format": {[]Generation{{Number: 1, Format: 2, Levels: 3}}, "has the exchanges of generation 2"},
		"shared exchanges, other formats": {[]Generation{{Number: 0, Format: 0, Levels: 3}, {Number: 1, Format: 0, Levels: 4}},
			"share exchanges but not their key format"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := PlanGenerations(spec, tc.draining)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("PlanGenerations = %v, want an error with %q", err, tc.want)
			}
		})
	}
	sameExchanges := Spec{Name: "delay", VHost: "/", Levels: 3, Generation: 2, FormatGeneration: 0}
	if _, err := PlanGenerations(sameExchanges, []Generation{{Number: 0, Format: 0, Levels: 4}}); err == nil ||
		!strings.Contains(err.Error(), "shares the exchanges of generation 2 but not its key format") {
		t.Errorf("a draining generation of another key format on the current exchanges: %v", err)
	}
	if _, err := PlanGenerations(Spec{Name: "delay"}, nil); err == nil {
		t.Error("PlanGenerations of an invalid spec succeeded")
	}
}

// TestGenerationZeroIsPlan checks that a set without generations plans
// exactly as before: PlanGenerations adds nothing to Plan.
func TestGenerationZeroIsPlan(t *testing.T) {
	t.Parallel()
	for name, s := range inferSpecs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := PlanGenerations(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(mustPlan(t, s), got); d != "" {
				t.Errorf("PlanGenerations(s, nil) differs from Plan(s):\n%s", d)
			}
		})
	}
}

// beforeChange is the set a case's change starts from: its newest draining
// generation current, the older ones draining.
func (c generationCase) beforeChange() generationCase {
	previous := c.draining[len(c.draining)-1]
	return generationCase{spec: Spec{Name: c.spec.Name, VHost: c.spec.VHost, Levels: previous.Levels, Radix: previous.Radix,
		Resolution: previous.Resolution, QueueType: previous.QueueType, DeadLetterStrategy: previous.DeadLetterStrategy,
		QueueLeaderLocator: previous.QueueLeaderLocator, QuorumInitialGroupSize: previous.QuorumInitialGroupSize,
		Generation: previous.Number, FormatGeneration: previous.Format, Routes: c.spec.Routes}, draining: c.draining[:len(c.draining)-1]}
}

// TestDiffSwitchesGeneration checks the changes that start a new
// generation: they reach the plan, touch no object of a draining
// generation (the parking lot aside), keep every binding that carries its messages, and move each
// ingest binding of a shared ingest in two consecutive requests, the new
// one first.
func TestDiffSwitchesGeneration(t *testing.T) {
	t.Parallel()
	forEachChange(t, func(t *testing.T, c generationCase) {
		actual, desired := mustPlanGenerations(t, c.beforeChange()), mustPlanGenerations(t, c)
		changes := Diff(desired, actual)
		checkChangeShape(t, changes)
		got, err := applyChanges(actual, changes)
		if err != nil {
			t.Fatalf("%v\n%s", err, strings.Join(changeLines(changes), "\n"))
		}
		if d := cmp.Diff(topologySet(desired), topologySet(got)); d != "" {
			t.Fatalf("the result differs from the plan (-want +got):\n%s", d)
		}
		names := Names(c.spec.Name)
		draining := map[int]bool{}
		for _, g := range c.draining {
			draining[g.Number] = true
		}
		current := names.Generation(c.spec.FormatGeneration).Ingest()
		for i, change := range changes {
			switch {
			case change.Kind == DeleteQueue && change.Queue.Name == names.Unroutable():
				// The parking lot takes the set's queue type: replaced
				// when empty, which the provider checks as for any queue.
			case change.Kind == DeleteQueue || change.Kind == DeleteExchange:
				t.Errorf("change %d deletes an object: %s", i, changeLine(change))
			case change.Kind == CreateBinding && change.Opens != (names.parse(change.Binding.Source).kind == kindIngest):
				t.Errorf("change %d opens a path: %v: %s", i, change.Opens, changeLine(change))
			case change.Kind == DeleteBinding:
				b := change.Binding
				source := names.parse(b.Source)
				if source.kind == kindDone || source.kind == kindOut || b.Source != current {
					t.Errorf("change %d deletes a binding that carries draining messages: %s", i, changeLine(change))
					continue
				}
				previous := changes[max(i-1, 0)]
				if i == 0 || previous.Kind != CreateBinding || previous.Binding.Source != b.Source || previous.Binding.RoutingKey != b.RoutingKey ||
					!strings.HasPrefix(change.Reason, "moves to queue "+previous.Binding.Destination) {
					t.Errorf("change %d deletes %s, not right after creating its successor: %s", i, changeLine(change), changeLine(previous))
				}
			}
		}
	})
}

// TestDiffDeletesDrainedGeneration checks the changes once a draining
// generation is left out of the plan: they delete exactly its queues, its
// done exchanges and their bindings, and the exchanges of its format when
// no other generation has them.
func TestDiffDeletesDrainedGeneration(t *testing.T) {
	t.Parallel()
	forEachChange(t, func(t *testing.T, c generationCase) {
		drained := c.draining[0]
		changes := Diff(mustPlanGenerations(t, generationCase{spec: c.spec, draining: c.draining[1:]}), mustPlanGenerations(t, c))
		checkChangeShape(t, changes)
		names := Names(c.spec.Name)
		formatLives := drained.Format == c.spec.FormatGeneration
		for _, g := range c.draining[1:] {
			formatLives = formatLives || g.Format == drained.Format
		}
		for i, change := range changes {
			var object objectName
			switch change.Kind {
			case DeleteQueue:
				object = names.parse(change.Queue.Name)
			case DeleteExchange:
				object = names.parse(change.Exchange.Name)
			case DeleteBinding:
				continue
			default:
				t.Fatalf("change %d does not delete: %s", i, changeLine(change))
			}
			switch object.kind {
			case kindLevel, kindDone:
				if object.generation != drained.Number {
					t.Errorf("change %d deletes another generation's object: %s", i, changeLine(change))
				}
			case kindIngest, kindOut:
				if formatLives || object.generation != drained.Format {
					t.Errorf("change %d deletes exchanges still in use: %s", i, changeLine(change))
				}
			default:
				t.Errorf("change %d deletes an object of every generation: %s", i, changeLine(change))
			}
		}
	})
}

// TestCurrentObjects checks that the current generation's part of a set in
// the middle of a change is exactly its plan, and that the objects left out
// are exactly the draining generations'.
func TestCurrentObjects(t *testing.T) {
	t.Parallel()
	for name, c := range generationCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			all := mustPlanGenerations(t, c)
			if d := cmp.Diff(topologySet(mustPlan(t, c.spec)), topologySet(CurrentObjects(mustResolve(t, c.spec), all))); d != "" {
				t.Errorf("CurrentObjects differs from the current generation's plan (-want +got):\n%s", d)
			}
		})
	}
}

func TestGenerationQueues(t *testing.T) {
	t.Parallel()
	got := Generation{Number: 2, Levels: 2, Radix: 4}.Queues("delay")
	want := []string{"delay.r4.00.1.g2", "delay.r4.00.2.g2", "delay.r4.00.3.g2", "delay.r4.01.1.g2", "delay.r4.01.2.g2", "delay.r4.01.3.g2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Queues (-want +got):\n%s", d)
	}
	if got := (Generation{Levels: 2}).Queues("delay"); !slices.Equal(got, []string{"delay.level.00", "delay.level.01"}) {
		t.Errorf("generation 0 in radix 2: %v", got)
	}
}

func TestKeepParkingLot(t *testing.T) {
	t.Parallel()
	quorum := mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 2})
	classic := mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 2, QueueType: QueueTypeClassic})
	if got := ParkingLotType("delay", classic); got != QueueTypeClassic {
		t.Errorf("ParkingLotType of a classic set = %q", got)
	}
	if got := ParkingLotType("other", classic); got != "" {
		t.Errorf("ParkingLotType of a set that is not there = %q", got)
	}
	untyped := editTopology(classic, func(t *Topology) { queueNamed(t, "delay.unroutable").Arguments.QueueType = "" })
	if got := ParkingLotType("delay", untyped); got != QueueTypeClassic {
		t.Errorf("ParkingLotType of a parking lot without x-queue-type = %q, want classic", got)
	}
	kept := KeepParkingLot("delay", quorum, QueueTypeClassic)
	for _, change := range Diff(kept, classic) {
		if change.Queue != nil && change.Queue.Name == "delay.unroutable" {
			t.Errorf("the kept parking lot changes: %s", changeLine(change))
		}
	}
	if queueNamed(&quorum, "delay.unroutable").Arguments.QueueType != QueueTypeQuorum {
		t.Error("KeepParkingLot changed the topology it was given")
	}
	if d := cmp.Diff(quorum, KeepParkingLot("delay", quorum, "")); d != "" {
		t.Errorf("KeepParkingLot without a parking lot on the broker changed the plan:\n%s", d)
	}
}

// TestCutOffChangeConverges cuts the change from c.beforeChange() to c
// after each of its changes, then plays what the provider does next while
// every queue of the older generations holds a message: the refresh reads
// the broker's generations and the state follows the broker's current one
// (FollowBroker: never one it lists as draining), the plan numbers the configuration (NextGeneration), and
// the apply keeps what drains (KeepDraining). That apply deletes no queue
// holding a message, starts no generation c does not have, and leaves
// exactly c's plan: nothing missing, nothing orphaned.
func TestCutOffChangeConverges(t *testing.T) {
	t.Parallel()
	forEachChange(t, func(t *testing.T, c generationCase) {
		name, before := c.spec.Name, c.beforeChange()
		start := mustPlanGenerations(t, before)
		parkingLot := ParkingLotType(name, start)
		want := KeepParkingLot(name, mustPlanGenerations(t, c), parkingLot)
		change := Diff(want, start)
		held := map[string]int64{}
		for _, g := range c.draining {
			for _, q := range g.Queues(name) {
				held[q] = 1
			}
		}
		configured := c.spec
		configured.Generation, configured.FormatGeneration = 0, 0
		for cut := range len(change) + 1 {
			actual, err := applyChanges(start, change[:cut])
			if err != nil {
				t.Fatal(err)
			}
			current, draining, err := InferGenerations(name, actual)
			if err != nil {
				t.Fatalf("cut after %d changes: %v", cut, err)
			}
			state := FollowBroker(mustResolve(t, before.spec), current)
			if slices.ContainsFunc(draining, func(g Generation) bool { return g.Number == state.Generation }) {
				t.Fatalf("cut after %d changes: the refreshed state's generation %d is one the refresh lists as draining", cut, state.Generation)
			}
			spec, err := NextGeneration(configured, state, draining)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Generation != c.spec.Generation || spec.FormatGeneration != c.spec.FormatGeneration {
				t.Fatalf("cut after %d changes: the next apply makes generation %d with the exchanges of %d, want %d with those of %d",
					cut, spec.Generation, spec.FormatGeneration, c.spec.Generation, c.spec.FormatGeneration)
			}
			if keep := KeepDraining(spec, current, draining, held); !cmp.Equal(keep, c.draining) {
				t.Fatalf("cut after %d changes: the next apply keeps %+v, want %+v", cut, keep, c.draining)
			}
			desired := KeepParkingLot(name, mustPlanGenerations(t, generationCase{spec: spec, draining: c.draining}), ParkingLotType(name, actual))
			repair := Diff(desired, actual)
			for _, r := range repair {
				if r.Kind == DeleteQueue && held[r.Queue.Name] > 0 {
					t.Errorf("cut after %d changes: the next apply deletes %s, which holds messages", cut, r.Queue.Name)
				}
			}
			got, err := applyChanges(actual, repair)
			if err != nil {
				t.Fatalf("cut after %d changes: %v", cut, err)
			}
			if d := cmp.Diff(topologySet(want), topologySet(got)); d != "" {
				t.Fatalf("cut after %d changes (%s): the next apply leaves (-want +got):\n%s", cut, changeLine(change[max(cut-1, 0)]), d)
			}
		}
	})
}

// TestFollowBroker checks that a state follows the broker's current
// generation only when the broker has moved on from it, keeping its routes.
func TestFollowBroker(t *testing.T) {
	t.Parallel()
	routes := []Route{{Destination: "work"}}
	state := Spec{Name: "delay", VHost: "/", Levels: 4, MaxDelay: 15 * time.Second, Resolution: time.Second,
		QueueType: QueueTypeClassic, DeadLetterStrategy: AtMostOnce, Routes: routes}
	broker := Spec{Name: "delay", VHost: "/", Levels: 6, Radix: 4, Resolution: 100 * time.Millisecond,
		QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce, Generation: 2, FormatGeneration: 1}
	if got := FollowBroker(state, Spec{Levels: 9, Generation: 0}); !cmp.Equal(got, state) {
		t.Errorf("the state follows a broker on its own generation: %+v", got)
	}
	want := broker
	want.Routes = routes
	if got := FollowBroker(state, broker); !cmp.Equal(got, want) {
		t.Errorf("FollowBroker (-want +got):\n%s", cmp.Diff(want, got))
	}
	sameNumber := state
	sameNumber.FormatGeneration = 1 // a state on generation 0 cannot have the exchanges of 1: follow the broker
	if got := FollowBroker(sameNumber, Spec{Levels: 4, Resolution: time.Second, QueueType: QueueTypeClassic}); got.FormatGeneration != 0 {
		t.Errorf("FollowBroker kept exchange generation %d, the broker's is 0", got.FormatGeneration)
	}
}

// TestKeepDraining lists which generations an update keeps.
func TestKeepDraining(t *testing.T) {
	t.Parallel()
	generation := func(number int) Generation {
		return Generation{Number: number, Format: 0, Levels: 2, Radix: 2, Resolution: time.Second, QueueType: QueueTypeClassic, DeadLetterStrategy: AtMostOnce}
	}
	spec := func(number int) Spec {
		g := generation(number)
		return Spec{Name: "delay", Levels: g.Levels, Radix: g.Radix, Resolution: g.Resolution, QueueType: g.QueueType,
			DeadLetterStrategy: g.DeadLetterStrategy, Generation: number}
	}
	holds := func(numbers ...int) map[string]int64 {
		held := map[string]int64{}
		for _, n := range numbers {
			held[generation(n).Queues("delay")[1]] = 3
		}
		return held
	}
	tests := map[string]struct {
		spec, current Spec
		draining      []Generation
		held          map[string]int64
		want          []Generation
	}{
		"nothing drains":                              {spec: spec(0), current: spec(0)},
		"a switch keeps the current one":              {spec: spec(1), current: spec(0), want: []Generation{generation(0)}},
		"an empty draining one goes":                  {spec: spec(2), current: spec(2), draining: []Generation{generation(0), generation(1)}, held: holds(1), want: []Generation{generation(1)}},
		"a switch keeps those that hold":              {spec: spec(3), current: spec(2), draining: []Generation{generation(0), generation(1)}, held: holds(0), want: []Generation{generation(0), generation(2)}},
		"a switch keeps the current one, held or not": {spec: spec(1), current: spec(0), held: holds(0), want: []Generation{generation(0)}},
		"a cut-off switch made current":               {spec: spec(1), current: spec(1), draining: []Generation{generation(0)}, want: nil},
		"a cut-off switch, old one holding":           {spec: spec(1), current: spec(1), draining: []Generation{generation(0)}, held: holds(0), want: []Generation{generation(0)}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := KeepDraining(tc.spec, tc.current, tc.draining, tc.held)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("KeepDraining (-want +got):\n%s", d)
			}
			if held := Holding("delay", got, tc.held); len(held) > len(got) {
				t.Errorf("Holding returned %d of %d generations", len(held), len(got))
			}
		})
	}
}

// TestHolding counts a generation's messages over its own queues only.
func TestHolding(t *testing.T) {
	t.Parallel()
	g0 := Generation{Number: 0, Levels: 3, Radix: 2}
	g1 := Generation{Number: 1, Levels: 3, Radix: 2}
	held := map[string]int64{"delay.level.01": 2, "delay.level.02": 5, "delay.level.00.g1": 0, "other.level.00": 9}
	if got := g0.Messages("delay", held); got != 7 {
		t.Errorf("generation 0 holds %d messages, want 7", got)
	}
	if got := g1.Messages("delay", held); got != 0 {
		t.Errorf("generation 1 holds %d messages, want 0", got)
	}
	if got := Holding("delay", []Generation{g0, g1}, held); !cmp.Equal(got, []Generation{g0}) {
		t.Errorf("Holding = %+v, want generation 0 only", got)
	}
}

// driftQueue returns t with queue name's arguments changed by edit, as an
// operator declaring it again behind the provider's back would leave it.
func driftQueue(t Topology, name string, edit func(*QueueArguments)) Topology {
	return editTopology(t, func(top *Topology) {
		for i := range top.Queues {
			if top.Queues[i].Name == name {
				edit(&top.Queues[i].Arguments)
			}
		}
	})
}

// TestDriftedQueues names the current generation's TTL queues whose
// arguments differ from the plan, and no other object.
func TestDriftedQueues(t *testing.T) {
	t.Parallel()
	spec := Spec{Name: "delay", VHost: "/", Levels: 3, Resolution: time.Second, QueueType: QueueTypeClassic, Generation: 1, Routes: simRoutes}
	names := Names("delay").Generation(1)
	actual := mustPlanGenerations(t, generationCase{spec: spec, draining: []Generation{{Number: 0, Levels: 3, Radix: 2, Resolution: time.Second,
		QueueType: QueueTypeClassic, DeadLetterStrategy: AtMostOnce}}})
	actual = driftQueue(actual, names.Queue(2, 2, 1), func(a *QueueArguments) { a.MessageTTL = 1234 })
	actual = driftQueue(actual, names.Queue(2, 0, 1), func(a *QueueArguments) { a.QueueType = QueueTypeQuorum })
	actual = driftQueue(actual, Names("delay").Level(1), func(a *QueueArguments) { a.MessageTTL = 99 })                 // a draining generation's
	actual = driftQueue(actual, Names("delay").Unroutable(), func(a *QueueArguments) { a.QueueType = QueueTypeQuorum }) // the parking lot
	actual.Queues = slices.DeleteFunc(actual.Queues, func(q Queue) bool { return q.Name == names.Queue(2, 1, 1) })      // missing, not drifted
	got, err := driftedQueues(spec, actual)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{names.Queue(2, 0, 1), names.Queue(2, 2, 1)}; !cmp.Equal(got, want) {
		t.Errorf("DriftedQueues = %v, want %v", got, want)
	}
	if _, err := driftedQueues(Spec{Name: "delay"}, actual); err == nil {
		t.Error("DriftedQueues of a spec without levels: no error")
	}
}

// driftedQueues plans spec as the provider's refresh has it planned, and
// names its drifted queues.
func driftedQueues(spec Spec, actual Topology) ([]string, error) {
	spec, err := Resolve(spec)
	if err != nil {
		return nil, err
	}
	desired, err := Plan(spec)
	if err != nil {
		return nil, err
	}
	return DriftedQueues(spec, desired, actual), nil
}

// TestDriftRepairConverges repairs a drifted TTL queue that holds messages
// the way the provider does: the plan starts a new generation
// (NewGeneration), the apply keeps the drifted generation as it is
// (KeepDrainingQueues) and declares the new one beside it, the refresh
// after reads the drifted generation as draining, and once it is empty
// the next apply deletes it, drifted queue and all. No apply deletes or
// declares again a queue that holds messages.
func TestDriftRepairConverges(t *testing.T) {
	t.Parallel()
	for _, radix := range []int{2, 16} {
		spec := mustResolve(t, Spec{Name: "delay", VHost: "/", Levels: 3, Radix: radix, Resolution: time.Second, QueueType: QueueTypeQuorum, Routes: simRoutes})
		old := spec.CurrentGeneration()
		drifted := old.Queues("delay")[1]
		actual := driftQueue(mustPlan(t, spec), drifted, func(a *QueueArguments) { a.MessageTTL *= 3; a.DeadLetterStrategy = AtMostOnce })
		found, err := driftedQueues(spec, actual)
		if err != nil || !cmp.Equal(found, []string{drifted}) {
			t.Fatalf("radix %d: DriftedQueues = %v, %v; want %s", radix, found, err, drifted)
		}
		held := map[string]int64{drifted: 5, old.Queues("delay")[0]: 1}
		// The current generation disagrees with itself: inference refuses,
		// and the provider keeps what its state says.
		if _, _, err := InferGenerations("delay", actual); err == nil {
			t.Fatalf("radix %d: InferGenerations explained a current generation with a drifted queue", radix)
		}
		next, err := NewGeneration(spec, spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewGeneration(Spec{Name: "delay"}, spec, nil); err == nil {
			t.Fatalf("NewGeneration of a spec without levels: no error")
		}
		if next.Generation != 1 || next.FormatGeneration != 0 {
			t.Fatalf("radix %d: the repair is generation %d with the exchanges of %d, want 1 with those of 0", radix, next.Generation, next.FormatGeneration)
		}
		keep := KeepDraining(next, spec, nil, held)
		if !cmp.Equal(keep, []Generation{old}) {
			t.Fatalf("radix %d: the repair keeps %+v, want generation 0", radix, keep)
		}
		desired := KeepDrainingQueues("delay", mustPlanGenerations(t, generationCase{spec: next, draining: keep}), actual, keep)
		switched := checkNothingHeldTouched(t, actual, desired, held)

		// The refresh reads the drifted generation as draining, as it was declared.
		current, draining, err := InferGenerations("delay", switched)
		if err != nil {
			t.Fatalf("radix %d: after the repair: %v", radix, err)
		}
		if current.Generation != 1 || !cmp.Equal(draining, []Generation{old}) {
			t.Fatalf("radix %d: after the repair, generation %d is current and %+v drain; want 1, and 0 as declared", radix, current.Generation, draining)
		}
		// Drained: the next apply deletes it, the drifted queue with it.
		desired = mustPlanGenerations(t, generationCase{spec: next, draining: KeepDraining(next, current, draining, nil)})
		if got, err := applyChanges(switched, Diff(desired, switched)); err != nil || !cmp.Equal(topologySet(got), topologySet(desired)) {
			t.Fatalf("radix %d: deleting the drained generation: %v (-want +got):\n%s", radix, err, cmp.Diff(topologySet(desired), topologySet(got)))
		}
	}
}

// checkNothingHeldTouched applies Diff(desired, actual) to actual, checks
// that no change deletes or declares again a queue of held and that the
// result is desired, and returns it.
func checkNothingHeldTouched(t *testing.T, actual, desired Topology, held map[string]int64) Topology {
	t.Helper()
	changes := Diff(desired, actual)
	for _, c := range changes {
		if c.Queue != nil && held[c.Queue.Name] > 0 {
			t.Errorf("%s", changeLine(c))
		}
	}
	got, err := applyChanges(actual, changes)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(topologySet(desired), topologySet(got)); d != "" {
		t.Fatalf("the apply leaves (-want +got):\n%s", d)
	}
	return got
}

// TestInferGenerationsDriftedDraining reads a draining generation with a
// drifted queue from the queues that agree, for every kind of drift, and
// still refuses a current generation that disagrees with itself.
func TestInferGenerationsDriftedDraining(t *testing.T) {
	t.Parallel()
	c := generationCases["classic to quorum"]
	top := mustPlanGenerations(t, c)
	oldQueues := c.draining[0].Queues(c.spec.Name)
	for name, tc := range map[string]struct {
		edit func(*QueueArguments)
		// whether the same drift makes the current generation (quorum,
		// at-least-once) disagree with itself
		disagrees bool
	}{
		"ttl":                 {func(a *QueueArguments) { a.MessageTTL = 7 }, true},
		"no ttl":              {func(a *QueueArguments) { a.MessageTTL = 0 }, false},
		"queue type":          {func(a *QueueArguments) { a.QueueType = QueueTypeQuorum; a.DeadLetterStrategy = AtLeastOnce }, false},
		"unknown queue type":  {func(a *QueueArguments) { a.QueueType = "stream" }, true},
		"strategy of classic": {func(a *QueueArguments) { a.DeadLetterStrategy = AtLeastOnce }, false},
		"strategy":            {func(a *QueueArguments) { a.DeadLetterStrategy = AtMostOnce }, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkInferGenerations(t, driftQueue(top, oldQueues[2], tc.edit), c, c.spec.Routes)
			current := c.spec.CurrentGeneration().Queues(c.spec.Name)
			if _, _, err := InferGenerations(c.spec.Name, driftQueue(top, current[2], tc.edit)); tc.disagrees && err == nil {
				t.Error("InferGenerations explained a current generation that disagrees with itself")
			}
		})
	}
	// The lowest queue drifted: the larger group of the others wins.
	checkInferGenerations(t, driftQueue(top, oldQueues[0], func(a *QueueArguments) { a.MessageTTL = 5 }), c, c.spec.Routes)
	// Two queues each way: the group of the lowest queue wins.
	tie := driftQueue(top, oldQueues[2], func(a *QueueArguments) { a.MessageTTL *= 2 })
	tie = driftQueue(tie, oldQueues[3], func(a *QueueArguments) { a.MessageTTL *= 2 })
	checkInferGenerations(t, tie, c, c.spec.Routes)
	// Queues that disagree on their radix are no generation at all.
	radixes := editTopology(top, func(top *Topology) {
		top.Queues = append(top.Queues, Queue{Name: Names(c.spec.Name).Generation(0).Queue(4, 0, 3),
			Arguments: QueueArguments{MessageTTL: 3, DeadLetterExchange: "x"}})
	})
	if _, _, err := InferGenerations(c.spec.Name, radixes); err == nil {
		t.Error("InferGenerations explained a draining generation whose queues disagree on the radix")
	}
}
