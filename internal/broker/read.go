package broker

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const (
	// pageSize is the largest page the management API serves. A set's name
	// pattern matches at most 100 queues and 103 exchanges (two-digit
	// levels), so one page always holds all of them.
	pageSize = 500
	// readConcurrency bounds the binding listings of ReadSet in flight.
	readConcurrency = 4
)

// Object properties that the layout fixes (durable, not auto-delete, not
// exclusive, not internal) are not arguments, but an object of the set that
// differs in one of them is drift all the same: the object must be replaced.
// ReadSet reports such a difference under these names in the Other map of
// the object's arguments, as JSON text ("false", "true"), so that Diff shows
// it and replaces the object; Apply reads them back the same way.
const (
	propertyDurable    = "durable"
	propertyAutoDelete = "auto_delete"
	propertyExclusive  = "exclusive"
	propertyInternal   = "internal"
)

// exchangePage is one page of a filtered exchange listing: rabbit-hole has a
// paged listing for queues, PagedQueueInfo, but none for exchanges.
type exchangePage struct {
	FilteredCount int                       `json:"filtered_count"`
	Items         []rabbithole.ExchangeInfo `json:"items"`
}

// queueDepthJSON is a queue's message counts, from the management statistics.
// Not rabbithole.QueueInfo, which lacks messages_dlx. A count the broker
// leaves out is nil: a queue too new for its first statistics, or any queue
// of a broker that collects no management metrics (RabbitMQ 4.x with the
// deprecated feature management_metrics_collection not permitted). Such a
// 4.x broker still answers enable_queue_totals=true with messages,
// messages_ready and messages_unacknowledged from the queue's own metrics
// (refreshed every 5 s, on the node that leads a quorum queue; 0 on the
// others), where messages also counts those waiting in messages_dlx.
type queueDepthJSON struct {
	Name                   string `json:"name"`
	Messages               *int64 `json:"messages"`
	MessagesReady          *int64 `json:"messages_ready"`
	MessagesUnacknowledged *int64 `json:"messages_unacknowledged"`
	MessagesDLX            *int64 `json:"messages_dlx"` // quorum queues: waiting for at-least-once dead-lettering
}

// messages is every message the statistics count in the queue: ready,
// unacknowledged and waiting in messages_dlx, or the total where the broker
// gives only that and it is larger. known is false when the broker gave no
// count at all.
func (q queueDepthJSON) messages() (messages int64, known bool) {
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

// filteredQuery is the query of a listing of the objects whose name matches
// pattern, all on one page.
func filteredQuery(pattern string, extra url.Values) url.Values {
	query := url.Values{
		"name":      {pattern},
		"use_regex": {"true"},
		"page":      {"1"},
		"page_size": {strconv.Itoa(pageSize)},
	}
	for k, v := range extra {
		query[k] = v
	}
	return query
}

// exactMatches finishes a filtered listing of kind ("queues" or "exchanges")
// in vhost: the vhost missing is ErrVHostNotFound, more matches than a page
// an error, and since the management API matches the pattern ignoring case
// ("delay" also finds "DELAY.ingest", another set), the items are filtered
// again here, exactly.
func exactMatches[T any](kind, vhost, pattern string, listErr error, filtered int, items []T, name func(T) string) ([]T, error) {
	if listErr != nil {
		if isNotFound(listErr) {
			return nil, fmt.Errorf("listing %s: %w: %q", kind, ErrVHostNotFound, vhost)
		}
		return nil, fmt.Errorf("listing %s in vhost %q: %w", kind, vhost, listErr)
	}
	if filtered > len(items) {
		return nil, fmt.Errorf("listing %s in vhost %q: %d match %s, more than the %d one page holds",
			kind, vhost, filtered, pattern, pageSize)
	}
	exact, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("listing %s: invalid name pattern %q: %w", kind, pattern, err)
	}
	return slices.DeleteFunc(items, func(item T) bool { return !exact.MatchString(name(item)) }), nil
}

// listExchanges reads the exchanges of vhost whose name matches pattern, in
// one request of its own: rabbit-hole cannot filter exchange listings.
func (c *Client) listExchanges(ctx context.Context, vhost, pattern string, extra url.Values) ([]rabbithole.ExchangeInfo, error) {
	var result exchangePage
	err := c.call(ctx, http.MethodGet, apiPath("exchanges", vhost), filteredQuery(pattern, extra), nil, &result)
	return exactMatches("exchanges", vhost, pattern, err, result.FilteredCount, result.Items,
		func(e rabbithole.ExchangeInfo) string { return e.Name })
}

// listQueues reads the queues of vhost whose name matches pattern, in one
// request, through rabbit-hole.
func (c *Client) listQueues(ctx context.Context, vhost, pattern string, extra url.Values) ([]rabbithole.QueueInfo, error) {
	var result rabbithole.PagedQueueInfo
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("queues", vhost), func() (err error) {
		result, err = c.rabbit.PagedListQueuesWithParametersIn(vhost, filteredQuery(pattern, extra))
		return err
	})
	return exactMatches("queues", vhost, pattern, err, result.FilteredCount, result.Items,
		func(q rabbithole.QueueInfo) string { return q.Name })
}

// depthColumns are the fields of queueDepthJSON: the broker sends only these.
// enable_queue_totals asks a broker without management metrics (4.x) for the
// totals it still has; one with them, or 3.10, answers as without it.
var depthColumns = url.Values{
	"columns":             {"name,messages,messages_ready,messages_unacknowledged,messages_dlx"},
	"enable_queue_totals": {"true"},
}

// readQueueDepth reads the message counts of one queue by its own path,
// which the broker answers from that queue alone however many the vhost
// holds; not through rabbit-hole, whose DetailedQueueInfo has no
// messages_dlx either. The broker answers a plain 404 alike for a missing
// queue and a missing vhost.
func (c *Client) readQueueDepth(ctx context.Context, vhost, name string) (messages int64, known bool, err error) {
	var q queueDepthJSON
	if err := c.call(ctx, http.MethodGet, apiPath("queues", vhost, name), depthColumns, nil, &q); err != nil {
		return 0, false, err
	}
	messages, known = q.messages()
	return messages, known, nil
}

// ReadSet reads the exchanges and queues of the set called name in vhost,
// and the bindings whose source is one of its exchanges (the routes
// included), sorted by name. It lists only the set's own objects, with the
// management API's name filter, so a complete set of N levels costs N + 5
// requests however many other objects the vhost holds: the exchange and
// queue listings, then one binding listing per exchange, four at a time.
//
// A set with no object on the broker is an empty Topology; a vhost that does
// not exist is ErrVHostNotFound. The queue type is the one the broker
// reports, so a classic queue declared without x-queue-type reads as
// classic, like the planned one that has it. Bindings with arguments read as
// if they had none (topic and fanout exchanges ignore them).
//
// ReadSet reads a set of the default layout; ReadSetOf reads one of any.
func (c *Client) ReadSet(ctx context.Context, vhost, name string) (topology.Topology, error) {
	return c.ReadSetOf(ctx, vhost, name, topology.LayoutDefault)
}

// ReadSetOf is ReadSet of a set of the given layout: the objects that
// layout.ObjectNamePattern(name) matches. The binding listings by source
// return the bindings to exchanges with those to queues, so a library's
// exchange-to-exchange bindings (level to level, level 0 to delivery,
// delivery to a route's exchange) read like any other. A library's set of
// 28 levels has 29 exchanges: its read costs 31 requests (N + 3).
func (c *Client) ReadSetOf(ctx context.Context, vhost, name string, layout topology.Layout) (_ topology.Topology, err error) {
	ctx, report := c.observe(ctx, "read set", map[string]any{"vhost": vhost, "set": name, "layout": string(layout.OrDefault())})
	defer func() { report(err) }()
	return c.readMatching(ctx, vhost, layout.ObjectNamePattern(name))
}

// ReadSetOfAnyLayout is ReadSet of the objects of the set name in every
// layout at once (topology.AnyLayoutObjectNamePattern), for an import that
// does not know the set's layout yet: topology.Infer tells it from them.
// It costs as much as a read of the layouts it finds.
func (c *Client) ReadSetOfAnyLayout(ctx context.Context, vhost, name string) (_ topology.Topology, err error) {
	ctx, report := c.observe(ctx, "read set", map[string]any{"vhost": vhost, "set": name, "layout": "any"})
	defer func() { report(err) }()
	return c.readMatching(ctx, vhost, topology.AnyLayoutObjectNamePattern(name))
}

// readMatching reads the exchanges and queues of vhost whose names match
// pattern and the bindings whose source is one of those exchanges.
func (c *Client) readMatching(ctx context.Context, vhost, pattern string) (topology.Topology, error) {
	var (
		exchanges          []rabbithole.ExchangeInfo
		queues             []rabbithole.QueueInfo
		exchangesErr, qErr error
		wg                 sync.WaitGroup
	)
	wg.Go(func() { exchanges, exchangesErr = c.listExchanges(ctx, vhost, pattern, noStatistics) })
	wg.Go(func() { queues, qErr = c.listQueues(ctx, vhost, pattern, noStatistics) })
	wg.Wait()
	if exchangesErr != nil {
		return topology.Topology{}, exchangesErr
	}
	if qErr != nil {
		return topology.Topology{}, qErr
	}

	bindings := make([][]rabbithole.BindingInfo, len(exchanges))
	err := runFailFast(ctx, len(exchanges), readConcurrency, func(ctx context.Context, i int) (err error) {
		bindings[i], err = c.sourceBindings(ctx, vhost, exchanges[i].Name)
		return err
	})
	if err != nil {
		return topology.Topology{}, err
	}

	return c.assemble(vhost, exchanges, queues, bindings), nil
}

// assemble is the topology of what a read found, sorted by name; it
// remembers the bindings' properties keys for their deletion.
func (c *Client) assemble(vhost string, exchanges []rabbithole.ExchangeInfo, queues []rabbithole.QueueInfo,
	bindings [][]rabbithole.BindingInfo,
) topology.Topology {
	t := topology.Topology{VHost: vhost}
	for _, e := range exchanges {
		t.Exchanges = append(t.Exchanges, exchangeFromInfo(e))
	}
	for _, q := range queues {
		t.Queues = append(t.Queues, queueFromInfo(q))
		c.placements.remember(vhost, q)
	}
	for _, list := range bindings {
		for _, b := range list {
			if b.Source == "" {
				continue // the default exchange's implicit bindings are no one's
			}
			binding := topology.Binding{
				Source: b.Source, Destination: b.Destination,
				DestinationType: topology.DestinationType(b.DestinationType), RoutingKey: b.RoutingKey,
			}
			c.bindingKeys.remember(vhost, binding, b.PropertiesKey)
			t.Bindings = append(t.Bindings, binding)
		}
	}
	slices.SortFunc(t.Exchanges, func(a, b topology.Exchange) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(t.Queues, func(a, b topology.Queue) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(t.Bindings, compareBindings)
	return t
}

func compareBindings(a, b topology.Binding) int {
	return cmp.Or(
		strings.Compare(a.Source, b.Source),
		strings.Compare(string(a.DestinationType), string(b.DestinationType)),
		strings.Compare(a.Destination, b.Destination),
		strings.Compare(a.RoutingKey, b.RoutingKey),
	)
}

// Arguments arrive decoded into any by rabbit-hole's types: numbers as
// float64, exact for every integer argument the layout uses (the largest TTL
// the broker accepts, 315,360,000,000, is far below 2^53); a foreign integer
// argument above 2^53 would show rounded in Other.

func exchangeFromInfo(e rabbithole.ExchangeInfo) topology.Exchange {
	x := topology.Exchange{Name: e.Name, Type: e.Type}
	other := map[string]string{}
	for name, value := range e.Arguments {
		if name == topology.ArgAlternateExchange {
			if s, ok := nonEmptyString(value); ok {
				x.Arguments.AlternateExchange = s
				continue
			}
		}
		other[name] = argumentJSON(value)
	}
	addProperty(other, propertyDurable, e.Durable, true)
	addProperty(other, propertyAutoDelete, bool(e.AutoDelete), false)
	addProperty(other, propertyInternal, e.Internal, false)
	if len(other) > 0 {
		x.Arguments.Other = other
	}
	return x
}

func queueFromInfo(q rabbithole.QueueInfo) topology.Queue {
	queue := topology.Queue{Name: q.Name}
	args := &queue.Arguments
	other := map[string]string{}
	for name, value := range q.Arguments {
		var typed *string
		switch name {
		case topology.ArgMessageTTL:
			// A TTL the typed field cannot hold (absent is 0) stays visible in Other.
			if ttl, ok := value.(float64); ok && ttl != 0 && ttl == math.Trunc(ttl) && math.Abs(ttl) <= 1<<53 {
				args.MessageTTL = int64(ttl)
				continue
			}
		case topology.ArgQueueType:
			continue // the broker's type field says it, below, even when the argument is absent
		case topology.ArgDeadLetterExchange:
			typed = &args.DeadLetterExchange
		case topology.ArgDeadLetterStrategy:
			typed = (*string)(&args.DeadLetterStrategy)
		case topology.ArgOverflow:
			typed = &args.Overflow
		case topology.ArgLeaderLocator:
			typed = (*string)(&args.LeaderLocator)
		case topology.ArgQuorumInitialGroupSize:
			if size, ok := groupSize(value); ok {
				args.QuorumInitialGroupSize = size
				continue
			}
		}
		if typed != nil {
			// "" would read as absent, so it stays in Other: an empty
			// x-dead-letter-exchange dead-letters to the default exchange.
			if s, ok := nonEmptyString(value); ok {
				*typed = s
				continue
			}
		}
		other[name] = argumentJSON(value)
	}
	args.QueueType = topology.QueueType(q.Type)
	if q.Type == "" {
		if s, ok := nonEmptyString(q.Arguments[topology.ArgQueueType]); ok {
			args.QueueType = topology.QueueType(s)
		}
	}
	addProperty(other, propertyDurable, q.Durable, true)
	addProperty(other, propertyAutoDelete, bool(q.AutoDelete), false)
	addProperty(other, propertyExclusive, q.Exclusive, false)
	if len(other) > 0 {
		args.Other = other
	}
	return queue
}

// addProperty records a property that differs from the layout's value.
func addProperty(other map[string]string, name string, actual, layout bool) {
	if actual != layout {
		other[name] = strconv.FormatBool(actual)
	}
}

func nonEmptyString(value any) (string, bool) {
	s, ok := value.(string)
	return s, ok && s != ""
}

// argumentJSON writes a decoded argument back as compact JSON, as Apply
// declares it again.
func argumentJSON(value any) string {
	var b bytes.Buffer
	encoder := json.NewEncoder(&b)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(value); err != nil {
		return fmt.Sprint(value) // unreachable: it came from JSON
	}
	return strings.TrimSuffix(b.String(), "\n")
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

// VHostExists tells whether vhost exists on the broker.
func (c *Client) VHostExists(ctx context.Context, vhost string) (bool, error) {
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("vhosts", vhost), func() error {
		_, err := c.rabbit.GetVhost(vhost)
		return err
	})
	var authErr *AuthError
	if errors.As(err, &authErr) && strings.Contains(authErr.Reason, notAdministrator) {
		// RabbitMQ 3.10 shows a vhost by name to administrators only; a
		// system exchange, which every vhost has and none can delete,
		// shows to any user with access to the vhost.
		err = c.call(ctx, http.MethodGet, apiPath("exchanges", vhost, "amq.direct"), nil, nil, nil)
	}
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("reading vhost %q: %w", vhost, err)
}

// notAdministrator is the reason RabbitMQ gives a user without the
// administrator tag for a 401 to GET /api/vhosts/{vhost}.
const notAdministrator = "Not administrator user"

// sourceBindings lists the bindings whose source is the exchange name.
func (c *Client) sourceBindings(ctx context.Context, vhost, name string) ([]rabbithole.BindingInfo, error) {
	var bindings []rabbithole.BindingInfo
	err := c.viaRabbitHole(ctx, http.MethodGet, apiPath("exchanges", vhost, name, "bindings", "source"), func() (err error) {
		bindings, err = c.rabbit.ListExchangeBindingsWithSource(vhost, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the bindings of exchange %q in vhost %q: %w", name, vhost, err)
	}
	return bindings, nil
}

// runFailFast calls fn for 0 … n−1, at most limit at a time, and returns
// the first error, cancelling the calls still running or waiting: a read
// that has failed need not finish.
func runFailFast(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		first error
		once  sync.Once
	)
	runLimited(ctx, n, limit, func(ctx context.Context, i int) error {
		err := fn(ctx, i)
		if err != nil {
			once.Do(func() {
				first = err
				cancel()
			})
		}
		return err
	})
	return first
}

// runLimited calls fn for 0 … n−1, at most limit at a time, and returns
// their errors by index.
func runLimited(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) []error {
	errs := make([]error, n)
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = fn(ctx, i)
		})
	}
	wg.Wait()
	return errs
}
