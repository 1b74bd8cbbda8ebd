package topology

// Teardown is the changes that delete the whole of actual (a set as read
// from the broker or as its state plans it, draining generations included), in far fewer requests
// than Diff(nothing, actual): the broker deletes an object's bindings with
// it, so only the bindings between two exchanges of the set are deleted on
// their own. The order keeps what Diff's keeps — no message enters a queue
// once nothing leads to it, and a message a queue still dead-letters ends
// parked rather than dropped:
//
//  1. the entry exchanges (those no binding leads to, no queue dead-letters
//     into and no exchange has for alternate: the ingest exchanges), and
//     with them every way in for a publisher's message;
//  2. the queues but the parking lots, each only if it is empty (as Diff's
//     deletions, see broker.Client.Apply), with the bindings into them;
//  3. the bindings between the remaining exchanges: without this step, two
//     destroys of a hundred sets each left the out exchange of 2 and 3 sets
//     behind (the broker answered each deletion as done), and with it a
//     third left nothing — exchanges bound to each other and deleted at
//     once; Diff's order, too, deletes every binding before any exchange;
//  4. the other exchanges but the alternate ones (done, out), with the
//     bindings from them, the routes included;
//  5. the parking lots, only if empty;
//  6. the alternate exchanges.
//
// Each step is one kind of change, so Apply runs it as one batch and stops
// before the next when any of it fails.
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
