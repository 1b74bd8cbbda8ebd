package provider

import (
	"fmt"
	"math"
)

// intOf converts an integer of the configuration, the state or a
// function's arguments, which Terraform gives as int64, to an int, which is
// 32 bits on the 386 and arm builds .goreleaser.yml ships. A value outside
// the int32 range, which every platform's int holds, is refused with the
// same error on every platform (outOfRange), never truncated.
func intOf(v int64) (int, bool) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false
	}
	return int(v), true
}

// outOfRange says why intOf refused the value v, in the words of the
// planner's own range errors.
func outOfRange(v int64) string {
	if v > 0 {
		return fmt.Sprintf("must be at most %d, got %d", math.MaxInt32, v)
	}
	return fmt.Sprintf("must be at least %d, got %d", math.MinInt32, v)
}

// clampedIntOf is intOf for a value that this provider wrote into the state
// from an int: one outside the int32 range (a state written on a 64-bit
// platform, changed by hand) becomes the nearest value in it, which every
// check of such a value refuses, rather than wrapping around to a small one.
func clampedIntOf(v int64) int {
	return int(min(max(v, math.MinInt32), math.MaxInt32))
}
