package broker

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// queueJSON is one queue as the management API gives it, read by its own
// path: the one shape in which the client reads a queue's counts (not
// rabbithole.QueueInfo, which lacks messages_dlx). Each read asks for the
// fields it needs. A count the broker leaves out is nil: a queue too new
// for statistics, or a 4.x broker without management metrics, which still
// gives totals (enable_queue_totals) from the leader's node.
type queueJSON struct {
	Name                   string `json:"name"`
	Messages               *int64 `json:"messages"`
	MessagesReady          *int64 `json:"messages_ready"`
	MessagesUnacknowledged *int64 `json:"messages_unacknowledged"`
	MessagesDLX            *int64 `json:"messages_dlx"` // quorum queues: waiting for at-least-once dead-lettering
	Consumers              *int64 `json:"consumers"`

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

// depthColumns asks for a queue's counts alone: the broker sends only these.
// enable_queue_totals asks a broker without management metrics (4.x) for the
// totals it still has; one with them, or 3.10, answers as without it.
var depthColumns = url.Values{
	"columns":             {"name,messages,messages_ready,messages_unacknowledged,messages_dlx"},
	"enable_queue_totals": {"true"},
}

// checkColumns asks for every field of queueJSON; see depthColumns.
var checkColumns = url.Values{
	"columns": {"name,type,leader,arguments,effective_policy_definition,reductions,consumers," +
		"messages,messages_ready,messages_unacknowledged,messages_dlx"},
	"enable_queue_totals": {"true"},
}

// messages is every message the statistics count in the queue: ready,
// unacknowledged and waiting in messages_dlx, or the total where the broker
// gives only that and it is larger. known is false when the broker gave no
// count at all.
func (q queueJSON) messages() (messages int64, known bool) {
	for _, count := range []*int64{q.MessagesReady, q.MessagesUnacknowledged, q.MessagesDLX} {
		if count != nil {
			messages += *count
			known = true
		}
	}
	if q.Messages != nil {
		messages, known = max(messages, *q.Messages), true
	}
	return messages, known
}

// unseen is what q's statistics count that a peek cannot see: all they
// count but the ready messages (some versions count a message waiting for
// an at-least-once dead-letter confirm in messages alone).
func (q queueJSON) unseen() int64 {
	messages, _ := q.messages()
	return max(0, messages-valueOf(q.MessagesReady))
}

func valueOf(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// describeCounts says what q's statistics count, for a staleCount.
func (q queueJSON) describeCounts() string {
	messages, _ := q.messages()
	return describe(fmt.Sprintf("%d message(s)", messages), namedCount{q.MessagesReady, "ready"}, namedCount{q.MessagesUnacknowledged, "delivered and unacknowledged"},
		namedCount{q.MessagesDLX, "waiting to be dead-lettered"})
}

// describeUnseen says what q's statistics count beside its ready
// messages (unseen), for a staleCount beside a leader's count of ready
// messages, which supersedes theirs.
func (q queueJSON) describeUnseen() string {
	return describe(fmt.Sprintf("%d message(s) that are not ready", q.unseen()), namedCount{q.MessagesUnacknowledged, "delivered and unacknowledged"},
		namedCount{q.MessagesDLX, "waiting to be dead-lettered"})
}

type namedCount struct {
	n    *int64
	what string
}

// describe lists the counts above 0, or says otherwise when none is.
func describe(otherwise string, counts ...namedCount) string {
	var parts []string
	for _, count := range counts {
		if count.n != nil && *count.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", *count.n, count.what))
		}
	}
	if len(parts) == 0 {
		return otherwise
	}
	return strings.Join(parts, ", ")
}

// peekedMessage is the part of a /get answer's message that counts.
type peekedMessage struct {
	// MessageCount is the number of ready messages left in the queue once
	// this one was taken, as basic.get-ok reports it.
	MessageCount int64 `json:"message_count"`
}

func sameReductions(a, b *int64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// hasCount, hasPolicy and hasDLXCount are what awaitFirstStatistics may
// wait for.
func hasCount(q queueJSON) bool    { return q.source() != fromNothing }
func hasPolicy(q queueJSON) bool   { return len(q.EffectivePolicy) > 0 }
func hasDLXCount(q queueJSON) bool { return q.MessagesDLX != nil }
