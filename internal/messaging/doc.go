// Package messaging publishes delayed messages into a delay queue set over
// AMQP and measures when they come out. The data-path acceptance tests, the
// demo and the benchmarks (benchmarks/cmd/delaydemo, benchdelays) share it.
//
//   - Connecting: [Dial] ([URLFromEnv]: [URLEnv], else [DefaultURL];
//     [RedactURL] for logs).
//   - Publishing: a [Publisher] ([NewPublisher]) sends each [Delayed]
//     message to the exchange of a [Set] with the routing key of its
//     [topology.KeyFormat] ([Set.Exchange], [Set.RoutingKey]) and waits for
//     the broker's confirms ([Publisher.Publish], [Publisher.PublishBatch],
//     [Publisher.PublishWithRoutingKey]); a [StreamPublisher]
//     ([NewStreamPublisher], [StreamOptions], [Confirmation]) does not wait
//     for each confirm ([DefaultMaxInFlight] unconfirmed at most), for a
//     paced load: [PublishPaced] sends a [Schedule] ([NewSchedule]) and
//     reports a [PacingReport].
//   - Consuming: a [Consumer] ([NewConsumer], [ConsumerOptions]) records
//     every [Arrival] of a queue, its lateness ([Arrival.Early],
//     [Arrival.WithinClock]: [BrokerClock] is the broker's expiry clock),
//     duplicates and [Foreign] deliveries, and waits for them
//     ([Consumer.WaitFor], [Consumer.WaitForIDs], [Consumer.Settle]).
//   - Measuring: [Summarize] ([Summary]), [PercentilesOf] ([Percentiles]) and
//     [Percentile].
//   - Queues: [DeclareQueue], [DeleteQueue], [CheckQueue]
//     ([ErrQueueNotFound]), [PurgeQueue], [ReadyMessages] (the broker's count
//     now, not the statistics') and [Get] (one message, polled).
//
// Every message body is a small JSON document ([Message], [ContentType];
// [DecodeMessage], [Message.Encode]) carrying its id, publish time and
// requested delay ([Message.Due]), so a consumer in another process can
// measure lateness without shared state.
package messaging
