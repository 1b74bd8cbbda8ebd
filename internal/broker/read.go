package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

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

// ReadSet reads the exchanges and queues of the default-layout set called
// name in vhost, and the bindings from its exchanges (routes included),
// sorted by name, with the management API's name filter: N + 5 requests for
// N levels however many other objects the vhost holds. A set with no object
// is an empty Topology; a missing vhost is ErrVHostNotFound. The queue type
// is the broker's; bindings' arguments are ignored (topic and fanout
// exchanges ignore them). ReadSetOf reads a set of any layout.
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
			binding := bindingFromInfo(b)
			c.bindingKeys.remember(vhost, binding, b.PropertiesKey)
			t.Bindings = append(t.Bindings, binding)
		}
	}
	slices.SortFunc(t.Exchanges, func(a, b topology.Exchange) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(t.Queues, func(a, b topology.Queue) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(t.Bindings, topology.CompareBindings)
	return t
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

// bindingFromInfo is a binding as the broker lists it, its arguments typed
// where a layout sets them.
func bindingFromInfo(b rabbithole.BindingInfo) topology.Binding {
	binding := topology.Binding{
		Source: b.Source, Destination: b.Destination,
		DestinationType: topology.DestinationType(b.DestinationType), RoutingKey: b.RoutingKey,
	}
	other := map[string]any{}
	for name, value := range b.Arguments {
		number, isNumber := value.(float64)
		match, isMatch := value.(string)
		switch {
		case name == topology.ArgMatch && isMatch:
			binding.Arguments.Match = match
		case name == topology.ArgDelay && isNumber && number == math.Trunc(number) && math.Abs(number) <= 1<<53:
			binding.Arguments.HasDelay, binding.Arguments.Delay = true, int64(number)
		default:
			other[name] = value
		}
	}
	if len(other) > 0 {
		binding.Arguments.Other = argumentJSON(other) // a map encodes its keys sorted
	}
	return binding
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
