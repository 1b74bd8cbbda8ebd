// Package broker reads and changes delay sets on RabbitMQ through the
// management HTTP API, in the types of package topology: it reads what a
// set has, carries out the changes the planner orders, and counts the
// messages queues hold. It decides nothing about what a set should be.
//
// [New] builds a [Client] from a [Config] without any I/O; the client is
// safe for concurrent use. Config.Timeout ([DefaultTimeout] when zero)
// bounds every request, [Client.Requests] counts them, and [Client.Endpoint]
// names the API.
//
// # Reading a set
//
//   - [Client.ReadSet] reads the objects of a set of the default layout with
//     two name-filtered listings, which the broker evaluates over every queue
//     and exchange of the vhost, and each exchange's bindings: N + 5 requests
//     for N levels. [Client.ReadSetOf] reads a set of any layout so (31
//     requests for a library's, NServiceBus or Celery, whose 29 exchanges'
//     binding listings include the exchange-to-exchange bindings), and
//     [Client.ReadSetOfAnyLayout] the objects of every layout named for the
//     set at once, for an import that does not know the layout yet.
//   - [Client.ReadSetNamed] reads a set whose objects are known (a refresh, a
//     create) by name instead: 3N + 7 requests (86 for a library's set), each
//     costing the broker the same whatever else the vhost holds.
//     [ReadOptions].ShareBindings lets the reads of a refresh of many sets
//     share one listing of the vhost's bindings where the broker keeps its
//     metadata in Khepri.
//   - Each read notes where the queues it found run ([Placement]):
//     [Client.Placements] answers from the last read, without a request, and
//     [Client.ReadPlacements] reads named queues again after an apply.
//   - A vhost that does not exist fails a read with [ErrVHostNotFound];
//     [Client.VHostExists] asks.
//   - [Client.ListVHost] lists a whole vhost in three requests (its
//     exchanges, queues and bindings) and [Client.VHosts] the vhosts the user
//     sees, for finding every set (topology.Discover).
//
// # Changing a set
//
// [Client.Apply] carries out, in order, the changes of topology.Diff or
// topology.Teardown ([ApplyOptions]); each failure is a [*ChangeError] naming
// its object ([DescribeChange] names a change for errors and logs).
// [Client.DeleteSet] reads a whole set and deletes it in Teardown's order.
// Deleting what is already gone succeeds.
// A set whose quorum queues have a group size smaller than the nodes its
// vhost runs on is declared through those nodes in turn (the declaration's
// "node", which rabbit-hole's QueueSettings lacks; spread.go), so that no
// node holds a replica of every queue.
//
// # Counting messages
//
// [Client.CountedMessages] counts what the named queues hold by the
// management statistics, which disturb no queue and lag by up to
// [StatisticsLag]. [Client.HeldMessages] tells, exactly enough to refuse a
// change before making any of it, which queues hold messages: for each
// queue the statistics' count, and only when that is none, where a peek is
// no delivery, a peek at its head (/get with ack_requeue_true, a nack with
// requeue), so it sees a message published a moment before, which the
// statistics do not count yet. Where a peek would count as a delivery (a
// quorum queue of RabbitMQ 4.0–4.2, or one with a delivery limit on 3.x:
// the client learns its broker once, at its first check of a quorum queue,
// and one rule, count_rule.go's checkRule, decides) nothing peeks: the counts are
// the statistics', or without them the totals of the node that leads the
// queue; a queue neither counts is uncounted ([*UncountedError],
// [IsUncounted], [Uncounted]), which callers take as holding messages. It
// reads each queue alone, four at a time (HeldMessages: 32, whose checks
// may wait for fresh statistics together): one or two requests per queue,
// and one more when a queue is missing, to tell a missing vhost; never a
// listing. [Client.CountedByStatistics] is what the statistics alone count
// in one queue, for a test that waits until they count a message.
//
// All of the counting is in the count files, and a queue's JSON has one
// shape there (count.go's queueJSON), whatever a read asks of it: count.go
// counts (HeldMessages, CountedMessages, the peek, fresh statistics),
// count_rule.go says what a check may do on which broker, count_leader.go
// asks a quorum queue's leader; amqp.go carries that count over AMQP.
//
// # Deleting only empty queues
//
// Without [ApplyOptions].ForceDeleteQueues, Apply deletes no queue that holds
// messages, and refuses with a [*QueueNotEmptyError]:
//
//   - A classic queue is deleted with the broker's if-empty guard, which is
//     exact and atomic: the broker checks and deletes in one step.
//   - A quorum queue refuses that guard, so Apply checks it itself, as
//     HeldMessages does for one queue: its statistics (ready, unacknowledged,
//     and messages_dlx, those waiting for at-least-once dead-lettering), then,
//     where a peek is no delivery, a peek at its head, exact when the broker
//     answers; then, only when both found nothing, the delete without the
//     guard. A ready message is always seen unless it arrives between the
//     peek's answer and the delete, one HTTP round trip; since topology.Diff
//     deletes the bindings into a queue before the queue, only a publish by
//     the queue's name through the default exchange can. Where a peek would
//     be a delivery, Apply first deletes any binding still leading into the
//     queue, then deletes it only on a zero from statistics sampled after
//     that (three changes of the queue's reductions, the third read twice),
//     and refuses an uncounted queue.
//
// With ForceDeleteQueues every queue is deleted without a check, and its
// messages are lost. Apply checks one queue at a time, as it deletes it: a
// refusal stops Apply with the changes before it made. To refuse before
// making any change, call HeldMessages for the doomed queues first; the
// deletion's own check stays, for messages that arrive in between. A
// client sends its quorum queue deletions one at a time, those of all its
// Apply calls together: at once they can break a node of the broker
// (Client.quorumDeletionTurn says how).
//
// # Errors and contexts
//
// Errors are the same whichever way a request went: [*AuthError] for 401,
// [*APIError] for any other status of 400 or more, [*UnreachableError]
// without an answer or past the timeout, and the caller's context error once
// it has ended; [IsAccessRefused] tells a permission the user lacks. The
// client's own requests stop the moment the caller's context ends;
// rabbit-hole's calls take no context, so the client checks it before each
// of them: cancelling stops an operation between two requests, never in the
// middle of one of those, and each request in flight ends at the latest
// after the timeout.
//
// # The node
//
// For the reports of the benchmarks and the fault tests: [Client.Node]
// ([NodeInfo]) describes the node that answers, [Client.ClusterNodes]
// ([ClusterNode]) its cluster, [Client.NodeMemUsed] a node's memory and
// [Client.MetadataStore] whether it keeps its metadata in Khepri or Mnesia.
//
// What the broker does that this relies on, version by version, and which
// requests go through rabbit-hole v3 and which the client sends itself:
// DESIGN.md, "What the broker does".
package broker
