package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The checks for messages, and what they may do to a queue.
//
// A check reads a queue's management statistics and, where they count
// nothing, may peek at its head: /get with ackmode ack_requeue_true, which
// takes the head message and returns it. Whether that return counts as a
// delivery depends on the queue type and on the broker (DESIGN.md, "What
// counts as a delivery, by version"):
//
//   - a classic queue counts nothing, on every version;
//   - a quorum queue (rabbit_fifo) counts every return on 3.10–3.13, where
//     no limit applies unless an x-delivery-limit argument or a policy's
//     delivery-limit sets one, and on 4.0–4.2, where the default limit is
//     20: the 21st peek of a message dead-letters it early, with reason
//     delivery_limit;
//   - on 4.3 a nack's return counts no more, once every node runs 4.3 (the
//     feature flag rabbitmq_4.3.0 enabled: the machine version 8).
//
// So the client learns the broker once (checkRule) and peeks only where a
// return cannot count; every other quorum queue gets the no-peek check:
// its statistics (countOf) and, before a deletion, once it takes no more
// messages (stopArrivals), only a 0 sampled after that (countFresh).

// quorumChecks is what a check may do to a quorum queue.
type quorumChecks int

const (
	// quorumNoPeek: every return counts against a limit that applies or
	// may apply (4.0–4.2, and whatever the client cannot vouch for).
	quorumNoPeek quorumChecks = iota
	// quorumPeekUnlessLimited: every return counts, but only a limit the
	// queue's arguments or policy set applies (3.10–3.13).
	quorumPeekUnlessLimited
	// quorumPeek: a peek's return is no delivery (4.3 and later 4.x, every
	// node on 4.3).
	quorumPeek
)

// flag43 is the feature flag that every node of a cluster runs 4.3 or
// later enables (and a fresh 4.3 install has on).
const flag43 = "rabbitmq_4.3.0"

// checkRule is what the checks may do on one broker: the one place that
// knows which queues a peek may count as a delivery on.
type checkRule struct {
	version string // as the broker reports it, for messages
	node    string // the node that answers the management API
	quorum  quorumChecks
}

// ruleFor is the rule of a broker of version whose enabled feature flags
// are enabled (nil when they were not read or could not be). A version it
// does not know gets the no-peek check: that one never counts as a
// delivery, whatever the broker.
func ruleFor(version, node string, enabled map[string]bool) checkRule {
	rule := checkRule{version: version, node: node, quorum: quorumNoPeek}
	major, minor, ok := parseVersion(version)
	switch {
	case !ok:
	case major == 3 && minor >= 10:
		rule.quorum = quorumPeekUnlessLimited
	case major == 4 && minor >= 3 && enabled[flag43]:
		rule.quorum = quorumPeek
	}
	return rule
}

// parseVersion reads the major and minor numbers of a version such as
// "4.0.5" or "4.3.0-rc.1".
func parseVersion(version string) (major, minor int, ok bool) {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, errMajor := strconv.Atoi(parts[0])
	minor, errMinor := strconv.Atoi(parts[1])
	return major, minor, errMajor == nil && errMinor == nil
}

// mayPeek tells whether a peek at q cannot count as a delivery.
func (r checkRule) mayPeek(q queueJSON) bool {
	switch {
	case q.Type == queueTypeClassic:
		return true
	case q.Type != queueTypeQuorum:
		return false // a stream, or a type the answer did not give
	}
	switch r.quorum {
	case quorumPeek:
		return true
	case quorumPeekUnlessLimited:
		return !q.mayHaveDeliveryLimit()
	case quorumNoPeek:
	}
	return false
}

const (
	queueTypeClassic = "classic"
	queueTypeQuorum  = "quorum"
	// argDeliveryLimit and policyDeliveryLimit set a quorum queue's delivery limit.
	argDeliveryLimit    = "x-delivery-limit"
	policyDeliveryLimit = "delivery-limit"
)

// queueJSON is one queue as a check reads it (checkColumns): its counts,
// and what decides how it may be checked.
type queueJSON struct {
	queueDepthJSON
	Type      string         `json:"type"`
	Leader    string         `json:"leader"` // quorum queues: the leader's node
	Arguments map[string]any `json:"arguments"`
	// EffectivePolicy is the definition of the policies that apply ({} or
	// [] for none); the broker gives it with the statistics only.
	EffectivePolicy json.RawMessage `json:"effective_policy_definition"`
	// Reductions is the work of the queue's process, which a quorum queue's
	// leader samples with its counts, in the same row, at each tick.
	Reductions *int64 `json:"reductions"`
}

// checkColumns asks for the fields of queueJSON; see depthColumns.
var checkColumns = url.Values{
	"columns": {"name,type,leader,arguments,effective_policy_definition,reductions," +
		"messages,messages_ready,messages_unacknowledged,messages_dlx"},
	"enable_queue_totals": {"true"},
}

// mayHaveDeliveryLimit tells whether a delivery limit applies to q, or may:
// the statistics, which bring the effective policy, are not there yet.
func (q queueJSON) mayHaveDeliveryLimit() bool {
	if _, ok := q.Arguments[argDeliveryLimit]; ok {
		return true
	}
	var policy map[string]any
	if len(q.EffectivePolicy) == 0 || string(q.EffectivePolicy) == "[]" {
		return len(q.EffectivePolicy) == 0 // absent: unknown; [] is the empty definition
	}
	if err := json.Unmarshal(q.EffectivePolicy, &policy); err != nil {
		return true
	}
	_, limited := policy[policyDeliveryLimit]
	return limited
}

// countSource is where a quorum queue's count comes from.
type countSource int

const (
	// fromNothing: the answer has no count, as for a queue too new for
	// statistics on a broker that collects them.
	fromNothing countSource = iota
	// fromStatistics: the management statistics. The counts come with the
	// reductions, from the same row (countFresh); messages_dlx and the
	// policy come from another table, collected apart, maybe later.
	fromStatistics
	// fromTotals: a 4.x broker without management metrics gives the totals
	// of its own node's metrics table, which only the leader's node fills:
	// another node answers 0 whatever the queue holds. No reductions, no
	// messages_dlx (messages counts those).
	fromTotals
)

func (q queueJSON) source() countSource {
	switch {
	case q.Reductions != nil:
		return fromStatistics
	case q.Messages != nil && q.MessagesDLX == nil:
		return fromTotals
	}
	return fromNothing
}

// countOf is what rule lets a check believe of q's count without a peek,
// or why nothing can be believed.
func (r checkRule) countOf(vhost string, q queueJSON) (int64, error) {
	messages, _ := q.messages()
	switch q.source() {
	case fromStatistics:
		return messages, nil
	case fromTotals:
		if r.node != "" && q.Leader == r.node {
			return messages, nil
		}
		return 0, r.uncounted(vhost, q.Name, fmt.Sprintf("the broker collects no management metrics, and its node "+
			"that answers (%s) does not lead the queue (its leader: %s), so its totals read 0 whatever the queue holds. "+
			"Enable management metrics, or point the provider at %s", r.node, displayNode(q.Leader), displayNode(q.Leader)))
	}
	return 0, r.uncounted(vhost, q.Name, "the broker has no statistics of the queue yet. Try again in a few seconds")
}

func displayNode(node string) string {
	if node == "" {
		return "none now"
	}
	return node
}

func (r checkRule) uncounted(vhost, queue, why string) *UncountedError {
	return &UncountedError{VHost: vhost, Queue: queue, Version: r.version, Reason: why}
}

// learnedRule is the checkRule of a Client's broker, learned at the first
// check that needs it.
type learnedRule struct {
	mu   sync.Mutex
	rule *checkRule
}

// overviewColumns: the version, and the node that answers. disable_stats
// spares the broker its statistics, and makes every version name the node
// whatever the user's tags.
var overviewColumns = url.Values{"columns": {"rabbitmq_version,node"}, "disable_stats": {"true"}}

// rule learns the broker's checkRule once: its version and node
// (GET /api/overview) and, for 4.3 and later, its feature flags.
func (c *Client) rule(ctx context.Context) (checkRule, error) {
	c.learned.mu.Lock()
	defer c.learned.mu.Unlock()
	if c.learned.rule != nil {
		return *c.learned.rule, nil
	}
	var overview struct {
		Version string `json:"rabbitmq_version"`
		Node    string `json:"node"`
	}
	if err := c.call(ctx, http.MethodGet, apiPath("overview"), overviewColumns, nil, &overview); err != nil {
		return checkRule{}, fmt.Errorf("reading the broker's version: %w", err)
	}
	var enabled map[string]bool
	if major, minor, _ := parseVersion(overview.Version); major == 4 && minor >= 3 {
		enabled = c.enabledFlags(ctx)
	}
	if ctx.Err() != nil {
		return checkRule{}, context.Cause(ctx)
	}
	rule := ruleFor(overview.Version, overview.Node, enabled)
	c.learned.rule = &rule
	return rule, nil
}

// enabledFlags reads the broker's enabled feature flags; nil when it may
// not (3.10–3.12 show them to administrators only) or could not.
func (c *Client) enabledFlags(ctx context.Context) map[string]bool {
	var flags []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	if err := c.call(ctx, http.MethodGet, apiPath("feature-flags"), nil, nil, &flags); err != nil {
		return nil
	}
	enabled := map[string]bool{}
	for _, flag := range flags {
		enabled[flag.Name] = flag.State == "enabled"
	}
	return enabled
}

// readQueue reads one queue by its own path (a plain 404 for a missing
// queue or vhost alike).
func (c *Client) readQueue(ctx context.Context, vhost, name string) (queueJSON, error) {
	var q queueJSON
	err := c.call(ctx, http.MethodGet, apiPath("queues", vhost, name), checkColumns, nil, &q)
	if q.Name == "" {
		q.Name = name
	}
	return q, err
}

// Timing of the no-peek check; fields of checkTiming so that unit tests
// can shorten them.
type checkTiming struct {
	// poll is how often a check reads a queue again while it waits: the
	// statistics change once per tick (5 s), so more often would only load
	// the broker.
	poll time.Duration
	// firstStatistics bounds the wait for a new queue's first statistics.
	firstStatistics time.Duration
	// fresh bounds the wait for statistics sampled after the check began:
	// three ticks of the leader and three collections, 5 s each by
	// default, and a new queue's first statistics (7-10 s on 4.0.5).
	fresh time.Duration
	// totals is how long after its first read the totals of a broker
	// without management metrics are trusted to count what the queue held
	// then: two ticks of the leader (quorum_tick_interval, 5 s).
	totals time.Duration
}

var defaultCheckTiming = checkTiming{
	poll: time.Second, firstStatistics: 3 * StatisticsLag, fresh: 4 * StatisticsLag, totals: StatisticsLag,
}

// awaitFirstStatistics reads q again until it has what the check needs
// (has), at most c.timing.firstStatistics: a new queue has no statistics
// for some seconds (benchmarks/checks-4.0.md), and its policy, which on 3.x
// tells whether it may be peeked, comes with them. gone tells that it was
// deleted meanwhile.
func (c *Client) awaitFirstStatistics(ctx context.Context, vhost string, q queueJSON, has func(queueJSON) bool) (_ queueJSON, gone bool, err error) {
	deadline := time.Now().Add(c.timing.firstStatistics)
	for !has(q) && time.Now().Before(deadline) {
		if err := c.pause(ctx); err != nil {
			return q, false, err
		}
		if q, err = c.readQueue(ctx, vhost, q.Name); isNotFound(err) {
			return q, true, nil
		} else if err != nil {
			return q, false, err
		}
	}
	return q, false, nil
}

func (c *Client) pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(c.timing.poll):
		return nil
	}
}

// countFresh is the no-peek check of a queue about to be deleted: it
// returns a count above 0 as soon as one is read, and 0 only from a count
// sampled after first was read, which the caller made after the queue
// stopped taking messages (Apply deletes the bindings into a queue first).
// first may have no count yet (a new queue): its first statistics are
// then the first change.
//
// Statistics prove it: the leader samples a quorum queue's counts with the
// reductions of its process, in one row, every tick (quorum_tick_interval),
// and its node collects that row into the statistics
// (collect_statistics_interval); each tick's reductions differ. The first
// change after first may bring a row sampled before first, read late by
// the collection; the second brings one sampled after. But the collector
// stores a row's counts and its reductions in two tables, one after the
// other (rabbit_mgmt_metrics_collector), so a read can pair one
// collection's reductions with the counts of the one before: the counts
// shown beside the second change may be the first's. Beside the third
// they are the second's at the oldest, since the collector finishes one
// collection before the next. And a row counts only from its second read,
// made at once, when the same reductions come back, so that a read caught
// inside a slow collection is not the one believed. Totals (no
// management metrics) carry no such mark: they are trusted c.timing.totals
// after first, from the leader's own node, which must stay the leader.
// Past c.timing.fresh without proof, the count is unknown (*UncountedError).
func (c *Client) countFresh(ctx context.Context, vhost string, rule checkRule, first queueJSON) (_ int64, gone bool, err error) {
	started, deadline := time.Now(), time.Now().Add(c.timing.fresh)
	q, changes, reread := first, 0, false
	for {
		messages, err := rule.countOf(vhost, q)
		switch {
		case err == nil && messages > 0:
			return messages, false, nil
		case err == nil && q.source() == fromStatistics && changes >= 3 && reread,
			err == nil && q.source() == fromTotals && q.Leader == first.Leader && time.Since(started) >= c.timing.totals:
			return 0, false, nil
		case err != nil && q.source() == fromTotals:
			return 0, false, err // another node leads it: waiting changes nothing
		case time.Now().After(deadline):
			if err == nil {
				err = rule.uncounted(vhost, q.Name, fmt.Sprintf("its statistics did not show a sample taken after the check began "+
					"within %s. Try again", c.timing.fresh))
			}
			return 0, false, err
		}
		// The third change is read again at once: a pause could outlast the
		// node's sampling interval, and no read would ever repeat a row.
		if changes < 3 || reread || q.source() != fromStatistics {
			if err := c.pause(ctx); err != nil {
				return 0, false, err
			}
		}
		next, err := c.readQueue(ctx, vhost, q.Name)
		if isNotFound(err) {
			return 0, true, nil
		} else if err != nil {
			return 0, false, err
		}
		reread = sameReductions(q.Reductions, next.Reductions)
		if !reread {
			changes++
		}
		q = next
	}
}

func sameReductions(a, b *int64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// hasCount, hasPolicy and hasDLXCount are what awaitFirstStatistics may
// wait for.
func hasCount(q queueJSON) bool    { return q.source() != fromNothing }
func hasPolicy(q queueJSON) bool   { return len(q.EffectivePolicy) > 0 }
func hasDLXCount(q queueJSON) bool { return q.MessagesDLX != nil }

// leaderQueryTimeout is how long RabbitMQ 4.0–4.2 let a quorum queue's
// leader answer a passive declaration's count (rabbit_quorum_queue:stat/1)
// before answering 0, as for an empty queue.
const leaderQueryTimeout = 250 * time.Millisecond

// arrivalsSettle is how long after the client's last deletion of a binding
// a deletion's check asks a leader for its count: a message routed just
// before the binding went reaches the leader's state within it.
const arrivalsSettle = time.Second

// leaderCount is the count of ready messages of quorum queue q that its
// leader answers to a passive declaration over AMQP: no delivery, and
// exact at that instant. trusted tells whether the count may be believed.
// A count above 0 always may. A 0 may only where it cannot be the answer
// RabbitMQ gives when the leader does not answer (rabbit_quorum_queue:stat/1
// answers {ok, 0, 0} on a timeout of 250 ms, an error or an exception:
// DESIGN.md, "Counting without a delivery"): the declaration took less
// than that timeout, the queue has no consumer (the same fallback answers 0
// consumers), and the member the queue's record names as leader is
// registered and serves right after it (leaderState). With at-least-once
// dead-lettering, messages waiting for their target's confirm are not
// ready ones, and nothing but the statistics counts them: a 0 is trusted
// there only beside statistics that count none (messages_dlx known and 0;
// a new queue's first statistics are waited for). Such a message waits for
// milliseconds, unless its target never confirms: then it waits for
// minutes, and the statistics count it.
// settle makes it wait arrivalsSettle after the client's last deletion of
// a binding into q, as a deletion must.
func (c *Client) leaderCount(ctx context.Context, vhost string, rule checkRule, q queueJSON, settle bool) (count int64, trusted, gone bool, err error) {
	if q.Type != queueTypeQuorum {
		return 0, false, false, nil
	}
	if q.Arguments[argDeadLetterStrategy] == atLeastOnce {
		if q, gone, err = c.awaitFirstStatistics(ctx, vhost, q, hasDLXCount); err != nil || gone {
			return 0, false, gone, err
		}
		if dlx := q.MessagesDLX; dlx == nil || *dlx != 0 {
			return 0, false, false, nil
		}
	}
	if _, err := c.amqpEndpoint(ctx); err != nil {
		c.logAMQP(ctx, err)
		return 0, false, false, nil // counted by statistics instead
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

func (c *Client) logAMQP(ctx context.Context, err error) {
	if c.logf != nil && !errors.Is(err, errNoAMQP) {
		c.logf(ctx, "counting over AMQP failed; counting by the statistics", map[string]any{"error": err.Error()})
	}
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
