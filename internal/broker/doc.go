// Package broker reads and changes a delay set on RabbitMQ through the
// management HTTP API, in the types of package topology.
//
// [Client.ReadSet] reads one set's objects in N + 5 requests for N levels,
// however many other objects the vhost holds; [Client.Apply] carries out the
// ordered changes of topology.Diff; [Client.QueueMessages] counts what the
// queues hold. Every request honours its context and the client's timeout,
// and [Client.Requests] counts them.
//
// # Deleting only empty queues
//
// Without [ApplyOptions].ForceDeleteQueues, Apply deletes no queue that holds
// messages:
//
//   - A classic queue is deleted with the broker's if-empty guard, which is
//     exact and atomic: the broker checks and deletes in one step.
//   - A quorum queue refuses that guard, so Apply checks it itself, in order:
//     the management statistics (ready, unacknowledged, and messages_dlx,
//     those waiting for at-least-once dead-lettering), which lag by up to a
//     statistics interval, 5 s by default; then a peek at the head of the
//     queue through the /get endpoint, exact when the broker answers; then,
//     only when both found nothing, the delete without the guard. A message
//     the peek cannot see is caught only if the statistics already count it:
//     one delivered to a consumer and not yet acknowledged, or one waiting
//     in messages_dlx. A ready message is always seen unless it arrives
//     between the peek's answer and the delete, one HTTP round trip; since
//     topology.Diff deletes the bindings into a queue before the queue, only
//     a publish by the queue's name through the default exchange can.
//
// With ForceDeleteQueues every queue is deleted without a check, and its
// messages are lost.
//
// What the code relies on, measured on RabbitMQ 3.10.8:
//
//   - GET /api/queues/{vhost}?name=<regex>&use_regex=true&page=1&page_size=500
//     (and /api/exchanges) answers only the matching objects, arguments
//     included, but matches ignoring case: the client filters the answer again.
//     A vhost that does not exist answers 404.
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
//     takes up to count messages with basic.get and rejects them with
//     requeue: an empty array means the queue had no ready message at that
//     instant. The answer comes before the requeue lands: for about a
//     millisecond the message is unacknowledged, not ready. On a quorum queue
//     the message is kept, its expiry unchanged (with x-message-ttl 3000,
//     peeked at 1 s, it still dead-lettered at 3.01 s, with at-most-once and
//     at-least-once dead-lettering: TestAccPeekKeepsMessageTTL), but it comes
//     back marked redelivered with x-delivery-count one higher, and each
//     peek counts towards an x-delivery-limit.
//   - The management statistics lag: published messages showed in a queue's
//     counts after 3.5 to 9.3 s (the default statistics interval is 5 s).
//   - Deleting an object that does not exist answers 404; a declaration in a
//     vhost that does not exist answers 404 "vhost_not_found".
//   - A dead-lettered message whose routing key matches no binding of the
//     dead-letter exchange goes to that exchange's alternate exchange, for
//     classic queues, and for quorum queues with at-most-once and with
//     at-least-once dead-lettering: a malformed key ends in <name>.unroutable
//     (TestAccDeadLetteredMalformedKeyReachesUnroutable).
package broker
