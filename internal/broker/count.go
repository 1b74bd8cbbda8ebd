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
	"sync"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
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
// path (which the broker answers from that queue alone): the one shape in
// which the client reads a queue's counts and what decides how it may be
// checked. Each read asks for the fields it needs (depthColumns,
// checkColumns); the others stay unset. Not rabbithole.QueueInfo, which
// lacks messages_dlx; a read of a set's objects, which needs no count,
// takes that.
//
// A count the broker leaves out is nil: a queue too new for its first
// statistics, or any queue of a broker that collects no management metrics
// (RabbitMQ 4.x with the deprecated feature management_metrics_collection
// not permitted). Such a 4.x broker still answers enable_queue_totals=true
// with messages, messages_ready and messages_unacknowledged from the
// queue's own metrics (refreshed every 5 s, on the node that leads a quorum
// queue; 0 on the others), where messages also counts those waiting in
// messages_dlx.
type queueJSON struct {
	Name                   string `json:"name"`
	Messages               *int64 `json:"messages"`
	MessagesReady          *int64 `json:"messages_ready"`
	MessagesUnacknowledged *int64 `json:"messages_unacknowledged"`
	MessagesDLX            *int64 `json:"messages_dlx"` // quorum queues: waiting for at-least-once dead-lettering

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
	"columns": {"name,type,leader,arguments,effective_policy_definition,reductions," +
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
// how many at least, exactly enough to decide before any change whether
// deleting them would lose messages: a queue is in the map only if it holds
// something, and a queue that does not exist is absent. A vhost that does not
// exist is ErrVHostNotFound.
//
// It makes, for each queue, the check Apply makes before deleting a quorum
// queue, but without waiting for statistics sampled after it began (see
// queueHeld): Apply's deletion waits, and checks again. A queue it cannot
// count (see UncountedError) is in the map as holding one message, and the
// error, beside the map, says why (IsUncounted tells such an error). Once
// one queue is found holding messages, the checks still waiting for fresh
// statistics heldGrace later are stopped: the map then names the queues
// found holding by then, enough to refuse a change.
func (c *Client) HeldMessages(ctx context.Context, vhost string, queues []string) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "held messages", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	return withoutEmpty(c.heldMessages(ctx, vhost, queues, countHeld))
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
	return withoutEmpty(c.heldMessages(ctx, vhost, queues, countStatistics))
}

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
// mode, for every queue that exists (one that does not is
// absent from the map; a vhost that does not exist is ErrVHostNotFound).
// Each queue is read alone, four at a time, so the check costs the same
// however many other queues the vhost holds: one or two requests per queue
// (more while a check waits for statistics), one more if a queue is
// missing, to ask about the vhost (the broker answers 404 alike for both),
// and, at the client's first check of a quorum queue, one or two to learn
// the broker (checkRule). Uncounted queues count as holding one message,
// and come back as the error too (see HeldMessages).
func (c *Client) heldMessages(ctx context.Context, vhost string, queues []string, mode checkMode) (map[string]int64, error) {
	names := slices.Compact(slices.Sorted(slices.Values(queues)))
	counts := make([]int64, len(names))
	exists := make([]bool, len(names))
	limit := readConcurrency
	if mode != countStatistics {
		limit = checkConcurrency // checks that may wait for fresh statistics wait together
	}
	// Before a change, one queue found holding a message settles it: the
	// change is refused. The checks still waiting for fresh statistics a
	// moment later are stopped (their queues absent from the answer), so
	// that a refusal does not wait for them.
	checkCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var stopping sync.Once
	errs := runUntilUnreachable(checkCtx, len(names), limit, func(ctx context.Context, i int) (err error) {
		counts[i], exists[i], err = c.queueHeld(ctx, vhost, names[i], mode)
		if IsUncounted(err) {
			counts[i] = 1
		}
		if mode == countHeld && err == nil && counts[i] > 0 {
			stopping.Do(func() { time.AfterFunc(heldGrace, func() { stop(errOthersHold) }) })
		}
		return err
	})
	if ctx.Err() == nil && errors.Is(context.Cause(checkCtx), errOthersHold) {
		for i, err := range errs {
			if errors.Is(err, errOthersHold) || errors.Is(err, context.Canceled) {
				errs[i], exists[i] = nil, false
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

// queueHeld counts the messages one queue holds:
//
//  1. the queue's management statistics (ready, unacknowledged and
//     messages_dlx), the only source for messages delivered but
//     unacknowledged and, for at-least-once dead-lettering, waiting in
//     messages_dlx; they lag by up to a statistics interval;
//  2. only when they count none (or the broker gives none), and only where
//     a peek is no delivery (checkRule), a peek at the queue's head that
//     puts the message back (peekReady), exact for ready messages at the
//     instant the broker answers; a message it finds comes back marked
//     redelivered. Without statistics the peek is all there is: messages
//     unacknowledged or waiting in messages_dlx go unseen;
//  3. where a peek would count as a delivery, no peek at all
//     (countWithoutPeek): the statistics, or the totals of the leader's
//     node, and for a deletion only a count sampled after the check began.
//
// The peek is kept for when the statistics count nothing because each peek
// disturbs the queue a little (it marks the message redelivered, and a
// reject-peek, before issue 23, moved a 3.10 quorum queue's head behind the
// others). A count from statistics that lag may also be too high; a caller
// deciding to delete then keeps the queue, which errs on the safe side.
//
// exists is false when either answered 404: the queue (or its vhost) does
// not exist.
func (c *Client) queueHeld(ctx context.Context, vhost, name string, mode checkMode) (held int64, exists bool, err error) {
	q, err := c.readQueue(ctx, vhost, name)
	switch {
	case isNotFound(err):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("reading the statistics of queue %q of vhost %q: %w", name, vhost, err)
	}
	if counted, _ := q.messages(); counted > 0 {
		return counted, true, nil
	}
	rule, peek, gone, err := c.howToCheck(ctx, vhost, &q, mode)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("checking queue %q of vhost %q: %w", name, vhost, err)
	case gone:
		return 0, false, nil
	case !peek:
		return c.countWithoutPeek(ctx, vhost, rule, q, mode)
	}
	if counted, known := q.messages(); counted > 0 || (mode == countStatistics && known) {
		return counted, true, nil
	}
	ready, gone, err := c.peekReady(ctx, vhost, name)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("looking for a message in queue %q of vhost %q: %w", name, vhost, err)
	case gone:
		return 0, false, nil
	}
	return ready, true, nil
}

// howToCheck tells whether rule lets a check peek at q, whose statistics
// count nothing. A classic queue is peeked at without learning the broker.
// On 3.x, where a limit that a policy sets decides, a quorum queue whose
// policy the answer lacks (a new queue's comes with its statistics) is
// read again until it has it (not for CountedMessages).
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

// countWithoutPeek counts q, which rule forbids peeking at: for a deletion
// countForDeletion's count; before a change, its leader's count where it
// can be trusted (leaderCount), else a count sampled after the check began
// (countFresh); otherwise what the statistics or the leader's totals count
// (rule.countOf). exists is false when the queue went meanwhile.
func (c *Client) countWithoutPeek(ctx context.Context, vhost string, rule checkRule, q queueJSON, mode checkMode) (_ int64, exists bool, err error) {
	switch mode {
	case countForDeletion:
		return c.countForDeletion(ctx, vhost, rule, q)
	case countHeld:
		// As fresh as the deletion's own check: a change refused here
		// changes nothing, where one refused at a deletion has begun.
		if n, trusted, gone, err := c.leaderCount(ctx, vhost, rule, q, false); err != nil || gone || trusted {
			return n, !gone, err
		}
		messages, gone, err := c.countFresh(ctx, vhost, rule, q)
		return messages, !gone, err
	case countStatistics:
	}
	messages, err := rule.countOf(vhost, q)
	return messages, true, err
}

// countForDeletion is the no-peek check of a queue about to be deleted,
// first read: it stops the messages that would reach it (stopArrivals),
// reads it again if that deleted a binding, and counts it (countStopped). A queue it does not find empty gets its
// bindings back, on a deadline of its own (restoreTimeout): a cancelled
// apply must not leave the queue unbound.
func (c *Client) countForDeletion(ctx context.Context, vhost string, rule checkRule, first queueJSON) (_ int64, exists bool, err error) {
	name := first.Name
	restore, stoppedAny, err := c.stopArrivals(ctx, vhost, name)
	if err != nil {
		return 0, false, err
	}
	// A read made before arrivals stopped does not count; one made when
	// none came any more (no binding left to delete) does.
	q := first
	if stoppedAny {
		q, err = c.readQueue(ctx, vhost, name)
	}
	var messages int64
	gone := isNotFound(err)
	if err == nil {
		messages, gone, err = c.countStopped(ctx, vhost, rule, q)
	}
	if !gone && (err != nil || messages > 0) {
		if restoreErr := restoreOnItsOwn(ctx, restore); restoreErr != nil {
			return 0, false, errors.Join(err, restoreErr)
		}
	}
	return messages, !gone, err
}

// countStopped counts q, which takes no more messages: what its statistics
// count, if anything; else its leader's count where it can be trusted
// (leaderCount); else a count sampled after q was read (countFresh).
func (c *Client) countStopped(ctx context.Context, vhost string, rule checkRule, q queueJSON) (_ int64, gone bool, err error) {
	if counted, err := rule.countOf(vhost, q); err == nil && counted > 0 {
		return counted, false, nil
	}
	if n, trusted, gone, err := c.leaderCount(ctx, vhost, rule, q, true); err != nil || gone || trusted {
		return n, gone, err
	}
	return c.countFresh(ctx, vhost, rule, q)
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

// stopArrivals makes queue stop taking messages before the no-peek check
// of its deletion, whose 0 holds only from then on: it deletes the bindings
// into it (not the default exchange's, which none can delete) and returns
// the function that declares them again, for a queue the check refuses.
// Apply has deleted them already, but for a queue it replaces: topology.Diff
// lets that queue's deletion drop them, and a message routed to it in the
// seconds the check waits would be lost with it. Meanwhile such messages
// go where their exchange sends what it cannot route (a set's exchanges:
// its parking lot).
func (c *Client) stopArrivals(ctx context.Context, vhost, queue string) (restore func(context.Context) error, stoppedAny bool, err error) {
	var bindings []rabbithole.BindingInfo
	err = c.viaRabbitHole(ctx, http.MethodGet, apiPath("queues", vhost, queue, "bindings"), func() (err error) {
		bindings, err = c.rabbit.ListQueueBindings(vhost, queue)
		return err
	})
	if err != nil && !isNotFound(err) {
		return nil, false, fmt.Errorf("listing the bindings into queue %q of vhost %q: %w", queue, vhost, err)
	}
	var stopped []rabbithole.BindingInfo
	restore = func(ctx context.Context) error { return c.declareBindingInfos(ctx, vhost, stopped) }
	for _, b := range bindings {
		if b.Source == "" {
			continue
		}
		into := topology.Binding{Source: b.Source, Destination: queue, DestinationType: topology.DestinationQueue}
		if err := c.deleteBindingByKeys(ctx, vhost, into, []string{b.PropertiesKey}); err != nil && !isGone(err) {
			return nil, false, errors.Join(fmt.Errorf("deleting the bindings into queue %q of vhost %q: %w", queue, vhost, err),
				restoreOnItsOwn(ctx, restore))
		}
		stopped = append(stopped, b)
	}
	return restore, len(stopped) > 0, nil
}

// restoreTimeout bounds the restoring of what a check removed: long enough
// for a few declarations, short enough for a user who pressed Ctrl-C.
const restoreTimeout = 15 * time.Second

// restoreOnItsOwn runs restore on a deadline of its own, whatever became of
// ctx: work that undoes a step must not end with the step's cancellation.
func restoreOnItsOwn(ctx context.Context, restore func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	return restore(ctx)
}

// declareBindingInfos declares bindings as the broker listed them, with
// their arguments.
func (c *Client) declareBindingInfos(ctx context.Context, vhost string, bindings []rabbithole.BindingInfo) error {
	var errs []error
	for _, b := range bindings {
		path := bindingPath(vhost, topology.Binding{Source: b.Source, Destination: b.Destination, DestinationType: topology.DestinationQueue})
		errs = append(errs, c.viaRabbitHole(ctx, http.MethodPost, path, func() error {
			return closeAnswer(c.rabbit.DeclareBinding(vhost, b))
		}))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("declaring again the bindings the check deleted: %w", err)
	}
	return nil
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
