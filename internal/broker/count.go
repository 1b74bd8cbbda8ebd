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
)

// The broker's counting, all of it: the client's exported counts, and the
// counter that makes them, a type of its own whose every request goes
// through brokerReads, which can change nothing. The deletion (deletion.go)
// calls it through count, handing it the arrivalsStopper that is its own.
// Beside it: counting by fresh statistics (count_fresh.go), asking the
// leader over AMQP (count_amqp.go), the exact count of a switch
// (count_exact.go); and the pure parts: a queue's shape (count_queue.go),
// what a check may do on a broker (count_rule.go), the leader's state
// (count_leader.go) and the AMQP connections (amqp.go).

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
	return withoutEmpty(c.counter.count(ctx, vhost, queues, countHeld, nil))
}

// withoutEmpty drops the queues that hold nothing from what count counted.
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
	return withoutEmpty(c.counter.count(ctx, vhost, queues, countStatistics, nil))
}

// CountedByStatistics is what the management statistics alone count in one
// queue of vhost (ready, unacknowledged, messages_dlx), with no peek;
// known is false while they count nothing at all. They lag by up to
// StatisticsLag and may read 0 for a queue that holds a message, so this
// decides nothing: it serves a test that waits for the statistics.
func (c *Client) CountedByStatistics(ctx context.Context, vhost, queue string) (messages int64, known bool, err error) {
	return c.counter.statistics(ctx, vhost, queue)
}

// brokerReads is all the counter may ask of the management API: reads,
// and the peek, whose basic.get puts back what it takes. It has no way to
// write, so a count changes nothing on the broker. *Client implements it.
type brokerReads interface {
	get(ctx context.Context, path string, query url.Values, out any) error
	peek(ctx context.Context, vhost, queue string) ([]peekedMessage, error)
	VHostExists(ctx context.Context, vhost string) (bool, error)
	VHostPolicies(ctx context.Context, vhost string) (VHostPolicies, bool, error)
	clusterName(ctx context.Context) (string, error)
}

// get is a GET of the management API, answered into out.
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.call(ctx, http.MethodGet, path, query, nil, out)
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

// peek looks at the head of queue and puts the message back (peekRequest):
// the one request of a count that is not a GET. rabbit-hole has no /get.
func (c *Client) peek(ctx context.Context, vhost, queue string) ([]peekedMessage, error) {
	var peeked []peekedMessage
	err := c.call(ctx, http.MethodPost, apiPath("queues", vhost, queue, "get"), nil, peekRequest, &peeked)
	return peeked, err
}

// counter counts the messages of queues. Its state is its own: what it
// learned of the broker, its AMQP connections, its pace, and when a binding
// into a queue last went.
type counter struct {
	api  brokerReads
	logf func(ctx context.Context, msg string, fields map[string]any)
	// management and proxy are the management API's URL and proxy, which
	// tell whether and where an AMQP endpoint is discovered.
	management string
	proxy      func(*http.Request) (*url.URL, error)
	// timing paces the checks that wait for statistics.
	timing checkTiming
	// learned is what the checks may do on this broker.
	learned learnedRule
	// amqp is how the counter asks a quorum queue's leader over AMQP.
	amqp amqpCounts
	// unbinds is when a binding into each destination last went
	// (vhostObject → time.Time): a queue's leader is asked for its count
	// only once arrivals have settled.
	unbinds sync.Map
	// declared are the log marks of the quorum queues the client created
	// (count_declared.go).
	declared declaredMarks
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
	// leaderAgain: the ready messages a quorum queue's leader answers over
	// AMQP, asked once more in a deletion's turn; an error where it cannot
	// be asked, and then the count before it stands.
	leaderAgain
)

// arrivalsStopper makes a queue about to be deleted take no more messages,
// and tells whether it had to (a binding went). A deletion hands it to its
// count, which calls it where its 0 must hold from then on: the count itself
// changes nothing on the broker, and the deletion restores what it removed.
type arrivalsStopper func(ctx context.Context) (stoppedAny bool, err error)

// count counts the messages each named queue of vhost holds, in mode, for
// every queue that exists (one that does not is absent from the map; a
// vhost that does not exist is ErrVHostNotFound). Each queue is read
// alone, so the check costs the same however many other queues the vhost
// holds. An uncounted queue counts as holding at least one message, and
// comes back as the error too (see HeldMessages). stop, for a deletion's
// count, is the deletion's: see arrivalsStopper.
func (k *counter) count(ctx context.Context, vhost string, queues []string, mode checkMode, stop arrivalsStopper) (map[string]int64, error) {
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
	ctx = context.WithValue(ctx, trustedByMark{}, &sync.Map{})
	checkCtx, stopChecks := context.WithCancelCause(ctx)
	defer stopChecks(nil)
	var stopping sync.Once
	errs := runUntilUnreachable(checkCtx, len(names), limit, func(ctx context.Context, i int) (err error) {
		counts[i], exists[i], err = k.queueHeld(ctx, vhost, names[i], mode, stop)
		if IsUncounted(err) {
			counts[i] = max(counts[i], 1)
		}
		if mode == countHeld && counts[i] > 0 && (err == nil || IsUncounted(err)) {
			stopping.Do(func() { time.AfterFunc(heldGrace, func() { stopChecks(errOthersHold) }) })
		}
		return err
	})
	if ctx.Err() == nil && errors.Is(context.Cause(checkCtx), errOthersHold) {
		uncountStopped(vhost, names, errs, counts, exists)
	}
	if mode != countStatistics {
		k.recountTouchedSince(ctx, vhost, names, mode, stop, counts, exists, errs)
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
		if vhostErr := k.vhostFound(ctx, vhost); vhostErr != nil {
			return nil, vhostErr
		}
	}
	return held, err
}

// uncountStopped makes each queue whose check errOthersHold stopped
// uncounted, never absent: absent reads as holding nothing.
func uncountStopped(vhost string, names []string, errs []error, counts []int64, exists []bool) {
	for i, err := range errs {
		if errors.Is(err, errOthersHold) || errors.Is(err, context.Canceled) {
			errs[i], counts[i], exists[i] = &UncountedError{VHost: vhost, Queue: names[i],
				Reason: "its check was stopped once another queue was found holding messages"}, 1, true
		}
	}
}

// vhostFound is nil when vhost exists: a queue found absent is then gone,
// not in a missing vhost.
func (k *counter) vhostFound(ctx context.Context, vhost string) error {
	switch found, err := k.api.VHostExists(ctx, vhost); {
	case err != nil:
		return err
	case !found:
		return fmt.Errorf("reading queues: %w: %q", ErrVHostNotFound, vhost)
	}
	return nil
}

// heldGrace is how long, once a check before a change found a queue
// holding messages, the checks of the other queues may go on: enough for
// those that need no fresh statistics, which then name their queues too.
const heldGrace = 2 * time.Second

// errOthersHold stops the checks that a refusal no longer needs.
var errOthersHold = errors.New("another queue holds messages")

// statistics reads the message counts of one queue by its own path, which
// the broker answers from that queue alone however many the vhost holds;
// not through rabbit-hole, whose DetailedQueueInfo has no messages_dlx
// either. The broker answers a plain 404 alike for a missing queue and a
// missing vhost.
func (k *counter) statistics(ctx context.Context, vhost, name string) (messages int64, known bool, err error) {
	var q queueJSON
	if err := k.api.get(ctx, apiPath("queues", vhost, name), depthColumns, &q); err != nil {
		return 0, false, err
	}
	messages, known = q.messages()
	return messages, known, nil
}

// learnedVersion is the broker's version as the counter's first check that
// needed it learned it; known is false before.
func (k *counter) learnedVersion() (version string, known bool) {
	k.learned.mu.Lock()
	defer k.learned.mu.Unlock()
	if k.learned.rule == nil {
		return "", false
	}
	return k.learned.rule.version, true
}

// checksWaitForArrivals tells whether a deletion's check of a quorum queue
// on this broker, as learned, waits arrivalsSettle after its unbinding (no
// peek there): a wait that loads no broker, and that a bound on the checks
// would only serialize.
func (k *counter) checksWaitForArrivals() bool {
	k.learned.mu.Lock()
	defer k.learned.mu.Unlock()
	return k.learned.rule != nil && k.learned.rule.quorum == quorumNoPeek
}

// unbound notes that a binding into destination may have gone just now
// (awaitSettledArrivals).
func (k *counter) unbound(vhost, destination string) {
	k.unbinds.Store(vhostObject{vhost, destination}, time.Now())
}

// readQueue reads one queue by its own path (a plain 404 for a missing
// queue or vhost alike).
func (k *counter) readQueue(ctx context.Context, vhost, name string) (queueJSON, error) {
	var q queueJSON
	err := k.api.get(ctx, apiPath("queues", vhost, name), checkColumns, &q)
	if q.Name == "" {
		q.Name = name
	}
	return q, err
}

// queueHeld counts the messages one queue holds. Where a peek is no
// delivery (checkRule), the peek counts the ready messages exactly, and
// what it cannot see (unacknowledged, waiting for dead-lettering) needs
// unseenByThePeek; elsewhere countWithoutPeek. Statistics alone, which lag,
// decide only for CountedMessages: before a change or a deletion a count
// they alone make is a staleCount. exists is false when the queue (or its
// vhost) answered 404.
func (k *counter) queueHeld(ctx context.Context, vhost, name string, mode checkMode, stop arrivalsStopper) (held int64, exists bool, err error) {
	if mode == leaderAgain {
		answer, err := k.askOverAMQP(ctx, vhost, name)
		return answer.ready, err == nil, err
	}
	q, err := k.readQueue(ctx, vhost, name)
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
	rule, peek, gone, err := k.howToCheck(ctx, vhost, &q, mode)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("checking queue %q of vhost %q: %w", name, vhost, err)
	case gone:
		return 0, false, nil
	case !peek:
		return k.countWithoutPeek(ctx, vhost, rule, q, mode, stop)
	case mode == countStatistics && known:
		return counted, true, nil
	}
	ready, gone, err := k.peekReady(ctx, vhost, name)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("looking for a message in queue %q of vhost %q: %w", name, vhost, err)
	case gone:
		return 0, false, nil
	case ready > 0 || mode == countStatistics:
		return ready, true, nil
	}
	held, gone, err = k.unseenByThePeek(ctx, vhost, rule, q, mode, stop)
	return held, !gone, err
}

// unseenByThePeek counts queue q, whose peek found no ready message, for a
// change or a deletion: messages delivered and unacknowledged, and those
// waiting for an at-least-once dead-letter confirm, which only the
// statistics count. Its 0 is exact when no consumer holds the queue (the
// leader's answer over AMQP says so exactly, else the statistics) and the
// statistics count none of those; otherwise only statistics sampled after
// the check began, once arrivals stopped, tell (countFresh).
func (k *counter) unseenByThePeek(ctx context.Context, vhost string, rule checkRule, q queueJSON, mode checkMode, stop arrivalsStopper) (_ int64, gone bool, err error) {
	consumers := valueOf(q.Consumers)
	ask := k.askOverAMQP
	if q.Type == queueTypeClassic && mode != countForDeletion {
		// Its deletion keeps the broker's if-unused guard, which counts its
		// consumers exactly: no dial or proof is waited for before a change.
		ask = k.askOverAMQPIfOpen
	}
	if answer, err := ask(ctx, vhost, q.Name); err == nil {
		if answer.ready > 0 {
			return answer.ready, false, nil
		}
		consumers = answer.consumers
	}
	switch {
	case q.unseen() > 0:
		// Not worth waiting for fresh statistics: the change is refused either way.
		return q.unseen(), false, rule.staleCount(vhost, q.Name, q.unseen(), q.describeUnseen())
	case consumers == 0:
		return 0, false, nil
	}
	if mode == countForDeletion {
		if q, gone, err = k.countFromStoppedArrivals(ctx, vhost, q, stop); err != nil || gone {
			return 0, gone, err
		}
	}
	return k.countFresh(ctx, vhost, rule, q)
}

// countFromStoppedArrivals runs a deletion's stop, and reads q again if it removed
// anything: a read made before arrivals stopped does not count.
func (k *counter) countFromStoppedArrivals(ctx context.Context, vhost string, q queueJSON, stop arrivalsStopper) (_ queueJSON, gone bool, err error) {
	if stop == nil {
		return q, false, nil
	}
	stoppedAny, err := stop(ctx)
	if err != nil || !stoppedAny {
		return q, false, err
	}
	next, err := k.readQueue(ctx, vhost, q.Name)
	if isNotFound(err) {
		return q, true, nil
	}
	return next, false, err
}

// howToCheck tells whether rule lets a check peek at q. A classic queue is
// peeked at without learning the broker. On 3.x, where a limit that a
// policy sets decides, a quorum queue whose policy the answer lacks (a new
// queue's comes with its statistics) is read again until it has it (not
// for CountedMessages).
func (k *counter) howToCheck(ctx context.Context, vhost string, q *queueJSON, mode checkMode) (rule checkRule, peek, gone bool, err error) {
	if q.Type == queueTypeClassic {
		return checkRule{}, true, false, nil
	}
	if rule, err = k.rule(ctx); err != nil {
		return rule, false, false, err
	}
	if rule.quorum == quorumPeekUnlessLimited && mode != countStatistics && !hasPolicy(*q) {
		if *q, gone, err = k.awaitFirstStatistics(ctx, vhost, *q, hasPolicy); err != nil || gone {
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
func (k *counter) countWithoutPeek(ctx context.Context, vhost string, rule checkRule, q queueJSON, mode checkMode, stop arrivalsStopper) (_ int64, exists bool, err error) {
	if mode == countStatistics {
		messages, err := rule.countOf(vhost, q)
		return messages, true, err
	}
	deletion := mode == countForDeletion
	if deletion {
		var gone bool
		if q, gone, err = k.countFromStoppedArrivals(ctx, vhost, q, stop); err != nil || gone {
			return 0, false, err
		}
	}
	n, trusted, gone, err := k.leaderCount(ctx, vhost, rule, q, deletion)
	switch {
	case err != nil || gone:
		return 0, !gone, err
	case trusted && n == 0 && q.unseen() > 0:
		return 1, true, rule.staleCount(vhost, q.Name, q.unseen(), q.describeUnseen())
	case trusted:
		return n, true, nil
	}
	messages, gone, err := k.countFresh(ctx, vhost, rule, q)
	return messages, !gone, err
}

// peekReady looks at the head of a queue and puts the message back, and
// returns how many ready messages the queue held at that instant: 0 when it
// had none, else the peeked one and the message_count the broker reported
// with it. gone tells that the queue does not exist. It is exact for ready
// messages; it cannot see those delivered and unacknowledged or, for
// at-least-once dead-lettering, waiting in messages_dlx.
func (k *counter) peekReady(ctx context.Context, vhost, name string) (ready int64, gone bool, err error) {
	peeked, err := k.api.peek(ctx, vhost, name)
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

// rule learns the broker's checkRule once: its version and node
// (GET /api/overview) and, for 4.3 and later, its feature flags.
func (k *counter) rule(ctx context.Context) (checkRule, error) {
	k.learned.mu.Lock()
	defer k.learned.mu.Unlock()
	if k.learned.rule != nil {
		return *k.learned.rule, nil
	}
	var overview struct {
		Version string `json:"rabbitmq_version"`
		Node    string `json:"node"`
	}
	if err := k.api.get(ctx, apiPath("overview"), overviewColumns, &overview); err != nil {
		return checkRule{}, fmt.Errorf("reading the broker's version: %w", err)
	}
	var enabled map[string]bool
	if major, minor, _ := parseVersion(overview.Version); major == 4 && minor >= 3 {
		enabled = k.enabledFlags(ctx)
	}
	if ctx.Err() != nil {
		return checkRule{}, context.Cause(ctx)
	}
	rule := ruleFor(overview.Version, overview.Node, enabled)
	k.learned.rule = &rule
	return rule, nil
}

// enabledFlags reads the broker's enabled feature flags; nil when it may
// not (3.10–3.12 show them to administrators only) or could not.
func (k *counter) enabledFlags(ctx context.Context) map[string]bool {
	var flags []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	if err := k.api.get(ctx, apiPath("feature-flags"), nil, &flags); err != nil {
		return nil
	}
	enabled := map[string]bool{}
	for _, flag := range flags {
		enabled[flag.Name] = flag.State == "enabled"
	}
	return enabled
}

// leaderCount is the count of ready messages that quorum queue q's leader
// answers to a passive declaration over AMQP: no delivery, exact at that
// instant. trusted tells whether it may be believed: a count above 0
// always; a 0 only where it cannot be the 0 RabbitMQ answers for a leader
// that did not answer (zeroTrusted), and, where the effective strategy may
// be at-least-once, beside statistics that count no messages_dlx or a log
// that no message touched since the queue's declaration. settle
// waits arrivalsSettle after the last unbinding of q, as a deletion must.
// DESIGN.md, "Counting without a delivery".
func (k *counter) leaderCount(ctx context.Context, vhost string, rule checkRule, q queueJSON, settle bool) (count int64, trusted, gone bool, err error) {
	if q.Type != queueTypeQuorum {
		return 0, false, false, nil
	}
	if _, err := k.amqpEndpoint(ctx); err != nil {
		k.logAMQP(ctx, err)
		return 0, false, false, nil // counted by statistics instead
	}
	// A log still at its declaration's mark after the count saw nothing
	// come and go while the check ran. Where the statistics already count
	// messages_dlx the mark could only agree with them: its reads are spared.
	byMark := false
	if k.mayWaitForDeadLettering(ctx, vhost, q) {
		if q.MessagesDLX == nil {
			byMark = k.untouchedSinceDeclared(ctx, vhost, q.Name)
		}
		if !byMark {
			var none bool
			if q, none, gone, err = k.noDeadLetterWaiting(ctx, vhost, q); !none || err != nil || gone {
				return 0, false, gone, err
			}
		}
	}
	if settle {
		if err := k.awaitSettledArrivals(ctx, vhost, q.Name); err != nil {
			return 0, false, false, err
		}
	}
	answer, err := k.declarePassive(ctx, vhost, q.Name)
	// A slow 0 may be the broker's own timeout, but on a busy machine every
	// round trip is slow: a quicker one may follow.
	for try := 1; err == nil && answer.ready == 0 && answer.took >= leaderQueryTimeout && try < slowZeroTries; try++ {
		answer, err = k.declarePassive(ctx, vhost, q.Name)
	}
	// 3.x answers "state" and "online" once, from the cluster's membership:
	// they cannot tell that the leader answered.
	major, _, _ := parseVersion(rule.version)
	switch {
	case ctx.Err() != nil:
		return 0, false, false, context.Cause(ctx)
	case err != nil:
		k.logAMQP(ctx, err)
		return 0, false, false, nil // counted by statistics instead
	case answer.ready > 0:
		return answer.ready, true, false, nil
	case major < 4 || !zeroTrusted(answer, servingLeader):
		k.logUntrusted(ctx, q.Name, answer, leaderState{})
		return 0, false, false, nil // no need to look
	case byMark && !k.untouchedSinceDeclared(ctx, vhost, q.Name):
		return 0, false, false, nil // what came may wait for a confirm unseen
	}
	if byMark {
		defer func() {
			if trusted {
				noteTrustedByMark(ctx, q.Name)
			}
		}()
	}
	return k.zeroCorroborated(ctx, vhost, q.Name, answer)
}

// noDeadLetterWaiting tells whether q's statistics show messages_dlx at 0,
// which a 0 of its leader needs where its messages may wait for an
// at-least-once dead-letter confirm. messages_dlx comes with the
// statistics; a broker that collects none (its totals) never shows it.
func (k *counter) noDeadLetterWaiting(ctx context.Context, vhost string, q queueJSON) (_ queueJSON, none, gone bool, err error) {
	if q.source() != fromTotals {
		if q, gone, err = k.awaitFirstStatistics(ctx, vhost, q, hasDLXCount); err != nil || gone {
			return q, false, gone, err
		}
	}
	dlx := q.MessagesDLX
	return q, dlx != nil && *dlx == 0, false, nil
}

// zeroCorroborated trusts a leader's answer of 0 for queue only if the
// leader it asked still serves right after (zeroTrusted).
func (k *counter) zeroCorroborated(ctx context.Context, vhost, queue string, answer leaderAnswer) (count int64, trusted, gone bool, err error) {
	after, gone, err := k.readLeaderState(ctx, vhost, queue)
	if err != nil || gone {
		return 0, false, gone, err
	}
	if !zeroTrusted(answer, after) {
		k.logUntrusted(ctx, queue, answer, after)
		return 0, false, false, nil
	}
	return 0, true, false, nil
}

// logUntrusted says why a leader's 0 was not believed: the check then
// waits for fresh statistics, which a user may want to know.
func (k *counter) logUntrusted(ctx context.Context, queue string, answer leaderAnswer, after leaderState) {
	if k.logf != nil {
		k.logf(ctx, "a leader's count of 0 not trusted; counting by fresh statistics", map[string]any{
			"queue": queue, "took_ms": answer.took.Milliseconds(), "consumers": answer.consumers,
			"state": after.state, "node": after.node, "online": after.online,
		})
	}
}

// logAMQP says why a leader's count was not asked or not believed: the
// check then counts by the statistics, which a user may want to know.
func (k *counter) logAMQP(ctx context.Context, err error) {
	var unproven *unprovenAMQPError
	switch {
	case k.logf == nil || errors.Is(err, errNoAMQP):
	case errors.As(err, &unproven):
		k.logf(ctx, "counts over AMQP not believed: the connection is not proven to reach the management API's cluster; "+
			"counting by the statistics", map[string]any{"amqp": unproven.Endpoint, "vhost": unproven.VHost, "reason": unproven.Reason})
	default:
		k.logf(ctx, "counting over AMQP failed; counting by the statistics", map[string]any{"error": err.Error()})
	}
}

// awaitSettledArrivals waits until arrivalsSettle has passed since a
// binding into queue last went.
func (k *counter) awaitSettledArrivals(ctx context.Context, vhost, queue string) error {
	stored, _ := k.unbinds.Load(vhostObject{vhost, queue})
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

// readLeaderState reads quorum queue name's leaderState. The broker's
// answer has "state" and "online" twice: first as the members answer
// (rabbit_quorum_queue:i/2: state by the leader's registration, online by
// where members are registered), then as the cluster's membership sees them
// (format/2: running nodes). Only the first are the members', so they are
// read by hand: a JSON decoder keeps the last.
func (k *counter) readLeaderState(ctx context.Context, vhost, name string) (_ leaderState, gone bool, err error) {
	var raw json.RawMessage
	err = k.api.get(ctx, apiPath("queues", vhost, name), leaderStateQuery, &raw)
	switch {
	case isNotFound(err):
		return leaderState{}, true, nil
	case err != nil:
		return leaderState{}, false, fmt.Errorf("reading the leader of queue %q of vhost %q: %w", name, vhost, err)
	}
	s, err := parseLeaderState(raw)
	if err != nil {
		return leaderState{}, false, fmt.Errorf("decoding the leader of queue %q of vhost %q: %w", name, vhost, err)
	}
	return s, false, nil
}

// mayWaitForDeadLettering tells whether q's messages may wait for an
// at-least-once dead-letter confirm: by its argument, else by its effective
// policy, else, before the statistics bring that, by the vhost's policies
// (read once per client), so that a new queue's count need not wait for its
// first statistics.
func (k *counter) mayWaitForDeadLettering(ctx context.Context, vhost string, q queueJSON) bool {
	if !q.mayDeadLetterAtLeastOnce() {
		return false
	}
	if _, byArgument := q.Arguments[argDeadLetterStrategy]; byArgument || len(q.EffectivePolicy) > 0 {
		return true
	}
	policies, ok, err := k.api.VHostPolicies(ctx, vhost)
	if err != nil || !ok {
		return true
	}
	strategy, known := strategyByPolicies(policies.Policies, q.Name)
	return !known || strategy == atLeastOnce
}
