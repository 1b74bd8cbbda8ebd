package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The broker's counting, all of it: the one shape in which the client reads
// a queue (queueJSON); the counts of a set's queues, HeldMessages before a
// change, CountedMessages to watch a draining generation,
// CountedByStatistics for tests that wait for the statistics, and the check
// Apply makes before deleting a quorum queue (countForDeletion), each queue
// read alone; the peek (peekReady); what a check may do to a queue
// (checkRule); the no-peek check's fresh statistics (countFresh) and its
// leader's count (leaderCount), whose AMQP transport is amqp.go's.

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

// readQueueDepth reads the message counts of one queue by its own path,
// which the broker answers from that queue alone however many the vhost
// holds; not through rabbit-hole, whose DetailedQueueInfo has no
// messages_dlx either. The broker answers a plain 404 alike for a missing
// queue and a missing vhost.
func (c *Client) readQueueDepth(ctx context.Context, vhost, name string) (messages int64, known bool, err error) {
	var q queueJSON
	if err := c.call(ctx, http.MethodGet, apiPath("queues", vhost, name), depthColumns, nil, &q); err != nil {
		return 0, false, err
	}
	messages, known = q.messages()
	return messages, known, nil
}

// HeldMessages tells which of the named queues of vhost hold messages, and
// how many at least, exactly enough to refuse a change before making any:
// a queue is in the map only if it holds something; one that does not
// exist is absent; a missing vhost is ErrVHostNotFound. A queue it cannot
// count exactly is in the map as holding at least one message, and the
// error beside the map says why (IsUncounted). Once one queue is found
// holding, the checks still waiting are stopped heldGrace later and their
// queues uncounted.
func (c *Client) HeldMessages(ctx context.Context, vhost string, queues []string) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "held messages", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	return withoutEmpty(c.heldMessages(ctx, vhost, queues, countHeld, nil))
}

// withoutEmpty drops the queues that hold nothing from what heldMessages
// counted.
func withoutEmpty(held map[string]int64, err error) (map[string]int64, error) {
	maps.DeleteFunc(held, func(_ string, n int64) bool { return n == 0 })
	return held, err
}

// StatisticsLag bounds how long the management statistics take to count a
// message that entered a queue: the broker samples them every 5 s by default
// (collect_statistics_interval), and counts showed 3.5 to 9.3 s after the
// publish (DESIGN.md, "What the broker does").
const StatisticsLag = 10 * time.Second

// CountedMessages is HeldMessages without the peek: what the management
// statistics of each named queue count, one request per queue, lagging by
// up to a statistics interval. It disturbs no queue that has statistics, so
// it suits watching queues that hold messages, such as a draining
// generation's; it never decides that deleting a queue is safe. A queue the
// broker gives no statistics for (a new one, or any on a broker that
// collects none) is peeked at where a peek is no delivery, as HeldMessages
// does: a count of nothing there would call a generation that holds
// messages empty. Where a peek would count, such a queue is counted by the
// totals of its leader's node, or uncounted, as in HeldMessages.
func (c *Client) CountedMessages(ctx context.Context, vhost string, queues []string) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "counted messages", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	return withoutEmpty(c.heldMessages(ctx, vhost, queues, countStatistics, nil))
}

// CountedByStatistics is what the management statistics alone count in one
// queue of vhost (ready, unacknowledged, messages_dlx), with no peek;
// known is false while they count nothing at all. They lag by up to
// StatisticsLag and may read 0 for a queue that holds a message, so this
// decides nothing: it serves a test that waits for the statistics.
func (c *Client) CountedByStatistics(ctx context.Context, vhost, queue string) (messages int64, known bool, err error) {
	return c.readQueueDepth(ctx, vhost, queue)
}

// checkMode is how exact a count of a queue's messages must be, and so
// what it may cost.
type checkMode int

const (
	// countStatistics: the statistics where they count (CountedMessages).
	countStatistics checkMode = iota
	// countHeld: exact enough to refuse a change (HeldMessages).
	countHeld
	// countForDeletion: exact at the moment of a deletion (Apply).
	countForDeletion
)

// heldMessages counts the messages each named queue of vhost holds, in
// mode, for every queue that exists (one that does not is absent from the
// map; a vhost that does not exist is ErrVHostNotFound). Each queue is read
// alone, so the check costs the same however many other queues the vhost
// holds. An uncounted queue counts as holding at least one message, and
// comes back as the error too (see HeldMessages). stop, for a deletion's
// count, is the deletion's: see arrivalsStopper.
func (c *Client) heldMessages(ctx context.Context, vhost string, queues []string, mode checkMode, stop arrivalsStopper) (map[string]int64, error) {
	names := slices.Compact(slices.Sorted(slices.Values(queues)))
	counts := make([]int64, len(names))
	exists := make([]bool, len(names))
	limit := readConcurrency
	if mode != countStatistics {
		limit = checkConcurrency // checks that may wait for fresh statistics wait together
	}
	// Before a change, one queue found holding a message settles it: the
	// change is refused. The checks still waiting for fresh statistics a
	// moment later are stopped, and their queues uncounted.
	checkCtx, stopChecks := context.WithCancelCause(ctx)
	defer stopChecks(nil)
	var stopping sync.Once
	errs := runUntilUnreachable(checkCtx, len(names), limit, func(ctx context.Context, i int) (err error) {
		counts[i], exists[i], err = c.queueHeld(ctx, vhost, names[i], mode, stop)
		if IsUncounted(err) {
			counts[i] = max(counts[i], 1)
		}
		if mode == countHeld && counts[i] > 0 && (err == nil || IsUncounted(err)) {
			stopping.Do(func() { time.AfterFunc(heldGrace, func() { stopChecks(errOthersHold) }) })
		}
		return err
	})
	if ctx.Err() == nil && errors.Is(context.Cause(checkCtx), errOthersHold) {
		for i, err := range errs {
			if errors.Is(err, errOthersHold) || errors.Is(err, context.Canceled) {
				errs[i], counts[i], exists[i] = &UncountedError{VHost: vhost, Queue: names[i],
					Reason: "its check was stopped once another queue was found holding messages"}, 1, true
			}
		}
	}
	err := errors.Join(errs...)
	if err != nil && !IsUncounted(err) {
		return nil, err
	}
	held := make(map[string]int64, len(names))
	for i, name := range names {
		if exists[i] {
			held[name] = counts[i]
		}
	}
	if slices.Contains(exists, false) {
		switch found, vhostErr := c.VHostExists(ctx, vhost); {
		case vhostErr != nil:
			return nil, vhostErr
		case !found:
			return nil, fmt.Errorf("reading queues: %w: %q", ErrVHostNotFound, vhost)
		}
	}
	return held, err
}

// heldGrace is how long, once a check before a change found a queue
// holding messages, the checks of the other queues may go on: enough for
// those that need no fresh statistics, which then name their queues too.
const heldGrace = 2 * time.Second

// errOthersHold stops the checks that a refusal no longer needs.
var errOthersHold = errors.New("another queue holds messages")

// arrivalsStopper makes a queue about to be deleted take no more messages,
// and tells whether it had to (a binding went). A deletion hands it to its
// count, which calls it where its 0 must hold from then on: the count itself
// changes nothing on the broker, and the deletion restores what it removed.
type arrivalsStopper func(ctx context.Context) (stoppedAny bool, err error)

// queueHeld counts the messages one queue holds. Where a peek is no
// delivery (checkRule), the peek counts the ready messages exactly, and
// what it cannot see (unacknowledged, waiting for dead-lettering) needs
// unseenByThePeek; elsewhere countWithoutPeek. Statistics alone, which lag,
// decide only for CountedMessages: before a change or a deletion a count
// they alone make is a staleCount. exists is false when the queue (or its
// vhost) answered 404.
func (c *Client) queueHeld(ctx context.Context, vhost, name string, mode checkMode, stop arrivalsStopper) (held int64, exists bool, err error) {
	q, err := c.readQueue(ctx, vhost, name)
	switch {
	case isNotFound(err):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("reading the statistics of queue %q of vhost %q: %w", name, vhost, err)
	}
	counted, known := q.messages()
	if mode == countStatistics && counted > 0 {
		return counted, true, nil
	}
	rule, peek, gone, err := c.howToCheck(ctx, vhost, &q, mode)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("checking queue %q of vhost %q: %w", name, vhost, err)
	case gone:
		return 0, false, nil
	case !peek:
		return c.countWithoutPeek(ctx, vhost, rule, q, mode, stop)
	case mode == countStatistics && known:
		return counted, true, nil
	}
	ready, gone, err := c.peekReady(ctx, vhost, name)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("looking for a message in queue %q of vhost %q: %w", name, vhost, err)
	case gone:
		return 0, false, nil
	case ready > 0 || mode == countStatistics:
		return ready, true, nil
	}
	held, gone, err = c.unseenByThePeek(ctx, vhost, rule, q, mode, stop)
	return held, !gone, err
}

// unseenByThePeek counts queue q, whose peek found no ready message, for a
// change or a deletion: messages delivered and unacknowledged, and those
// waiting for an at-least-once dead-letter confirm, which only the
// statistics count. Its 0 is exact when no consumer holds the queue (the
// leader's answer over AMQP says so exactly, else the statistics) and the
// statistics count none of those; otherwise only statistics sampled after
// the check began, once arrivals stopped, tell (countFresh).
func (c *Client) unseenByThePeek(ctx context.Context, vhost string, rule checkRule, q queueJSON, mode checkMode, stop arrivalsStopper) (_ int64, gone bool, err error) {
	consumers := valueOf(q.Consumers)
	if answer, err := c.askOverAMQP(ctx, vhost, q.Name); err == nil {
		if answer.ready > 0 {
			return answer.ready, false, nil
		}
		consumers = answer.consumers
	}
	switch {
	case q.unseen() > 0:
		// Not worth waiting for fresh statistics: the change is refused either way.
		return q.unseen(), false, rule.staleCount(vhost, q.Name, q.unseen(), q.describeCounts())
	case consumers == 0:
		return 0, false, nil
	}
	if mode == countForDeletion {
		if q, gone, err = c.countFromStoppedArrivals(ctx, vhost, q, stop); err != nil || gone {
			return 0, gone, err
		}
	}
	return c.countFresh(ctx, vhost, rule, q)
}

// askOverAMQP is the passive declaration's answer for queue, where the
// client has an AMQP endpoint.
func (c *Client) askOverAMQP(ctx context.Context, vhost, queue string) (leaderAnswer, error) {
	if _, err := c.amqpEndpoint(ctx); err != nil {
		return leaderAnswer{}, err
	}
	answer, err := c.declarePassive(ctx, vhost, queue)
	if err != nil {
		c.logAMQP(ctx, err)
	}
	return answer, err
}

// countFromStoppedArrivals runs a deletion's stop, and reads q again if it removed
// anything: a read made before arrivals stopped does not count.
func (c *Client) countFromStoppedArrivals(ctx context.Context, vhost string, q queueJSON, stop arrivalsStopper) (_ queueJSON, gone bool, err error) {
	if stop == nil {
		return q, false, nil
	}
	stoppedAny, err := stop(ctx)
	if err != nil || !stoppedAny {
		return q, false, err
	}
	next, err := c.readQueue(ctx, vhost, q.Name)
	if isNotFound(err) {
		return q, true, nil
	}
	return next, false, err
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

// howToCheck tells whether rule lets a check peek at q. A classic queue is
// peeked at without learning the broker. On 3.x, where a limit that a
// policy sets decides, a quorum queue whose policy the answer lacks (a new
// queue's comes with its statistics) is read again until it has it (not
// for CountedMessages).
func (c *Client) howToCheck(ctx context.Context, vhost string, q *queueJSON, mode checkMode) (rule checkRule, peek, gone bool, err error) {
	if q.Type == queueTypeClassic {
		return checkRule{}, true, false, nil
	}
	if rule, err = c.rule(ctx); err != nil {
		return rule, false, false, err
	}
	if rule.quorum == quorumPeekUnlessLimited && mode != countStatistics && !hasPolicy(*q) {
		if *q, gone, err = c.awaitFirstStatistics(ctx, vhost, *q, hasPolicy); err != nil || gone {
			return rule, false, gone, err
		}
	}
	return rule, rule.mayPeek(*q), false, nil
}

// countWithoutPeek counts q, which rule forbids peeking at. For a change
// or a deletion: its leader's count where it can be trusted (leaderCount),
// else statistics sampled after the check began (countFresh); a deletion's
// count first stops arrivals and waits for them to settle. Otherwise what
// the statistics or the leader's totals count (rule.countOf).
func (c *Client) countWithoutPeek(ctx context.Context, vhost string, rule checkRule, q queueJSON, mode checkMode, stop arrivalsStopper) (_ int64, exists bool, err error) {
	if mode == countStatistics {
		messages, err := rule.countOf(vhost, q)
		return messages, true, err
	}
	deletion := mode == countForDeletion
	if deletion {
		var gone bool
		if q, gone, err = c.countFromStoppedArrivals(ctx, vhost, q, stop); err != nil || gone {
			return 0, false, err
		}
	}
	n, trusted, gone, err := c.leaderCount(ctx, vhost, rule, q, deletion)
	switch {
	case err != nil || gone:
		return 0, !gone, err
	case trusted && n == 0 && q.unseen() > 0:
		return 1, true, rule.staleCount(vhost, q.Name, q.unseen(), q.describeCounts())
	case trusted:
		return n, true, nil
	}
	messages, gone, err := c.countFresh(ctx, vhost, rule, q)
	return messages, !gone, err
}

// describeCounts says what q's statistics count, for a staleCount.
func (q queueJSON) describeCounts() string {
	var parts []string
	for _, count := range []struct {
		n    *int64
		what string
	}{{q.MessagesReady, "ready"}, {q.MessagesUnacknowledged, "delivered and unacknowledged"}, {q.MessagesDLX, "waiting to be dead-lettered"}} {
		if count.n != nil && *count.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", *count.n, count.what))
		}
	}
	if len(parts) == 0 {
		messages, _ := q.messages()
		return fmt.Sprintf("%d message(s)", messages)
	}
	return strings.Join(parts, ", ")
}

// peekRequest is the body of POST /api/queues/{vhost}/{name}/get that looks
// at the head of a queue and puts the message back: basic.get, then
// basic.nack with requeue (ack_requeue_true). Not basic.reject
// (reject_requeue_true): RabbitMQ 4.3 counts a rejected message as a failed
// delivery, and a quorum queue dead-letters a message past its delivery
// limit (20 by default on 4.x), so the 21st peek at a TTL queue would send
// its head on early (TestAccPeeksAreNoDeliveries). A nack is a plain return
// there. On 3.10, which has no default limit, the two modes act alike.
var peekRequest = map[string]any{"count": 1, "ackmode": "ack_requeue_true", "encoding": "auto", "truncate": 50}

// peekedMessage is the part of a /get answer's message that counts.
type peekedMessage struct {
	// MessageCount is the number of ready messages left in the queue once
	// this one was taken, as basic.get-ok reports it.
	MessageCount int64 `json:"message_count"`
}

// peekReady looks at the head of a queue and puts the message back, and
// returns how many ready messages the queue held at that instant: 0 when it
// had none, else the peeked one and the message_count the broker reported
// with it. gone tells that the queue does not exist. It is exact for ready
// messages; it cannot see those delivered and unacknowledged or, for
// at-least-once dead-lettering, waiting in messages_dlx. rabbit-hole has no
// /get, so the request is made here.
func (c *Client) peekReady(ctx context.Context, vhost, name string) (ready int64, gone bool, err error) {
	var peeked []peekedMessage
	err = c.call(ctx, http.MethodPost, apiPath("queues", vhost, name, "get"), nil, peekRequest, &peeked)
	switch {
	case isGone(err):
		return 0, true, nil
	case err != nil:
		return 0, false, err
	case len(peeked) == 0:
		return 0, false, nil
	}
	return peeked[0].MessageCount + 1, false, nil
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

// countFresh counts q by statistics sampled after first was read: a count
// above 0 at once (a staleCount until proven fresh), and 0 only once proven.
// A quorum queue proves a fresh sample by the third change of its
// reductions, read twice (the collector may pair one collection's
// reductions with the previous counts); an idle classic queue, whose
// reductions do not change, and totals (no management metrics, from the
// leader's node) count from c.timing.totals after first. Past
// c.timing.fresh without proof, the queue is uncounted. DESIGN.md, "The
// broker client", says why.
func (c *Client) countFresh(ctx context.Context, vhost string, rule checkRule, first queueJSON) (_ int64, gone bool, err error) {
	started, deadline := time.Now(), time.Now().Add(c.timing.fresh)
	q, changes, reread := first, 0, false
	for {
		messages, err := rule.countOf(vhost, q)
		// An idle classic queue's reductions do not change: its process
		// emits statistics every interval all the same, so one bound later
		// they count what it held once the check began.
		fresh := q.source() == fromStatistics && changes >= 3 && reread ||
			q.source() == fromStatistics && q.Type == queueTypeClassic && time.Since(started) >= c.timing.totals ||
			q.source() == fromTotals && q.Leader == first.Leader && time.Since(started) >= c.timing.totals
		switch {
		case err == nil && messages > 0 && fresh:
			return messages, false, nil
		case err == nil && messages > 0:
			// Not worth waiting for: the change is refused either way.
			return messages, false, rule.staleCount(vhost, q.Name, messages, q.describeCounts())
		case err == nil && fresh:
			return 0, false, nil
		case err != nil && q.source() == fromTotals:
			return 0, false, err // another node leads it: waiting changes nothing
		case time.Now().After(deadline):
			switch {
			case err == nil && rule.mayPeek(q):
				err = &UncountedError{VHost: vhost, Queue: q.Name, Version: rule.version, Reason: fmt.Sprintf("only its "+
					"statistics count what its consumers hold, and they did not show a sample taken after the check began "+
					"within %s. Try again", c.timing.fresh)}
			case err == nil:
				why := fmt.Sprintf("its statistics did not show a sample taken after the check began within %s. Try again", c.timing.fresh)
				if unproven := c.amqpUnproven(vhost); unproven != nil {
					why += fmt.Sprintf(" (its leader's count over AMQP was not asked: %v)", unproven)
				}
				err = rule.uncounted(vhost, q.Name, why)
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
