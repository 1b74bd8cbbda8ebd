// Package delayset does what a delay queue set does over time on a
// RabbitMQ broker, for the provider's resource, the demo and the
// benchmarks alike; it knows nothing of Terraform and words nothing for a
// user: its warnings and errors are typed reasons with their values.
//
// [Plan] works out, without a broker, what an apply does to a set: the
// generation it takes, drift it repairs, what stays unknown until the
// apply ([Planned]), and why ([Warning], [PlanError]). [Sets] makes it:
// Create, Update, Refresh, Import and Destroy each take a resolved spec
// (internal/topology's) or what is kept of the set ([Remembered]), and
// return what is to be kept and what happened ([Result]). A failure says
// how far the step got ([StageError]).
//
// Invariants:
//   - No queue holding messages is deleted unless the step is forced: the
//     guard (guard.go) decides it on an exact count, a change that would
//     delete such a queue is refused whole ([HoldsMessagesError]), and the
//     broker client asks once more at the instant of each deletion.
//   - The statistics ([Counted]) watch; only the exact count decides that
//     a draining generation is empty, and a queue the broker cannot count
//     holds a message for both. The generation switched from last is
//     called empty only once its statistics have settled ([Settled]).
//
// Files: one per verb (plan.go, create.go, update.go, refresh.go,
// import.go, destroy.go); the steps they share (desired.go, readback.go,
// and drain.go: [Keep], [Empty], [Refreshed], [CalledEmpty]); the guard;
// and the types every file uses (types.go, errors.go). A verb calls no
// other verb, and the guard calls nothing but the [Broker]. A [Clock] tells
// the time and waits, so every decision is tested without a broker or a
// sleep (internal/broker/brokertest's Broker and a fake clock).
package delayset
