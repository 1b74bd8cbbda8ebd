package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// applyConcurrency bounds the changes of one batch in flight.
const applyConcurrency = 8

// checkConcurrency bounds the checks for messages in flight, of a batch of
// queue deletions or of one count: where a check waits for fresh
// statistics, the checks of a whole set wait through the same samples
// together, not eight after eight. Only the checks run so: quorum queues
// are deleted one at a time (Client.quorumDeletionTurn).
const checkConcurrency = 32

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// ForceDeleteQueues deletes queues even when they hold messages, which
	// are lost. Without it a queue is deleted only if empty.
	ForceDeleteQueues bool

	// declaringNodes, set by Apply, names the node that declares a queue
	// (see declaringNodes); the one that answers, for a queue it lacks.
	declaringNodes map[string]string
	// created, set by Apply, gathers the quorum queues a batch's
	// declarations created, whose logs it marks after the batch.
	created *createdQueues
}

// Apply makes changes in vhost, in order. Consecutive changes of the same
// kind run concurrently, up to eight at a time, one at a time where the
// broker needs it (oneAtATime); a change that opens a path for messages
// (topology.Change.Opens) waits for everything before it. After a batch
// with failures Apply stops and returns each, a *ChangeError naming its
// object. What is already gone is deleted; a queue holding messages only
// with opts.ForceDeleteQueues, else *QueueNotEmptyError (deletion.go).
func (c *Client) Apply(ctx context.Context, vhost string, changes []topology.Change, opts ApplyOptions) (err error) {
	ctx, report := c.observe(ctx, "apply", map[string]any{"vhost": vhost, "changes": len(changes)})
	defer func() { report(err) }()
	// No set read reuses a listing of bindings from before or during this.
	c.shared.wrote(vhost)
	defer c.shared.wrote(vhost)
	if opts.declaringNodes, err = c.declaringNodes(ctx, vhost, changes); err != nil {
		return err
	}
	opts.created = &createdQueues{}

	for start := 0; start < len(changes); {
		end := start + 1
		for end < len(changes) && changes[end].Kind == changes[start].Kind && changes[end].Opens == changes[start].Opens {
			end++
		}
		batch := changes[start:end]
		limit := applyConcurrency
		switch {
		case oneAtATime(batch):
			limit = 1
		case batch[0].Kind == topology.DeleteQueue:
			limit = checkConcurrency
		}
		errs := runUntilUnreachable(ctx, len(batch), limit, func(ctx context.Context, i int) error {
			if ctx.Err() != nil {
				return ctx.Err() // stopped before it started
			}
			return c.applyChange(ctx, vhost, batch[i], opts)
		})
		if batch[0].Kind == topology.CreateQueue {
			// Off the one-at-a-time declarations' path, and before any
			// binding can bring a message.
			c.markDeclared(ctx, vhost, opts.created.take())
		}
		var failures []error
		for i, err := range errs {
			if err != nil && ctx.Err() == nil {
				failures = append(failures, &ChangeError{Change: batch[i], Err: err})
			}
		}
		if ctx.Err() != nil {
			// One error for the cancellation, not one per change it stopped.
			return errors.Join(append(failures, fmt.Errorf("applying changes to vhost %q stopped after %d of %d: %w",
				vhost, start, len(changes), context.Cause(ctx)))...)
		}
		if len(failures) > 0 {
			return errors.Join(failures...)
		}
		start = end
	}
	return nil
}

// oneAtATime tells whether a batch's changes must run one after the other:
// queues with balanced leaders (declared at once they all see the same
// counts and land on one node), and exchange deletions (RabbitMQ 4.0.5
// answers 400 deleting an exchange while one bound to it goes). DESIGN.md,
// "Many sets in one configuration", has the measurements.
func oneAtATime(batch []topology.Change) bool {
	switch batch[0].Kind {
	case topology.DeleteExchange:
		return true
	case topology.CreateQueue:
		return slices.ContainsFunc(batch, func(c topology.Change) bool {
			return c.Queue != nil && c.Queue.Arguments.LeaderLocator == topology.LeaderLocatorBalanced
		})
	}
	return false
}

// DeleteSet deletes every object of the set called name in vhost that
// ReadSet finds, in the order topology.Teardown gives, with opts: the
// provider's destroy deletes the same way, with its emptiness check before.
func (c *Client) DeleteSet(ctx context.Context, vhost, name string, opts ApplyOptions) error {
	actual, err := c.ReadSet(ctx, vhost, name)
	if err != nil {
		return err
	}
	return c.Apply(ctx, vhost, topology.Teardown(actual), opts)
}

func (c *Client) applyChange(ctx context.Context, vhost string, change topology.Change, opts ApplyOptions) error {
	switch {
	case change.Kind == topology.CreateExchange && change.Exchange != nil:
		return c.declareExchange(ctx, vhost, *change.Exchange)
	case change.Kind == topology.CreateQueue && change.Queue != nil:
		return c.declareQueue(ctx, vhost, *change.Queue, opts.declaringNodes[change.Queue.Name], opts.created)
	case change.Kind == topology.CreateBinding && change.Binding != nil:
		return c.declareBinding(ctx, vhost, *change.Binding)
	case change.Kind == topology.DeleteBinding && change.Binding != nil:
		return c.deleteBinding(ctx, vhost, *change.Binding)
	case change.Kind == topology.DeleteQueue && change.Queue != nil:
		return c.deleteQueue(ctx, vhost, *change.Queue, opts.ForceDeleteQueues)
	case change.Kind == topology.DeleteExchange && change.Exchange != nil:
		return c.deleteExchange(ctx, vhost, change.Exchange.Name)
	}
	return fmt.Errorf("a %q change needs its object set, and only that one", change.Kind)
}

func (c *Client) declareExchange(ctx context.Context, vhost string, e topology.Exchange) error {
	settings := rabbithole.ExchangeSettings{Type: e.Type, Durable: true, Arguments: map[string]any{}}
	setString(settings.Arguments, topology.ArgAlternateExchange, e.Arguments.AlternateExchange)
	internal := false
	properties := map[string]*bool{propertyDurable: &settings.Durable, propertyAutoDelete: &settings.AutoDelete, propertyInternal: &internal}
	if err := addOther(settings.Arguments, properties, e.Arguments.Other); err != nil {
		return err
	}
	path := apiPath("exchanges", vhost, e.Name)
	if internal {
		// rabbithole.ExchangeSettings has no internal field; the broker's default is false.
		body := map[string]any{"type": settings.Type, "durable": settings.Durable, "auto_delete": settings.AutoDelete,
			"internal": true, "arguments": settings.Arguments}
		return c.call(ctx, http.MethodPut, path, nil, body, nil)
	}
	return c.viaRabbitHole(ctx, http.MethodPut, path, func() error {
		return closeAnswer(c.rabbit.DeclareExchange(vhost, e.Name, settings))
	})
}

// declareQueue declares q, through node when it is set (the management
// API's "node": that node declares it, as a client connected to it would).
func (c *Client) declareQueue(ctx context.Context, vhost string, q topology.Queue, node string, created *createdQueues) error {
	a := q.Arguments
	// rabbit-hole also sets x-queue-type from Type; it is set here too so
	// that addOther sees it.
	settings := rabbithole.QueueSettings{Type: string(a.QueueType), Durable: true, Arguments: map[string]any{}}
	if a.MessageTTL != 0 {
		settings.Arguments[topology.ArgMessageTTL] = a.MessageTTL // int64: encodes as a JSON integer
	}
	setString(settings.Arguments, topology.ArgDeadLetterExchange, a.DeadLetterExchange)
	setString(settings.Arguments, topology.ArgQueueType, string(a.QueueType))
	setString(settings.Arguments, topology.ArgDeadLetterStrategy, string(a.DeadLetterStrategy))
	setString(settings.Arguments, topology.ArgOverflow, a.Overflow)
	setString(settings.Arguments, topology.ArgLeaderLocator, string(a.LeaderLocator))
	if a.QuorumInitialGroupSize != 0 {
		settings.Arguments[topology.ArgQuorumInitialGroupSize] = a.QuorumInitialGroupSize
	}
	if _, ok := a.Other[propertyExclusive]; ok {
		return errors.New("the management API cannot declare an exclusive queue: only an AMQP connection can own one")
	}
	properties := map[string]*bool{propertyDurable: &settings.Durable, propertyAutoDelete: &settings.AutoDelete}
	if err := addOther(settings.Arguments, properties, a.Other); err != nil {
		return err
	}
	path := apiPath("queues", vhost, q.Name)
	var status int
	var err error
	if node != "" {
		// rabbithole.QueueSettings has no node field.
		status, err = c.callStatus(ctx, http.MethodPut, path, nil, queueOnNode{settings, node}, nil)
	} else {
		err = c.viaRabbitHole(ctx, http.MethodPut, path, func() error {
			resp, err := c.rabbit.DeclareQueue(vhost, q.Name, settings)
			if resp != nil {
				status = resp.StatusCode
			}
			return closeAnswer(resp, err)
		})
	}
	if err == nil && status == http.StatusCreated && a.QueueType == topology.QueueTypeQuorum && created != nil {
		created.add(q.Name)
	}
	return err
}

func setString(arguments map[string]any, name, value string) {
	if value != "" {
		arguments[name] = value
	}
}

// addOther adds the untyped arguments, and sets the properties that ReadSet
// reports in Other, so that an object read from the broker declares as it was.
func addOther(arguments map[string]any, properties map[string]*bool, other map[string]string) error {
	for name, text := range other {
		if property, ok := properties[name]; ok {
			if err := json.Unmarshal([]byte(text), property); err != nil {
				return fmt.Errorf("property %s must be true or false, got %s", name, text)
			}
			continue
		}
		if _, typed := arguments[name]; typed {
			return fmt.Errorf("argument %s is set both typed and in Other", name)
		}
		if !json.Valid([]byte(text)) {
			return fmt.Errorf("argument %s is not JSON: %s", name, text)
		}
		arguments[name] = json.RawMessage(text)
	}
	return nil
}

// bindingPath is the path of the bindings from b's source to its destination.
func bindingPath(vhost string, b topology.Binding) string {
	kind := "q"
	if b.DestinationType.OrQueue() == topology.DestinationExchange {
		kind = "e"
	}
	return apiPath("bindings", vhost, "e", b.Source, kind, b.Destination)
}

// bindingInfo is b as rabbit-hole takes it, with its arguments.
func bindingInfo(b topology.Binding) rabbithole.BindingInfo {
	return rabbithole.BindingInfo{
		Source: b.Source, Destination: b.Destination, DestinationType: string(b.DestinationType.OrQueue()),
		RoutingKey: b.RoutingKey, Arguments: bindingArguments(b.Arguments),
	}
}

// bindingArguments are a's as the management API takes them: x-delay a
// JSON integer, which the broker keeps as an integer (a headers exchange
// compares it with a message's x-delay of any integer type).
func bindingArguments(a topology.BindingArguments) map[string]any {
	arguments := map[string]any{}
	if a.Other != "" {
		// Read from the broker as an object, so it decodes; an error leaves it out.
		_ = json.Unmarshal([]byte(a.Other), &arguments)
	}
	setString(arguments, topology.ArgMatch, a.Match)
	if a.HasDelay {
		arguments[topology.ArgDelay] = a.Delay
	}
	return arguments
}

func (c *Client) declareBinding(ctx context.Context, vhost string, b topology.Binding) error {
	err := c.viaRabbitHole(ctx, http.MethodPost, bindingPath(vhost, b), func() error {
		return closeAnswer(c.rabbit.DeclareBinding(vhost, bindingInfo(b)))
	})
	if isGone(err) {
		return fmt.Errorf("exchange %q or %s %q does not exist: %w", b.Source, b.DestinationType.OrQueue(), b.Destination, err)
	}
	return err
}

// deleteBinding deletes the bindings from b's source to its destination with
// b's routing key, and b's arguments when it has any. The API names a
// binding by its properties key, which the broker derives from the key and
// arguments: the keys the last ReadSet listed for b (every such binding it
// saw, one request each), else the key of a binding without arguments, a
// set's kind (one request; a binding with arguments beside it on the same
// key stays), and when that answers 404 or b has arguments a listing of the
// bindings between the two ends, each of which is deleted.
func (c *Client) deleteBinding(ctx context.Context, vhost string, b topology.Binding) error {
	path := bindingPath(vhost, b)
	keys := c.bindingKeys.take(vhost, b)
	if len(keys) == 0 && b.Arguments.None() {
		// Not read by this client: the key the broker gives a binding
		// without arguments, which the layout's bindings are.
		keys = []string{propertiesKey(b.RoutingKey)}
	}
	err := c.deleteBindingByKeys(ctx, vhost, b, keys)
	if len(keys) > 0 && !isGone(err) {
		return err
	}
	// The binding changed or went since ReadSet saw it, or has arguments: look again.
	var existing []rabbithole.BindingInfo
	err = c.viaRabbitHole(ctx, http.MethodGet, path, func() (err error) {
		if b.DestinationType.OrQueue() == topology.DestinationExchange {
			existing, err = c.rabbit.ListExchangeBindingsBetween(vhost, b.Source, b.Destination)
		} else {
			existing, err = c.rabbit.ListQueueBindingsBetween(vhost, b.Source, b.Destination)
		}
		return err
	})
	if isGone(err) {
		return nil // an end is gone, and the binding with it
	}
	if err != nil {
		return err
	}
	for _, found := range existing {
		if found.RoutingKey != b.RoutingKey || !b.Arguments.None() && bindingFromInfo(found).Arguments != b.Arguments {
			continue
		}
		binding := bindingInfo(b)
		binding.PropertiesKey = found.PropertiesKey
		// rabbit-hole takes a 404 to a DELETE for success: already gone.
		err := c.viaRabbitHole(ctx, http.MethodDelete, path+"/"+url.PathEscape(found.PropertiesKey), func() error {
			return closeAnswer(c.rabbit.DeleteBinding(vhost, binding))
		})
		c.unbound(vhost, b.Destination)
		if err != nil {
			return err
		}
	}
	return nil
}

// propertiesKey is the properties key RabbitMQ's management API gives a
// binding without arguments (rabbit_mgmt_format:pack_binding_props): the
// routing key escaped as a query value, "~" escaped too, and "~" alone for
// the empty key. A binding with arguments has another, and its DELETE by
// this key answers 404.
func propertiesKey(routingKey string) string {
	if routingKey == "" {
		return "~"
	}
	return strings.ReplaceAll(url.QueryEscape(routingKey), "~", "%7E")
}

// deleteBindingByKeys deletes the bindings at path with the given properties
// keys. Not through rabbit-hole, which takes a 404 for success: here a 404
// means the key is stale, and the caller looks the binding up instead.
func (c *Client) deleteBindingByKeys(ctx context.Context, vhost string, b topology.Binding, keys []string) error {
	path := bindingPath(vhost, b)
	for _, key := range keys {
		err := c.call(ctx, http.MethodDelete, path+"/"+url.PathEscape(key), nil, nil, nil)
		c.unbound(vhost, b.Destination)
		if err != nil {
			return err
		}
	}
	return nil
}

// unbound notes that a binding into destination may have gone just now
// (awaitSettledArrivals).
func (c *Client) unbound(vhost, destination string) {
	c.counter.unbound(vhost, destination)
}

// vhostObject names an exchange or queue of a vhost.
type vhostObject struct{ vhost, name string }

// bindingKeys remembers the properties keys of the bindings ReadSet listed,
// by vhost and binding: the hint that spares deleteBinding a lookup. A stale
// hint costs one request that answers 404, and then the lookup.
type bindingKeys struct {
	mu   sync.Mutex
	keys map[vhostBinding][]string
}

type vhostBinding struct {
	vhost   string
	binding topology.Binding
}

func (k *bindingKeys) remember(vhost string, b topology.Binding, key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == nil {
		k.keys = map[vhostBinding][]string{}
	}
	b.DestinationType = b.DestinationType.OrQueue()
	at := vhostBinding{vhost, b}
	if !slices.Contains(k.keys[at], key) {
		k.keys[at] = append(k.keys[at], key)
	}
}

// take returns the keys remembered for b and forgets them.
func (k *bindingKeys) take(vhost string, b topology.Binding) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	b.DestinationType = b.DestinationType.OrQueue()
	at := vhostBinding{vhost, b}
	keys := k.keys[at]
	delete(k.keys, at)
	return keys
}

// deleteExchange deletes an exchange; rabbit-hole takes a 404 to a DELETE
// for success: already gone.
func (c *Client) deleteExchange(ctx context.Context, vhost, name string) error {
	return c.viaRabbitHole(ctx, http.MethodDelete, apiPath("exchanges", vhost, name), func() error {
		return closeAnswer(c.rabbit.DeleteExchange(vhost, name))
	})
}
