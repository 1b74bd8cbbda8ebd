package broker

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

const (
	// pageSize is the largest page the management API serves. A set's name
	// pattern matches at most 100 queues and 103 exchanges (two-digit
	// levels), so one page always holds all of them.
	pageSize = 500
	// readConcurrency bounds the binding listings of ReadSet in flight.
	readConcurrency = 4
	// maxPatternLength keeps a QueueMessages listing's URL well under the
	// 8,000 bytes the management API's HTTP server accepts in a request line.
	maxPatternLength = 2000
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

// Argument names the typed fields hold.
const (
	argAlternateExchange  = "alternate-exchange"
	argMessageTTL         = "x-message-ttl"
	argDeadLetterExchange = "x-dead-letter-exchange"
	argQueueType          = "x-queue-type"
	argDeadLetterStrategy = "x-dead-letter-strategy"
	argOverflow           = "x-overflow"
)

// page is one page of a filtered listing.
type page[T any] struct {
	FilteredCount int `json:"filtered_count"`
	Items         []T `json:"items"`
}

type exchangeJSON struct {
	Name       string                     `json:"name"`
	Type       string                     `json:"type"`
	Durable    json.RawMessage            `json:"durable"`
	AutoDelete json.RawMessage            `json:"auto_delete"`
	Internal   json.RawMessage            `json:"internal"`
	Arguments  map[string]json.RawMessage `json:"arguments"`
}

type queueJSON struct {
	Name       string                     `json:"name"`
	Type       string                     `json:"type"` // classic, quorum or stream, whether or not x-queue-type was given
	Durable    json.RawMessage            `json:"durable"`
	AutoDelete json.RawMessage            `json:"auto_delete"`
	Exclusive  json.RawMessage            `json:"exclusive"`
	Arguments  map[string]json.RawMessage `json:"arguments"`
}

// queueDepthJSON is a queue's message counts, from the management statistics.
type queueDepthJSON struct {
	Name                   string `json:"name"`
	MessagesReady          int64  `json:"messages_ready"`
	MessagesUnacknowledged int64  `json:"messages_unacknowledged"`
	MessagesDLX            int64  `json:"messages_dlx"` // quorum queues: waiting for at-least-once dead-lettering
}

func (q queueDepthJSON) objectName() string { return q.Name }

type bindingJSON struct {
	Source          string `json:"source"`
	Destination     string `json:"destination"`
	DestinationType string `json:"destination_type"`
	RoutingKey      string `json:"routing_key"`
	PropertiesKey   string `json:"properties_key"`
}

func (e exchangeJSON) objectName() string { return e.Name }
func (q queueJSON) objectName() string    { return q.Name }

// listFiltered reads the objects of kind ("queues" or "exchanges") in vhost
// whose name matches pattern, in one request. The vhost missing is
// ErrVHostNotFound.
//
// The management API matches the pattern ignoring case ("delay" also finds
// "DELAY.ingest", another set), so the answer is filtered again here, exactly.
func listFiltered[T interface{ objectName() string }](ctx context.Context, c *Client, kind, vhost, pattern string, extra url.Values) ([]T, error) {
	exact, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("listing %s: invalid name pattern %q: %w", kind, pattern, err)
	}
	query := url.Values{
		"name":      {pattern},
		"use_regex": {"true"},
		"page":      {"1"},
		"page_size": {fmt.Sprint(pageSize)},
	}
	for k, v := range extra {
		query[k] = v
	}
	var result page[T]
	if err := c.call(ctx, http.MethodGet, apiPath(kind, vhost), query, nil, &result); err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("listing %s: %w: %q", kind, ErrVHostNotFound, vhost)
		}
		return nil, fmt.Errorf("listing %s in vhost %q: %w", kind, vhost, err)
	}
	if result.FilteredCount > len(result.Items) {
		return nil, fmt.Errorf("listing %s in vhost %q: %d match %s, more than the %d one page holds",
			kind, vhost, result.FilteredCount, pattern, pageSize)
	}
	return slices.DeleteFunc(result.Items, func(item T) bool { return !exact.MatchString(item.objectName()) }), nil
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
func (c *Client) ReadSet(ctx context.Context, vhost, name string) (_ topology.Topology, err error) {
	ctx, report := c.observe(ctx, "read set", map[string]any{"vhost": vhost, "set": name})
	defer func() { report(err) }()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pattern := topology.Names(name).ObjectNamePattern()
	// The statistics are not needed: without them the listing costs the broker less.
	noStats := url.Values{"disable_stats": {"true"}}
	var (
		exchanges          []exchangeJSON
		queues             []queueJSON
		exchangesErr, qErr error
		wg                 sync.WaitGroup
	)
	wg.Go(func() {
		exchanges, exchangesErr = listFiltered[exchangeJSON](ctx, c, "exchanges", vhost, pattern, noStats)
	})
	wg.Go(func() { queues, qErr = listFiltered[queueJSON](ctx, c, "queues", vhost, pattern, noStats) })
	wg.Wait()
	if exchangesErr != nil {
		return topology.Topology{}, exchangesErr
	}
	if qErr != nil {
		return topology.Topology{}, qErr
	}

	bindings := make([][]bindingJSON, len(exchanges))
	var (
		firstErr error
		once     sync.Once
	)
	runLimited(ctx, len(exchanges), readConcurrency, func(ctx context.Context, i int) error {
		path := apiPath("exchanges", vhost, exchanges[i].Name, "bindings", "source")
		err := c.call(ctx, http.MethodGet, path, nil, nil, &bindings[i])
		if err != nil {
			once.Do(func() {
				firstErr = fmt.Errorf("listing the bindings of exchange %q in vhost %q: %w", exchanges[i].Name, vhost, err)
				cancel() // the read has failed: stop the others
			})
		}
		return err
	})
	if firstErr != nil {
		return topology.Topology{}, firstErr
	}

	t := topology.Topology{VHost: vhost}
	for _, e := range exchanges {
		t.Exchanges = append(t.Exchanges, exchangeFromJSON(e))
	}
	for _, q := range queues {
		t.Queues = append(t.Queues, queueFromJSON(q))
	}
	for _, list := range bindings {
		for _, b := range list {
			if b.Source == "" {
				continue // the default exchange's implicit bindings are no one's
			}
			t.Bindings = append(t.Bindings, topology.Binding{
				Source: b.Source, Destination: b.Destination,
				DestinationType: topology.DestinationType(b.DestinationType), RoutingKey: b.RoutingKey,
			})
		}
	}
	slices.SortFunc(t.Exchanges, func(a, b topology.Exchange) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(t.Queues, func(a, b topology.Queue) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(t.Bindings, compareBindings)
	return t, nil
}

func compareBindings(a, b topology.Binding) int {
	return cmp.Or(
		strings.Compare(a.Source, b.Source),
		strings.Compare(string(a.DestinationType), string(b.DestinationType)),
		strings.Compare(a.Destination, b.Destination),
		strings.Compare(a.RoutingKey, b.RoutingKey),
	)
}

func exchangeFromJSON(e exchangeJSON) topology.Exchange {
	x := topology.Exchange{Name: e.Name, Type: e.Type}
	other := map[string]string{}
	for name, value := range e.Arguments {
		if name == argAlternateExchange {
			if s, ok := nonEmptyString(value); ok {
				x.Arguments.AlternateExchange = s
				continue
			}
		}
		other[name] = compactJSON(value)
	}
	addProperty(other, propertyDurable, e.Durable, true)
	addProperty(other, propertyAutoDelete, e.AutoDelete, false)
	addProperty(other, propertyInternal, e.Internal, false)
	if len(other) > 0 {
		x.Arguments.Other = other
	}
	return x
}

func queueFromJSON(q queueJSON) topology.Queue {
	queue := topology.Queue{Name: q.Name}
	args := &queue.Arguments
	other := map[string]string{}
	for name, value := range q.Arguments {
		var typed *string
		switch name {
		case argMessageTTL:
			var ttl int64
			// A TTL the typed field cannot hold (absent is 0) stays visible in Other.
			if json.Unmarshal(value, &ttl) == nil && ttl != 0 {
				args.MessageTTL = ttl
				continue
			}
		case argQueueType:
			continue // the broker's type field says it, below, even when the argument is absent
		case argDeadLetterExchange:
			typed = &args.DeadLetterExchange
		case argDeadLetterStrategy:
			typed = (*string)(&args.DeadLetterStrategy)
		case argOverflow:
			typed = &args.Overflow
		}
		if typed != nil {
			// "" would read as absent, so it stays in Other: an empty
			// x-dead-letter-exchange dead-letters to the default exchange.
			if s, ok := nonEmptyString(value); ok {
				*typed = s
				continue
			}
		}
		other[name] = compactJSON(value)
	}
	args.QueueType = topology.QueueType(q.Type)
	if q.Type == "" {
		if s, ok := nonEmptyString(q.Arguments[argQueueType]); ok {
			args.QueueType = topology.QueueType(s)
		}
	}
	addProperty(other, propertyDurable, q.Durable, true)
	addProperty(other, propertyAutoDelete, q.AutoDelete, false)
	addProperty(other, propertyExclusive, q.Exclusive, false)
	if len(other) > 0 {
		args.Other = other
	}
	return queue
}

// addProperty records a property that differs from the layout's value.
// Anything but true counts as false ("undefined" included).
func addProperty(other map[string]string, name string, raw json.RawMessage, layout bool) {
	if actual := string(raw) == "true"; actual != layout {
		other[name] = fmt.Sprint(actual)
	}
}

func nonEmptyString(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return "", false
	}
	return s, true
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// QueueMessages returns the number of messages each named queue of vhost
// holds: ready, unacknowledged, and for quorum queues with at-least-once
// dead-lettering those waiting to be dead-lettered (messages_dlx). A queue
// that does not exist is absent from the map. It lists just these queues
// with the name filter, in one request unless the names are very long.
//
// The numbers come from the management statistics, which the broker samples
// every 5 seconds by default (collect_statistics_interval): a message
// published just before may not be counted yet, and a queue declared just
// before may have no statistics yet and read 0. Use them to inform, never to
// decide that deleting a queue is safe: Apply checks that itself, exactly
// for ready messages (see the package documentation).
func (c *Client) QueueMessages(ctx context.Context, vhost string, queues []string) (_ map[string]int64, err error) {
	ctx, report := c.observe(ctx, "queue messages", map[string]any{"vhost": vhost, "queues": len(queues)})
	defer func() { report(err) }()
	return c.queueMessages(ctx, vhost, queues)
}

func (c *Client) queueMessages(ctx context.Context, vhost string, queues []string) (map[string]int64, error) {
	counts := make(map[string]int64, len(queues))
	for _, pattern := range namePatterns(queues) {
		columns := url.Values{"columns": {"name,messages_ready,messages_unacknowledged,messages_dlx"}}
		items, err := listFiltered[queueDepthJSON](ctx, c, "queues", vhost, pattern, columns)
		if err != nil {
			return nil, err
		}
		for _, q := range items {
			counts[q.Name] = q.MessagesReady + q.MessagesUnacknowledged + q.MessagesDLX
		}
	}
	return counts, nil
}

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

// VHostExists tells whether vhost exists on the broker.
func (c *Client) VHostExists(ctx context.Context, vhost string) (bool, error) {
	err := c.call(ctx, http.MethodGet, apiPath("vhosts", vhost), nil, nil, nil)
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("reading vhost %q: %w", vhost, err)
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
