package topology

import (
	"cmp"
	"slices"
)

// Align lists actual's objects in desired's order: first the objects desired
// also names, in desired's order and with actual's values, then the others
// sorted by name. An actual topology that matches its plan thus reads back
// exactly as planned, and drift shows object by object.
func Align(actual, desired Topology) Topology {
	return Topology{
		VHost:     actual.VHost,
		Exchanges: alignBy(actual.Exchanges, desired.Exchanges, func(x Exchange) string { return x.Name }),
		Queues:    alignBy(actual.Queues, desired.Queues, func(q Queue) string { return q.Name }),
		Bindings:  alignBy(actual.Bindings, desired.Bindings, bindingIdentity),
	}
}

// bindingIdentity is what tells two bindings apart.
func bindingIdentity(b Binding) string {
	b = canonicalBinding(b)
	return b.Source + "\x00" + string(b.DestinationType) + "\x00" + b.Destination + "\x00" + b.RoutingKey
}

func alignBy[T any](actual, desired []T, identity func(T) string) []T {
	rank := make(map[string]int, len(desired))
	for i, d := range desired {
		rank[identity(d)] = i
	}
	aligned := slices.Clone(actual)
	slices.SortStableFunc(aligned, func(a, b T) int {
		ra, inA := rank[identity(a)]
		rb, inB := rank[identity(b)]
		switch {
		case inA && inB:
			return cmp.Compare(ra, rb)
		case inA != inB:
			if inA {
				return -1
			}
			return 1
		}
		return cmp.Compare(identity(a), identity(b))
	})
	return aligned
}
