package topology

import "testing"

func TestHops(t *testing.T) {
	t.Parallel()
	for _, test := range []struct {
		ticks uint64
		radix int
		want  int
	}{
		{0, 2, 0}, {255, 2, 8}, {128, 2, 1}, {255, 16, 2}, {16, 16, 1}, {15, 16, 1}, {17, 16, 2}, {255, 4, 4}, {64, 4, 1}, {255, 8, 3}, {256, 16, 1},
		{255, 0, 8}, {0, 0, 0}, // no radix: the default's, binary
	} {
		if got := Hops(test.ticks, test.radix); got != test.want {
			t.Errorf("Hops(%d, %d) = %d, want %d", test.ticks, test.radix, got, test.want)
		}
	}
}
