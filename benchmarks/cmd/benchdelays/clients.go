package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The clients of a trial: through n AMQP URLs (a cluster's nodes), message i goes
// through URL i mod n to route i mod n, consumed on that node.

// routesFor are the routes of set name for n client URLs.
func routesFor(name string, n int) []topology.Route {
	if n <= 1 {
		return []topology.Route{{Destination: name + ".work", Key: routeKey}}
	}
	routes := make([]topology.Route, n)
	for i := range routes {
		routes[i] = topology.Route{Destination: fmt.Sprintf("%s.work.%d", name, i), Key: fmt.Sprintf("%s%d", routeKey, i)}
	}
	return routes
}

// trialClients are a trial's connections, publishers and consumers: those
// of route i through URL i.
type trialClients struct {
	conns      []trialConns
	routes     []topology.Route
	byKey      map[string]int // route key → its index
	publishers []*messaging.StreamPublisher
	consumers  []*messaging.Consumer
}

// dialClients opens the connections of routes, one pair per URL.
func dialClients(urls []string, routes []topology.Route) (*trialClients, error) {
	c := &trialClients{routes: routes, byKey: map[string]int{}}
	for i, url := range urls {
		conns, err := dialTrial(url)
		if err != nil {
			c.close()
			return nil, err
		}
		c.conns = append(c.conns, conns)
		c.byKey[routes[i].Key] = i
	}
	return c, nil
}

// declareRoutes declares each route's queue through its URL.
func (c *trialClients) declareRoutes() error {
	for i, r := range c.routes {
		if err := messaging.DeclareQueue(c.conns[i].consume, r.Destination); err != nil {
			return err
		}
	}
	return nil
}

// start starts a consumer of each route's queue and a publisher to
// exchange through each URL.
func (c *trialClients) start(exchange string, consumer messaging.ConsumerOptions, stream messaging.StreamOptions) error {
	for i, r := range c.routes {
		cons, err := messaging.NewConsumer(c.conns[i].consume, r.Destination, consumer)
		if err != nil {
			return err
		}
		c.consumers = append(c.consumers, cons)
		pub, err := messaging.NewStreamPublisher(c.conns[i].publish, exchange, stream)
		if err != nil {
			return err
		}
		c.publishers = append(c.publishers, pub)
	}
	return nil
}

// routeKeyOf is message number i's route key.
func (c *trialClients) routeKeyOf(i int) string { return c.routes[i%len(c.routes)].Key }

// send publishes m through the URL of the route its routing key names.
func (c *trialClients) send(ctx context.Context, routingKey string, m messaging.Message) error {
	key, _, _ := strings.Cut(routingKey, ".")
	_, err := c.publishers[c.byKey[key]].Publish(ctx, routingKey, m)
	return err
}

// finishPublishing waits for every confirm, then closes the publishers.
func (c *trialClients) finishPublishing(ctx context.Context) error {
	var errs []error
	for _, p := range c.publishers {
		errs = append(errs, p.Flush(ctx))
	}
	for _, p := range c.publishers {
		if err := p.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitFor waits until each route's consumer has had as many messages as
// the broker confirmed with its key (acked: route key → messages).
func (c *trialClients) waitFor(ctx context.Context, acked map[string]int) error {
	for i, cons := range c.consumers {
		if err := cons.WaitFor(ctx, acked[c.routes[i].Key]); err != nil {
			return err
		}
	}
	return nil
}

// settle waits until no consumer has had a delivery for quiet, or ctx
// ends, then closes them.
func (c *trialClients) settle(ctx context.Context, quiet time.Duration) error {
	var errs []error
	for _, cons := range c.consumers {
		if err := cons.Settle(ctx, quiet); err != nil && ctx.Err() == nil {
			errs = append(errs, err)
		}
	}
	for _, cons := range c.consumers {
		if err := cons.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// observed are the consumers' first arrivals, later arrivals of an id (on
// any of them) and foreign deliveries.
func (c *trialClients) observed() (arrivals, duplicates []messaging.Arrival, foreign int) {
	seen := map[string]bool{}
	for _, cons := range c.consumers {
		for _, a := range cons.Arrivals() {
			if seen[a.Message.ID] {
				duplicates = append(duplicates, a)
				continue
			}
			seen[a.Message.ID] = true
			arrivals = append(arrivals, a)
		}
		duplicates = append(duplicates, cons.Duplicates()...)
		foreign += len(cons.Foreign())
	}
	return arrivals, duplicates, foreign
}

// close closes every connection, and with them what is left open.
func (c *trialClients) close() {
	for _, conns := range c.conns {
		conns.close()
	}
}

// redactedURLs are urls with their passwords hidden, when there are
// several: one names itself in the report's text already.
func redactedURLs(urls []string) []string {
	if len(urls) < 2 {
		return nil
	}
	redacted := make([]string, len(urls))
	for i, url := range urls {
		redacted[i] = messaging.RedactURL(url)
	}
	return redacted
}
