// Package broker reads and changes delay sets on RabbitMQ through the
// management HTTP API, in the types of package topology, and counts the
// messages their queues hold. It decides nothing about what a set should be.
//
// [New] builds a [Client] from a [Config] without I/O; a client is safe for
// concurrent use, bounds every request by Config.Timeout and counts them
// ([Client.Requests]).
//
//   - Reading: [Client.ReadSet], [Client.ReadSetOf], [Client.ReadSetOfAnyLayout]
//     and [Client.ReadSetNamed] read a set's objects with a bounded number of
//     requests; [Client.ListVHost] and [Client.VHosts] find every set;
//     [Client.Placements] says where the queues read run.
//   - Changing: [Client.Apply] carries out topology.Diff's or Teardown's
//     changes in order, each failure a [*ChangeError]; [Client.DeleteSet].
//   - Counting (count.go's counter, which only reads; its pure parts in
//     count_*.go and amqp.go): [Client.HeldMessages], exact enough to refuse
//     a change before making any; [Client.CountedMessages], the statistics,
//     to watch a draining generation. A queue that cannot be counted exactly
//     is a [*UncountedError], taken as holding messages.
//   - Deleting (deletion.go): without [ApplyOptions].ForceDeleteQueues, no
//     queue that holds a message is deleted ([*QueueNotEmptyError]).
//
// Invariants of the deletion, the guard's last word:
//   - An exact 0 needs no consumer and no unacknowledged message: a classic
//     queue goes with the broker's if-empty and if-unused, one in use or a
//     quorum queue only after a count that is no delivery finds it empty.
//   - A count over AMQP is believed only from a connection proven to reach
//     the cluster the management API serves.
//   - Bindings a check removes are recorded before each removal and given
//     back, on a deadline of their own, on every outcome but the deletion.
//   - Quorum queues are deleted one at a time per cluster, across the
//     process's clients and the machine's processes (turns.go).
//   - Every AMQP operation has a deadline, and no lock is held across a
//     network call.
//
// Errors: [*AuthError] (401), [*APIError] (other statuses of 400 and more),
// [*UnreachableError] (no answer), or the caller's context error. DESIGN.md,
// "The broker client", says how and why, version by version.
package broker
