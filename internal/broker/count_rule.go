package broker

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What a check may do to a queue. A peek (/get with ack_requeue_true)
// returns the head message; whether that return counts as a delivery
// depends on the queue type and the broker: never for a classic queue; for
// a quorum queue on 3.10–3.13 only against a delivery limit that an argument
// or policy sets, on 4.0–4.2 always (the default limit of 20 sends the 21st
// peeked message on early), on 4.3 never once every node runs it (flag
// rabbitmq_4.3.0). So the client learns its broker once (checkRule) and
// peeks only where a return cannot count. DESIGN.md, "What counts as a
// delivery, by version".

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
	// policyDeadLetterStrategy sets a quorum queue's dead-letter strategy.
	policyDeadLetterStrategy = "dead-letter-strategy"
)

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

// deadLetterStrategy is q's effective dead-letter strategy: its argument,
// which wins, else its policy's (an operator policy cannot set one). known
// is false while neither tells: no argument, and no policy read yet (it
// comes with the statistics).
func (q queueJSON) deadLetterStrategy() (strategy string, known bool) {
	if s, ok := q.Arguments[argDeadLetterStrategy].(string); ok {
		return s, true
	}
	switch string(q.EffectivePolicy) {
	case "":
		return "", false
	case "[]":
		return "", true // the empty definition
	}
	var policy map[string]any
	if json.Unmarshal(q.EffectivePolicy, &policy) != nil {
		return "", false
	}
	s, _ := policy[policyDeadLetterStrategy].(string)
	return s, true
}

// mayDeadLetterAtLeastOnce tells whether q's messages may wait for an
// at-least-once dead-letter confirm, which no count but the statistics'
// messages_dlx sees.
func (q queueJSON) mayDeadLetterAtLeastOnce() bool {
	strategy, known := q.deadLetterStrategy()
	return !known || strategy == atLeastOnce
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

// uncounted is a queue that a peek would disturb and that the statistics
// cannot count either, for why.
func (r checkRule) uncounted(vhost, queue, why string) *UncountedError {
	return &UncountedError{VHost: vhost, Queue: queue, Version: r.version, Reason: fmt.Sprintf("a peek at it would "+
		"count as a delivery on RabbitMQ %s (and dead-letter its head past the queue's delivery limit), and %s", r.version, why)}
}

// staleCount is a queue that only statistics, which lag, count messages in.
func (r checkRule) staleCount(vhost, queue string, messages int64, what string) *UncountedError {
	return &UncountedError{VHost: vhost, Queue: queue, Version: r.version, Messages: messages,
		Reason: fmt.Sprintf("only its management statistics, which lag by up to %s, count %s", StatisticsLag, what)}
}

// learnedRule is the checkRule of the counter's broker, learned at the
// first check that needs it.
type learnedRule struct {
	mu   sync.Mutex
	rule *checkRule
}

// overviewColumns: the version, and the node that answers. disable_stats
// spares the broker its statistics, and makes every version name the node
// whatever the user's tags.
var overviewColumns = url.Values{"columns": {"rabbitmq_version,node"}, "disable_stats": {"true"}}

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
