package topology

// Hops is the number of TTL queues a message delayed by ticks passes in a
// set of radix: one per nonzero digit of ticks in that radix (popcount in
// radix 2). A radix of 0, a spec's that names none, reads as DefaultRadix.
func Hops(ticks uint64, radix int) int {
	if radix == 0 {
		radix = DefaultRadix
	}
	hops := 0
	for ; ticks > 0; ticks /= uint64(radix) {
		if ticks%uint64(radix) != 0 {
			hops++
		}
	}
	return hops
}
