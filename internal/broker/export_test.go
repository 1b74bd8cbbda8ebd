package broker

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
)

// PeekRequest lets the acceptance tests make the client's own peek and
// record what the broker does with it.
var PeekRequest = peekRequest

// PeekReady is the counter's peek at the head of queue name.
func PeekReady(c *Client, ctx context.Context, vhost, name string) (ready int64, gone bool, err error) {
	return c.counter.peekReady(ctx, vhost, name)
}

// QueueMessages returns what the management statistics alone count in each
// named queue of vhost (ready, unacknowledged and messages_dlx), 0 for a
// queue they count nothing in or have no statistics for yet; a queue that
// does not exist is absent. It lists just these queues with the name filter,
// in one request unless the names are very long.
//
// Only tests read the statistics alone, never peeking: to see that they
// have not yet counted a message before checking what HeldMessages finds,
// or to wait until they have. The provider counts with CountedMessages and
// HeldMessages.
func (c *Client) QueueMessages(ctx context.Context, vhost string, queues []string) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "queue messages", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	counts := make(map[string]int64, len(queues))
	for _, pattern := range namePatterns(queues) {
		var result queueDepthPage
		err := c.call(ctx, http.MethodGet, apiPath("queues", vhost), filteredQuery(pattern, depthColumns), nil, &result)
		items, err := exactMatches("queues", vhost, pattern, err, result.FilteredCount, result.Items,
			func(q queueJSON) string { return q.Name })
		if err != nil {
			return nil, err
		}
		for _, q := range items {
			counts[q.Name], _ = q.messages()
		}
	}
	return counts, nil
}

type queueDepthPage struct {
	FilteredCount int         `json:"filtered_count"`
	Items         []queueJSON `json:"items"`
}

// maxPatternLength keeps a QueueMessages listing's URL well under the 8,000
// bytes the management API's HTTP server accepts in a request line.
const maxPatternLength = 2000

// namePatterns returns regular expressions that together match exactly the
// given names, each short enough for a request line.
func namePatterns(names []string) []string {
	var patterns []string
	var alternatives []string
	length := 0
	flush := func() {
		if len(alternatives) > 0 {
			patterns = append(patterns, "^("+strings.Join(alternatives, "|")+")$")
			alternatives, length = nil, 0
		}
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		quoted := regexp.QuoteMeta(name)
		if length > 0 && length+len(quoted)+1 > maxPatternLength {
			flush()
		}
		alternatives = append(alternatives, quoted)
		length += len(quoted) + 1
	}
	flush()
	return patterns
}

// SetCheckTiming shortens the waits of c's no-peek check, for unit tests
// that serve it statistics in steps: how often it reads again, and how long
// it waits for a new queue's first statistics, for fresh ones, and before
// it trusts the totals of a broker without management metrics.
func SetCheckTiming(c *Client, poll, firstStatistics, fresh, totals time.Duration) {
	c.counter.timing = checkTiming{poll: poll, firstStatistics: firstStatistics, fresh: fresh, totals: totals}
}

// PeeksAtQuorumQueues learns c's broker, as its first check of a quorum
// queue does, and tells whether its checks peek at a quorum queue that no
// delivery limit applies to (checkRule): on 3.10–3.13, and on 4.3 with
// every node on 4.3; never on 4.0–4.2, where every return counts.
func PeeksAtQuorumQueues(ctx context.Context, c *Client) (bool, error) {
	rule, err := c.counter.rule(ctx)
	return rule.mayPeek(queueJSON{Type: queueTypeQuorum, EffectivePolicy: json.RawMessage(`{}`)}), err
}

// HasStatistics tells whether the broker gives a count of queue yet and,
// for a quorum queue, its policy: a new queue has neither for some seconds.
func HasStatistics(ctx context.Context, c *Client, vhost, queue string) (bool, error) {
	q, err := c.counter.readQueue(ctx, vhost, queue)
	return hasCount(q) && (q.Type == queueTypeClassic || hasPolicy(q)), err
}

// LeaderQueryTimeout is how long RabbitMQ 4.0–4.2 let a leader answer.
const LeaderQueryTimeout = leaderQueryTimeout

// LeaderCount is leaderCount of the quorum queue name, read as a check
// reads it, without the settling wait.
func LeaderCount(ctx context.Context, c *Client, vhost, name string) (count int64, trusted bool, err error) {
	q, err := c.counter.readQueue(ctx, vhost, name)
	if err != nil {
		return 0, false, err
	}
	rule, err := c.counter.rule(ctx)
	if err != nil {
		return 0, false, err
	}
	count, trusted, _, err = c.counter.leaderCount(ctx, vhost, rule, q, false)
	return count, trusted, err
}

// QueueBindings lists the bindings into queue, as the broker has them, for
// tests that check what a deletion left bound.
func (c *Client) QueueBindings(ctx context.Context, vhost, queue string) ([]rabbithole.BindingInfo, error) {
	var bindings []rabbithole.BindingInfo
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("queues", vhost, queue, "bindings"), func() (err error) {
		bindings, err = c.rabbit.ListQueueBindings(vhost, queue)
		return err
	})
	return bindings, err
}

// QuorumChecksAhead is how many quorum deletions may check ahead of the turn.
const QuorumChecksAhead = quorumChecksAhead

// HoldQuorumTurn takes c's turn of quorum deletions, as another deletion
// in flight would, until release is called.
func HoldQuorumTurn(ctx context.Context, c *Client) (release func(), err error) {
	return c.quorumDeletionTurn(ctx, "/")
}

// CountForDeletion counts queue as a deletion does before its DELETE,
// handing the counter stop as the deletion's arrivalsStopper.
func CountForDeletion(ctx context.Context, c *Client, vhost, queue string, stop func(context.Context) (bool, error)) (map[string]int64, error) {
	return c.counter.count(ctx, vhost, []string{queue}, countForDeletion, stop)
}

// CountInTurn asks queue's leader again, as a quorum deletion does in its
// turn.
func CountInTurn(ctx context.Context, c *Client, vhost, queue string) (map[string]int64, error) {
	return c.counter.count(ctx, vhost, []string{queue}, leaderAgain, nil)
}
