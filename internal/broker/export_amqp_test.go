package broker

import (
	"context"
	"errors"
	"time"
)

// SetAMQPProofWait shortens how long c's new AMQP connections wait for the
// management API to list them.
func SetAMQPProofWait(c *Client, wait time.Duration) { c.counter.amqp.proofWait = wait }

// DeclarePassive is the ready count that a passive declaration of queue
// answers c over AMQP.
func DeclarePassive(ctx context.Context, c *Client, vhost, queue string) (int64, error) {
	answer, err := c.counter.declarePassive(ctx, vhost, queue)
	return answer.ready, err
}

// AMQPUnproven is why c believes no count over AMQP in vhost, nil when it
// has no such reason.
func AMQPUnproven(c *Client, vhost string) error { return c.counter.amqp.unproven(vhost) }

// IsUnprovenAMQP tells an AMQP connection not proven to reach the
// management API's cluster.
func IsUnprovenAMQP(err error) bool {
	var unproven *unprovenAMQPError
	return errors.As(err, &unproven)
}
