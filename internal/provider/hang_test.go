package provider

import (
	"context"
	"errors"
	"time"
)

// testHangSlack is how long past the last message's due time a test waits
// before it calls the broker hung: a guard against a hang, never a bound on
// lateness, which is the benchmarks' figure.
const testHangSlack = 2 * time.Minute

// errTestHung is the cause of a test's deadline that ran out.
var errTestHung = errors.New("hung: no progress within the test's generous deadline")

// testHangContext is a context that ends, with errTestHung as its cause,
// testHangSlack after longest.
func testHangContext(longest time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(context.Background(), longest+testHangSlack, errTestHung)
}
