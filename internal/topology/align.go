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
		Exchanges: alignBy(actual.Exchanges, desired.Exchanges, func(x Exchange) string { return x.Name }, byName(func(x Exchange) string { return x.Name })),
		Queues:    alignBy(actual.Queues, desired.Queues, func(q Queue) string { return q.Name }, byName(func(q Queue) string { return q.Name })),
		Bindings:  alignBy(actual.Bindings, desired.Bindings, Binding.Canonical, CompareBindings),
	}
}

func byName[T any](name func(T) string) func(a, b T) int {
	return func(a, b T) int { return cmp.Compare(name(a), name(b)) }
}

// alignBy sorts actual by the rank of its identity in desired, the others
// after them in order.
func alignBy[T any, K comparable](actual, desired []T, identity func(T) K, order func(a, b T) int) []T {
	rank := make(map[K]int, len(desired))
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
		return order(a, b)
	})
	return aligned
}
