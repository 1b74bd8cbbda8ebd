package broker

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// runUntilUnreachable is runLimited for calls that are pointless once the
// broker has stopped answering: after one fails with *UnreachableError, the
// calls not yet started are not made and fail with that error; those in
// flight finish. Each request waits up to the client's timeout for an
// answer, so without it n calls on a broker that no longer answers would
// take n/limit timeouts instead of one. Other failures, such as a
// permission refused on one object, do not stop the others.
func runUntilUnreachable(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) []error {
	var stop atomic.Pointer[error]
	return runLimited(ctx, n, limit, func(ctx context.Context, i int) error {
		if first := stop.Load(); first != nil {
			return fmt.Errorf("not attempted: %w", *first)
		}
		err := fn(ctx, i)
		var unreachable *UnreachableError
		if errors.As(err, &unreachable) {
			stop.CompareAndSwap(nil, &err)
		}
		return err
	})
}
