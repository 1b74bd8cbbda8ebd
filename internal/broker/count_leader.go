package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The leader's count of a quorum queue, over AMQP, where a peek would be a
// delivery (RabbitMQ 4.0–4.2), and when a 0 of it is believed.

// leaderQueryTimeout is how long RabbitMQ 4.0–4.2 let a quorum queue's
// leader answer a passive declaration's count (rabbit_quorum_queue:stat/1)
// before answering 0, as for an empty queue.
const leaderQueryTimeout = 250 * time.Millisecond

// arrivalsSettle is how long after the client's last deletion of a binding
// a deletion's check asks a leader for its count: a message routed just
// before the binding went reaches the leader's state within it.
const arrivalsSettle = time.Second

// leaderCount is the count of ready messages that quorum queue q's leader
// answers to a passive declaration over AMQP: no delivery, exact at that
// instant. trusted tells whether it may be believed: a count above 0
// always; a 0 only where it cannot be the 0 RabbitMQ answers for a leader
// that did not answer (zeroTrusted), and, where the effective strategy may
// be at-least-once, beside statistics that count no messages_dlx. settle
// waits arrivalsSettle after the client's last unbinding of q, as a
// deletion must. DESIGN.md, "Counting without a delivery".
func (c *Client) leaderCount(ctx context.Context, vhost string, rule checkRule, q queueJSON, settle bool) (count int64, trusted, gone bool, err error) {
	if q.Type != queueTypeQuorum {
		return 0, false, false, nil
	}
	if _, err := c.amqpEndpoint(ctx); err != nil {
		c.logAMQP(ctx, err)
		return 0, false, false, nil // counted by statistics instead
	}
	if c.mayWaitForDeadLettering(ctx, vhost, q) {
		// messages_dlx comes with the statistics; a broker that collects
		// none (its totals) never shows it.
		if q.source() != fromTotals {
			if q, gone, err = c.awaitFirstStatistics(ctx, vhost, q, hasDLXCount); err != nil || gone {
				return 0, false, gone, err
			}
		}
		if dlx := q.MessagesDLX; dlx == nil || *dlx != 0 {
			return 0, false, false, nil
		}
	}
	if settle {
		if err := c.awaitSettledArrivals(ctx, vhost, q.Name); err != nil {
			return 0, false, false, err
		}
	}
	answer, err := c.declarePassive(ctx, vhost, q.Name)
	// 3.x answers "state" and "online" once, from the cluster's membership:
	// they cannot tell that the leader answered.
	major, _, _ := parseVersion(rule.version)
	switch {
	case ctx.Err() != nil:
		return 0, false, false, context.Cause(ctx)
	case err != nil:
		c.logAMQP(ctx, err)
		return 0, false, false, nil // counted by statistics instead
	case answer.ready > 0:
		return answer.ready, true, false, nil
	case major < 4 || !zeroTrusted(answer, servingLeader):
		c.logUntrusted(ctx, q.Name, answer, leaderState{})
		return 0, false, false, nil // no need to look
	}
	after, gone, err := c.readLeaderState(ctx, vhost, q.Name)
	if err != nil || gone {
		return 0, false, gone, err
	}
	if !zeroTrusted(answer, after) {
		c.logUntrusted(ctx, q.Name, answer, after)
		return 0, false, false, nil
	}
	return 0, true, false, nil
}

// logUntrusted says why a leader's 0 was not believed: the check then
// waits for fresh statistics, which a user may want to know.
func (c *Client) logUntrusted(ctx context.Context, queue string, answer leaderAnswer, after leaderState) {
	if c.logf != nil {
		c.logf(ctx, "a leader's count of 0 not trusted; counting by fresh statistics", map[string]any{
			"queue": queue, "took_ms": answer.took.Milliseconds(), "consumers": answer.consumers,
			"state": after.state, "node": after.node, "online": after.online,
		})
	}
}

// zeroTrusted tells whether a passive declaration's 0 is its leader's
// answer, not the one RabbitMQ gives in its place: it came within the
// broker's timeout, with no consumer, and the member it asked serves right
// after (leaderCount). A member that did not answer and serves again
// milliseconds later would have stopped and recovered in between, and a
// recovering member does not serve.
func zeroTrusted(answer leaderAnswer, after leaderState) bool {
	return answer.ready == 0 && answer.took < leaderQueryTimeout && answer.consumers == 0 && after.serving()
}

// servingLeader stands for a leader that serves, for asking zeroTrusted
// what the answer alone tells.
var servingLeader = leaderState{state: "running", node: "-", online: []string{"-"}}

const (
	argDeadLetterStrategy = "x-dead-letter-strategy"
	atLeastOnce           = "at-least-once"
)

// logAMQP says why a leader's count was not asked or not believed: the
// check then counts by the statistics, which a user may want to know.
func (c *Client) logAMQP(ctx context.Context, err error) {
	var unproven *unprovenAMQPError
	switch {
	case c.logf == nil || errors.Is(err, errNoAMQP):
	case errors.As(err, &unproven):
		c.logf(ctx, "counts over AMQP not believed: the connection is not proven to reach the management API's cluster; "+
			"counting by the statistics", map[string]any{"amqp_endpoint": unproven.Endpoint, "vhost": unproven.VHost, "reason": unproven.Reason})
	default:
		c.logf(ctx, "counting over AMQP failed; counting by the statistics", map[string]any{"error": err.Error()})
	}
}

// amqpUnproven is why the client believes no count over AMQP in vhost,
// when its connection there was not proven to reach the management API's
// cluster (nil otherwise), for the error of a check that ends uncounted.
func (c *Client) amqpUnproven(vhost string) error {
	c.amqp.mu.Lock()
	defer c.amqp.mu.Unlock()
	var unproven *unprovenAMQPError
	if err := c.amqp.failed[vhost]; errors.As(err, &unproven) {
		return unproven
	}
	return nil
}

// awaitSettledArrivals waits until arrivalsSettle has passed since the
// client last deleted a binding into queue.
func (c *Client) awaitSettledArrivals(ctx context.Context, vhost, queue string) error {
	stored, _ := c.unbinds.Load(vhostObject{vhost, queue})
	last, ok := stored.(time.Time)
	if !ok {
		return nil
	}
	wait := time.Until(last.Add(arrivalsSettle))
	if wait <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(wait):
		return nil
	}
}

// leaderState is how the broker sees a quorum queue's leader when it
// answers, not as its statistics sampled it.
type leaderState struct {
	// state is "running" when the member the queue's record names as
	// leader is registered on its node and not recovering.
	state string
	// node is the record's leader, the member a passive declaration asks.
	node string
	// online are the nodes where a member of the queue is registered.
	online []string
}

// serving tells whether the member a passive declaration asks was there to
// answer.
func (s leaderState) serving() bool {
	return s.state == "running" && s.node != "" && slices.Contains(s.online, s.node)
}

// leaderStateQuery asks for a queue without statistics, with the items the
// broker reads from the queue's members as it answers.
var leaderStateQuery = url.Values{"disable_stats": {"true"}, "enable_queue_totals": {"true"}}

// readLeaderState reads quorum queue name's leaderState. The broker's
// answer has "state" and "online" twice: first as the members answer
// (rabbit_quorum_queue:i/2: state by the leader's registration, online by
// where members are registered), then as the cluster's membership sees them
// (format/2: running nodes). Only the first are the members', so they are
// read by hand: a JSON decoder keeps the last.
func (c *Client) readLeaderState(ctx context.Context, vhost, name string) (_ leaderState, gone bool, err error) {
	var raw json.RawMessage
	err = c.call(ctx, http.MethodGet, apiPath("queues", vhost, name), leaderStateQuery, nil, &raw)
	switch {
	case isNotFound(err):
		return leaderState{}, true, nil
	case err != nil:
		return leaderState{}, false, fmt.Errorf("reading the leader of queue %q of vhost %q: %w", name, vhost, err)
	}
	first, err := firstValues(raw, "state", "node", "online")
	if err != nil {
		return leaderState{}, false, fmt.Errorf("decoding the leader of queue %q of vhost %q: %w", name, vhost, err)
	}
	var s leaderState
	// A missing or odd field leaves its zero value, which serves nothing.
	_ = json.Unmarshal(first["state"], &s.state)
	_ = json.Unmarshal(first["node"], &s.node)
	_ = json.Unmarshal(first["online"], &s.online)
	return s, false, nil
}

// firstValues returns the first value of each of keys in the JSON object
// raw, where a key may occur more than once.
func firstValues(raw []byte, keys ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	found := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if _, seen := found[key]; !seen && slices.Contains(keys, key) {
			found[key] = value
		}
	}
	return found, nil
}

// mayWaitForDeadLettering tells whether q's messages may wait for an
// at-least-once dead-letter confirm: by its argument, else by its effective
// policy, else, before the statistics bring that, by the vhost's policies
// (read once per client), so that a new queue's count need not wait for its
// first statistics.
func (c *Client) mayWaitForDeadLettering(ctx context.Context, vhost string, q queueJSON) bool {
	if !q.mayDeadLetterAtLeastOnce() {
		return false
	}
	if _, byArgument := q.Arguments[argDeadLetterStrategy]; byArgument || len(q.EffectivePolicy) > 0 {
		return true
	}
	strategy, known := c.strategyByPolicies(ctx, vhost, q.Name)
	return !known || strategy == atLeastOnce
}

// strategyByPolicies is the dead-letter strategy that the vhost's policies
// give quorum queue name, for a broker that shows a queue's effective
// policy only with the statistics it does not collect. known is false when
// the policies cannot be read, a pattern cannot be matched here, or two
// policies of the top priority disagree.
func (c *Client) strategyByPolicies(ctx context.Context, vhost, name string) (strategy string, known bool) {
	policies, ok, err := c.VHostPolicies(ctx, vhost)
	if err != nil || !ok {
		return "", false
	}
	top, found := 0, false
	for _, p := range policies.Policies {
		if !appliesToQueue(p.ApplyTo, topology.QueueTypeQuorum) {
			continue
		}
		pattern, err := regexp.Compile(p.Pattern)
		if err != nil {
			return "", false
		}
		if !pattern.MatchString(name) {
			continue
		}
		s, _ := p.Definition[policyDeadLetterStrategy].(string)
		switch {
		case !found || p.Priority > top:
			strategy, top, found = s, p.Priority, true
		case p.Priority == top && s != strategy:
			return "", false
		}
	}
	return strategy, true
}
