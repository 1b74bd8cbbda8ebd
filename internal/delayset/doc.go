// Package delayset does what a delay queue set does over time on a
// RabbitMQ broker, for the rabbitmq_delay_queue_set resource, the demo and
// the benchmarks alike; it knows nothing of Terraform.
//
// [Sets] creates, updates, refreshes, imports and destroys sets. Each step
// takes a spec (internal/topology's, resolved) and what the state
// remembers of the set ([Remembered]), and returns what the state should
// remember and what happened ([Result]: the objects, the draining
// generations' messages, where the queues run, warnings). A failure says
// how far the step got ([StageError]).
//
// The guard (guard.go) is the one place that decides whether a queue may
// be deleted: only when an exact count finds it empty, unless the step is
// forced. A change that would delete a queue holding messages is refused
// whole ([HoldsMessagesError]), and the broker client asks once more at
// the instant of each deletion.
//
// The draining generations of a set (drain.go):
//
//   - [Keep]: the generations an update keeps beside the current one;
//   - [Empty]: how long an update waits for them to empty (its
//     migration_wait), and which of them are empty for certain and may be
//     deleted;
//   - [Refreshed]: the messages a refresh shows them holding;
//   - [CalledEmpty]: which of them a plan may call empty from the last
//     refresh, once the statistics of the generation switched from last
//     have settled ([Settled]).
//
// It asks a [Counter] how many messages queues hold, in two ways: by the
// broker's statistics ([Counted]), which disturb no queue but lag behind
// the messages by up to [broker.StatisticsLag], and exactly, which may peek
// at a queue where a peek is no delivery (see [broker.Client.HeldMessages]).
// The statistics watch; only the exact count decides that a generation is
// empty, and a queue the broker cannot count holds a message for both. A
// [Clock] tells the time and waits, so the decisions are tested without a
// broker or a sleep (internal/broker/brokertest's Broker and a fake clock).
package delayset
