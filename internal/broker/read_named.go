package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// ReadSetNamed is ReadSetOf for a set whose objects are known (from its
// state or plan): it reads each object by its own path, so its cost does
// not depend on what else the vhost holds, then, round after round, every
// object named like the set that what it found refers to (a stray queue, a
// generation the state does not know). Only an import finds an object that
// nothing of the set refers to. 2E + Q requests for E exchanges and Q
// queues (3N + 7 for N levels); with opts.ShareBindings on Khepri, later
// reads of a vhost share one listing of its bindings (read_shared.go).
func (c *Client) ReadSetNamed(ctx context.Context, vhost, name string, layout topology.Layout, known topology.Topology, opts ReadOptions) (_ topology.Topology, err error) {
	ctx, report := c.observe(ctx, "read set by name", map[string]any{"vhost": vhost, "set": name, "layout": string(layout.OrDefault())})
	defer func() { report(err) }()
	return c.readNamed(ctx, vhost, fmt.Sprintf("set %q", name), layout.ObjectNamePattern(name), known, opts)
}

// ReadObjectsNamed is ReadSetNamed for the objects whose names match
// pattern (a delayed exchange's: topology.DelayedNames.ObjectNamePattern).
func (c *Client) ReadObjectsNamed(ctx context.Context, vhost, pattern string, known topology.Topology, opts ReadOptions) (_ topology.Topology, err error) {
	ctx, report := c.observe(ctx, "read objects by name", map[string]any{"vhost": vhost, "pattern": pattern})
	defer func() { report(err) }()
	return c.readNamed(ctx, vhost, fmt.Sprintf("objects %s", pattern), pattern, known, opts)
}

// ReadObjectsMatching is ReadSetOf for the objects whose names match
// pattern: two listings, then each exchange's bindings.
func (c *Client) ReadObjectsMatching(ctx context.Context, vhost, pattern string) (_ topology.Topology, err error) {
	ctx, report := c.observe(ctx, "read objects", map[string]any{"vhost": vhost, "pattern": pattern})
	defer func() { report(err) }()
	return c.readMatching(ctx, vhost, pattern)
}

// readNamed is ReadSetNamed of what pattern matches; what names the
// objects in its errors.
func (c *Client) readNamed(ctx context.Context, vhost, what, pattern string, known topology.Topology, opts ReadOptions) (topology.Topology, error) {
	ofSet, err := regexp.Compile(pattern)
	if err != nil {
		return topology.Topology{}, fmt.Errorf("reading %s: invalid name pattern: %w", what, err)
	}

	r := namedRead{client: c, vhost: vhost, asked: map[string]bool{}}
	if opts.ShareBindings {
		r.shared = c.shared.forSetRead(ctx, vhost, c.readsBySourceScan, func(ctx context.Context) (map[string][]rabbithole.BindingInfo, error) {
			return c.vhostBindingsBySource(ctx, vhost)
		})
	}
	var exchangeNames, queueNames []string
	for _, e := range known.Exchanges {
		exchangeNames = append(exchangeNames, e.Name)
	}
	for _, q := range known.Queues {
		queueNames = append(queueNames, q.Name)
	}
	for len(exchangeNames)+len(queueNames) > 0 {
		found, err := r.round(ctx, exchangeNames, queueNames)
		if err != nil {
			return topology.Topology{}, err
		}
		exchangeNames, queueNames = r.referenced(found, ofSet)
	}
	if len(r.exchanges)+len(r.queues) == 0 && len(r.asked) > 0 {
		switch exists, err := c.VHostExists(ctx, vhost); {
		case err != nil:
			return topology.Topology{}, err
		case !exists:
			return topology.Topology{}, fmt.Errorf("reading %s: %w: %q", what, ErrVHostNotFound, vhost)
		}
	}
	return c.assemble(vhost, r.exchanges, r.queues, r.bindings), nil
}

// namedRead is what ReadSetNamed has found so far.
type namedRead struct {
	client    *Client
	vhost     string
	shared    *bindingListing // where the bindings come from; nil: by source
	asked     map[string]bool // "e:" or "q:" and a name: read already
	exchanges []rabbithole.ExchangeInfo
	queues    []rabbithole.QueueInfo
	bindings  [][]rabbithole.BindingInfo
}

// namedFound is what one round found.
type namedFound struct {
	exchanges []rabbithole.ExchangeInfo
	queues    []rabbithole.QueueInfo
	bindings  [][]rabbithole.BindingInfo
}

// round reads the named exchanges with their bindings, and the named
// queues, readConcurrency at a time.
func (r *namedRead) round(ctx context.Context, exchangeNames, queueNames []string) (namedFound, error) {
	for _, n := range exchangeNames {
		r.asked["e:"+n] = true
	}
	for _, n := range queueNames {
		r.asked["q:"+n] = true
	}
	exchanges := make([]*rabbithole.ExchangeInfo, len(exchangeNames))
	bindings := make([][]rabbithole.BindingInfo, len(exchangeNames))
	queues := make([]*rabbithole.QueueInfo, len(queueNames))
	err := runFailFast(ctx, len(exchangeNames)+len(queueNames), readConcurrency, func(ctx context.Context, i int) (err error) {
		if i < len(exchangeNames) {
			exchanges[i], bindings[i], err = r.client.readExchangeNamed(ctx, r.vhost, exchangeNames[i], r.shared)
		} else {
			queues[i-len(exchangeNames)], err = r.client.readQueueNamed(ctx, r.vhost, queueNames[i-len(exchangeNames)])
		}
		return err
	})
	if err != nil {
		return namedFound{}, err
	}
	var found namedFound
	for i, e := range exchanges {
		if e != nil {
			found.exchanges = append(found.exchanges, *e)
			found.bindings = append(found.bindings, bindings[i])
		}
	}
	for _, q := range queues {
		if q != nil {
			found.queues = append(found.queues, *q)
		}
	}
	r.exchanges = append(r.exchanges, found.exchanges...)
	r.queues = append(r.queues, found.queues...)
	r.bindings = append(r.bindings, found.bindings...)
	return found, nil
}

// referenced lists the objects named like the set (ofSet) that what a round
// found refers to and that no round has read yet.
func (r *namedRead) referenced(found namedFound, ofSet *regexp.Regexp) (exchangeNames, queueNames []string) {
	next := map[string]bool{}
	add := func(kind, name string) {
		if name == "" || r.asked[kind+":"+name] || next[kind+":"+name] || !ofSet.MatchString(name) {
			return
		}
		next[kind+":"+name] = true
		if kind == "e" {
			exchangeNames = append(exchangeNames, name)
		} else {
			queueNames = append(queueNames, name)
		}
	}
	for _, e := range found.exchanges {
		ae, _ := e.Arguments[topology.ArgAlternateExchange].(string)
		add("e", ae)
	}
	for _, q := range found.queues {
		dlx, _ := q.Arguments[topology.ArgDeadLetterExchange].(string)
		add("e", dlx)
	}
	for _, list := range found.bindings {
		for _, b := range list {
			if b.DestinationType == string(topology.DestinationExchange) {
				add("e", b.Destination)
			} else {
				add("q", b.Destination)
			}
		}
	}
	slices.Sort(exchangeNames)
	slices.Sort(queueNames)
	return exchangeNames, queueNames
}

// readExchangeNamed reads one exchange by its path and, if it exists, the
// bindings whose source it is, from shared unless it is nil; nil for an
// exchange (or vhost) that does not exist.
func (c *Client) readExchangeNamed(ctx context.Context, vhost, name string, shared *bindingListing) (*rabbithole.ExchangeInfo, []rabbithole.BindingInfo, error) {
	var e rabbithole.ExchangeInfo
	err := c.call(ctx, http.MethodGet, apiPath("exchanges", vhost, name), noStatistics, nil, &e)
	switch {
	case isNotFound(err):
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("reading exchange %q in vhost %q: %w", name, vhost, err)
	}
	var bindings []rabbithole.BindingInfo
	if shared != nil {
		bindings, err = shared.bindings(ctx, name)
	} else {
		bindings, err = c.sourceBindings(ctx, vhost, name)
	}
	switch {
	case isNotFound(err):
		return nil, nil, nil // deleted between the two requests
	case err != nil:
		return nil, nil, err
	}
	return &e, bindings, nil
}

// readQueueNamed reads one queue by its path; nil for a queue (or vhost)
// that does not exist.
func (c *Client) readQueueNamed(ctx context.Context, vhost, name string) (*rabbithole.QueueInfo, error) {
	var q rabbithole.QueueInfo
	err := c.call(ctx, http.MethodGet, apiPath("queues", vhost, name), noStatistics, nil, &q)
	switch {
	case isNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading queue %q in vhost %q: %w", name, vhost, err)
	}
	return &q, nil
}

// noStatistics asks the broker to leave out the statistics, which a read of
// the set does not need and which cost the broker more.
var noStatistics = url.Values{"disable_stats": {"true"}}
