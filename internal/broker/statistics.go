package broker

import "context"

// CountedByStatistics is what the management statistics alone count in one
// queue of vhost — ready, unacknowledged and waiting in messages_dlx — with
// no peek, whatever they say. known is false while the broker gives no count
// for the queue at all; a queue the broker does not have is an error
// (isNotFound).
//
// The count lags behind the queue by up to StatisticsLag, and not only by
// being absent: a new classic queue sends its first statistics as it starts
// (rabbit_amqqueue_process:init_it2, RabbitMQ 4.3), before its first
// message can arrive, and the next a statistics interval later; and the
// management agent zeroes the counts of a queue deleted under the same name
// (rabbit_mgmt_metrics_collector:handle_deleted_queues). So a queue that
// holds a message can count 0, known, until the statistics catch up. CountedMessages and HeldMessages peek where the
// statistics count nothing; this does not, so it suits waiting until the
// statistics themselves count what a queue holds, as a test does before an
// apply whose counts are the statistics'. It decides nothing.
func (c *Client) CountedByStatistics(ctx context.Context, vhost, queue string) (messages int64, known bool, err error) {
	return c.readQueueDepth(ctx, vhost, queue)
}
