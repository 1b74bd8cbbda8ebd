package faults

import (
	"errors"
	"time"
)

// lossWindow is how long after a message was due (and the broker back) a
// test that loses nothing waits for it before it calls it lost and the
// broker hung: a guard against a hang, never a bound on lateness, which the
// fault table reports.
const lossWindow = 2 * time.Minute

// errHung is the cause of such a wait that ran out.
var errHung = errors.New("hung: not there within the test's generous loss window")
