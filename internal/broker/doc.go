// Package broker reads and changes a delay set on RabbitMQ through the
// management HTTP API, in the types of package topology.
//
// [Client.ReadSet] reads one set's objects in N + 5 requests for N levels
// with two name-filtered listings, which the broker evaluates over every
// queue and exchange of the vhost; [Client.ReadSetOf] reads a set of a
// library's layout (NServiceBus, Celery) the same way in 31 requests (its 29
// exchanges' binding listings, exchange-to-exchange bindings included, and
// the two listings). Import uses them. [Client.ReadSetNamed] reads a set
// whose objects are known (a refresh, a create) by name instead,
// in 3N + 7 requests (86 for a library's set) that each cost the broker the
// same whatever else the vhost holds; [Client.Apply] carries out the
// ordered changes of topology.Diff; [Client.CountedMessages] counts what the
// queues hold from the statistics, and [Client.HeldMessages] tells, exactly
// enough to refuse a change before making any, which queues hold messages.
// The client's timeout bounds every request, and [Client.Requests] counts
// them.
//
// # Rabbit-hole, and the requests it cannot make
//
// The client speaks to the management API through rabbit-hole v3
// (github.com/michaelklishin/rabbit-hole/v3), one *rabbithole.Client built
// by [New] on the client's own transport, which counts every request and
// keeps connections alive (rabbit-hole asks to close each one). Through
// rabbit-hole's typed API go: declaring exchanges, queues and bindings
// (ExchangeSettings, QueueSettings, BindingInfo), deleting them (DeleteQueue
// with QueueDeleteOptions{IfEmpty} unless forced), the listing of a set's
// queues (PagedListQueuesWithParametersIn, with the name filter), the
// binding listings of ReadSet and of a binding's deletion, and VHostExists
// (GetVhost). Exchanges, queues and bindings are decoded into its
// ExchangeInfo, QueueInfo and BindingInfo.
//
// The client sends these requests itself, because rabbit-hole v3.5.0 cannot:
//
//   - the name-filtered listing of exchanges: it lists exchanges only whole,
//     which would make a read cost as much as the vhost holds;
//   - the statistics of one queue (GET /api/queues/{vhost}/{name}) that
//     HeldMessages, CountedMessages and the quorum deletion check read:
//     QueueInfo and DetailedQueueInfo have no messages_dlx;
//   - the peek (POST /api/queues/{vhost}/{name}/get): rabbit-hole has no
//     such call;
//   - declaring an internal exchange: ExchangeSettings has no internal field
//     (the layout's exchanges are not internal; only an object read back with
//     that property is declared so);
//   - declaring a queue through a node of the cluster it names (the body's
//     "node"): QueueSettings has no node field. Apply spreads the quorum
//     queues of a set with a group size smaller than the nodes its vhost
//     runs on over those nodes so, and reads them from the vhost's
//     cluster_state (see spread.go).
//
// Errors are the same whichever way a request went: *AuthError for 401
// (rabbit-hole drops the broker's reason; the transport keeps it),
// *APIError for any other status of 400 or more, *UnreachableError without
// an answer or past the timeout, and the caller's context error once it has
// ended. rabbit-hole takes a 404 to a DELETE for success, which is how the
// client treats deleting what is already gone.
//
// Contexts: the client's own requests carry the caller's context and stop
// the moment it ends. rabbit-hole's calls take none, so the client checks
// the context before each of them: cancelling stops an operation between two
// requests, never in the middle of one, and each request in flight ends at
// the latest after the client's timeout (Config.Timeout, 30 s by default).
//
// # Deleting only empty queues
//
// Without [ApplyOptions].ForceDeleteQueues, Apply deletes no queue that holds
// messages:
//
//   - A classic queue is deleted with the broker's if-empty guard, which is
//     exact and atomic: the broker checks and deletes in one step.
//   - A quorum queue refuses that guard, so Apply checks it itself, as
//     HeldMessages does for one queue, reading that queue alone whatever
//     else its vhost holds: the queue's management statistics (ready,
//     unacknowledged, and messages_dlx, those waiting for at-least-once
//     dead-lettering), which lag by up to a statistics interval, 5 s by
//     default; then a peek at the head of the queue through the /get
//     endpoint, exact when the broker answers; then, only when both found
//     nothing, the delete without the guard. A message the peek cannot see
//     is caught only if the statistics already count it: one delivered to a
//     consumer and not yet acknowledged, or one waiting in messages_dlx. A
//     ready message is always seen unless it arrives between the peek's
//     answer and the delete, one HTTP round trip; since topology.Diff
//     deletes the bindings into a queue before the queue, only a publish by
//     the queue's name through the default exchange can.
//
// With ForceDeleteQueues every queue is deleted without a check, and its
// messages are lost.
//
// Apply checks one queue at a time, as it deletes it: a refusal stops Apply
// with the changes before it made. To refuse a change that would delete
// non-empty queues before making any of it, call [Client.HeldMessages] for
// those queues first. It takes, for each queue, the statistics' count, and
// only when that is none the peek's (the peeked message and the
// message_count the broker reports with it), so it sees a message published
// a moment before, which the statistics do not count yet, in classic and
// quorum queues alike. It does not peek at a queue the statistics count
// messages in: a quorum queue requeues the peeked message at its back, where
// it waits for every message behind it to expire first. It reads each queue
// alone, four at a time: one or two requests per queue (its statistics, and
// a peek when they count none), and one more when a queue is missing, to
// tell a missing vhost; never a listing, which the broker would evaluate
// over every queue of the vhost. Each peek that finds a message marks it redelivered
// (quorum: x-delivery-count one higher), as the deletion check does. Between
// the check and the deletion messages may still arrive: the deletion's own
// check (the if-empty guard, or statistics and peek) stays.
//
// What the code relies on, measured on RabbitMQ 3.10.8:
//
//   - GET /api/queues/{vhost}?name=<regex>&use_regex=true&page=1&page_size=500
//     (and /api/exchanges) answers only the matching objects, arguments
//     included, but matches ignoring case: the client filters the answer again.
//     A vhost that does not exist answers 404. The broker evaluates the
//     filter over every queue of the vhost: a listing with the statistics
//     costs more the more queues the vhost holds, one queue's own statistics
//     the same however many.
//   - GET /api/queues/{vhost}/{name}?columns=… answers that queue alone with
//     the columns asked for; for a quorum queue messages_ready,
//     messages_unacknowledged and messages_dlx (its messages total counted
//     the messages_dlx too). A queue too new for statistics answers without
//     them. A missing queue and a missing vhost both answer a plain 404
//     ("Object Not Found").
//   - A queue's "type" field says classic even when it was declared without
//     x-queue-type, and the broker accepts re-declaring such a queue with
//     x-queue-type = classic (and the reverse) as equivalent. ReadSet takes
//     the type from that field, so a planned classic queue, which states its
//     type, never differs from one the broker made classic by default.
//   - x-message-ttl must be a JSON integer: "1000" and 1000.0 are refused (400).
//   - DELETE /api/queues/{vhost}/{name}?if-empty=true refuses a classic queue
//     that holds messages with 400 "… not empty". Quorum queues refuse the
//     if-empty flag itself (400 "queue.delete operations with if-empty flag
//     set are not supported by quorum queues").
//   - POST /api/queues/{vhost}/{name}/get with ackmode reject_requeue_true
//     (the client now uses ack_requeue_true, below)
//     takes up to count messages with basic.get and rejects them with
//     requeue: an empty array means the queue had no ready message at that
//     instant. The answer comes before the requeue lands: for about a
//     millisecond the message is unacknowledged, not ready. On a quorum queue
//     the message is kept, its expiry unchanged (with x-message-ttl 3000,
//     peeked at 1 s, it still dead-lettered at 3.01 s, with at-most-once and
//     at-least-once dead-lettering: TestAccPeekKeepsMessageTTL), but it comes
//     back marked redelivered with x-delivery-count one higher, and each
//     peek counts towards an x-delivery-limit. It comes back at the back of
//     the queue, and a quorum queue expires messages from its head only:
//     with a second message published 1.5 s after it (x-message-ttl 3000),
//     the peeked message dead-lettered after the second, 1.5 s late
//     (with the reject; the nack keeps it first: TestAccPeekKeepsQuorumHeadFirst). A peek at a queue of a set that
//     holds messages would delay them by up to the queue's TTL.
//   - The management statistics lag: published messages showed in a queue's
//     counts after 3.5 to 9.3 s (the default statistics interval is 5 s),
//     and messages that left a quorum queue were still counted for 3 to 10 s
//     (TestAccStatisticsOutliveMessages).
//
// RabbitMQ 4.3.6 (Debian sid) differs:
//   - A peek with reject_requeue_true counts as a failed delivery: the 21st
//     dead-letters a quorum queue's message (delivery limit 20 by default,
//     reason delivery_limit), early. ack_requeue_true (basic.nack with
//     requeue) is a plain return there and does not count; 25 such peeks left
//     a message with a 6 s TTL to expire on time (TestAccPeeksAreNoDeliveries).
//   - A peeked message goes back to the head of a quorum queue, so it
//     still dead-letters first (TestAccPeekKeepsQuorumHeadFirst; with the
//     nack, so does 3.10.8).
//   - Deleting an object that does not exist answers 404; a declaration in a
//     vhost that does not exist answers 404 "vhost_not_found".
//   - A dead-lettered message whose routing key matches no binding of the
//     dead-letter exchange goes to that exchange's alternate exchange, for
//     classic queues, and for quorum queues with at-most-once and with
//     at-least-once dead-lettering: a malformed key ends in <name>.unroutable
//     (TestAccDeadLetteredMalformedKeyReachesUnroutable).
package broker
