package broker_test

import "time"

// testHangSlack is how long past the moment something was due a test waits
// before it calls the broker hung: a guard against a hang, never a bound on
// how late a message or a statistic may be, which are the benchmarks'
// figures.
const testHangSlack = 2 * time.Minute
