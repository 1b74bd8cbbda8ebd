package topology

// Teardown is the changes that delete the whole of actual (a set, its
// draining generations included) in far fewer requests than Diff(nothing,
// actual): the broker deletes an object's bindings with it. Its six steps
// keep Diff's promises (no message enters a queue once nothing leads to it;
// what a queue dead-letters ends parked); DESIGN.md ("Teardown's order")
// lists them and why bindings between exchanges go on their own. Each step
// is one kind of change, so Apply runs it as one batch and stops before the
// next when any of it fails.
func Teardown(actual Topology) []Change {
	index := indexTopology(actual)
	alternate, inner := map[string]bool{}, map[string]bool{}
	for _, e := range index.exchanges {
		alternate[e.Arguments.AlternateExchange] = true
		inner[e.Arguments.AlternateExchange] = true
	}
	for _, q := range index.queues {
		inner[q.Arguments.DeadLetterExchange] = true
	}
	parkingLot := map[string]bool{}
	for _, b := range index.bindings {
		if b.DestinationType == DestinationExchange {
			inner[b.Destination] = true
		} else if alternate[b.Source] {
			parkingLot[b.Destination] = true
		}
	}
	const reason = "the set is destroyed"
	var entries, queues, between, exchanges, parkingLots, alternates []Change
	for _, e := range index.exchanges {
		change := Change{Kind: DeleteExchange, Exchange: &e, Reason: reason}
		switch {
		case alternate[e.Name]:
			alternates = append(alternates, change)
		case !inner[e.Name]:
			entries = append(entries, change)
		default:
			exchanges = append(exchanges, change)
		}
	}
	for _, b := range index.bindings {
		_, toExchange := index.exchangeByName[b.Destination]
		if b.DestinationType == DestinationExchange && toExchange && inner[b.Source] {
			between = append(between, Change{Kind: DeleteBinding, Binding: &b, Reason: reason})
		}
	}
	for _, q := range index.queues {
		change := Change{Kind: DeleteQueue, Queue: &q, Reason: reason}
		if parkingLot[q.Name] {
			parkingLots = append(parkingLots, change)
		} else {
			queues = append(queues, change)
		}
	}
	var changes []Change
	for _, step := range [][]Change{entries, queues, between, exchanges, parkingLots, alternates} {
		changes = append(changes, step...)
	}
	return changes
}
