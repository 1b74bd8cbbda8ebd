// Package drain decides what becomes of the draining generations of a delay
// queue set, for the rabbitmq_delay_queue_set resource:
//
//   - [Keep]: the generations an update keeps beside the current one;
//   - [Empty]: how long an apply waits for them to empty (its
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
// empty, and a queue the broker cannot count holds a message for both. A [Clock] tells the
// time and waits, so the decisions are tested without a broker or a sleep.
// *broker.Client is a Counter and [SystemClock] the machine's clock; the
// provider hands the resource its clock (a test's own in tests).
package drain
