package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// declarePassive asks the broker, over AMQP, how many ready messages the
// queue holds and how many consumers it has, through a connection proven
// to reach the management API's cluster (else an *unprovenAMQPError).
// errNoAMQP when there is no endpoint to ask. Once connected, it returns
// within amqpDeclareTimeout, or when ctx ends, whatever the peer does
// (amqpCounts.declare).
func (k *counter) declarePassive(ctx context.Context, vhost, queue string) (answer leaderAnswer, err error) {
	endpoint, err := k.amqpEndpoint(ctx)
	if err != nil {
		return answer, err
	}
	open, err := k.amqp.connection(ctx, vhost, endpoint, k.proveAMQP)
	if err != nil {
		return answer, err
	}
	return k.declareOn(ctx, open, endpoint, queue)
}

// declareOn makes declarePassive's declaration on the proven connection open.
func (k *counter) declareOn(ctx context.Context, open *amqpConnection, endpoint, queue string) (leaderAnswer, error) {
	answer, err := k.amqp.declare(ctx, open, queue)
	var amqpErr *amqp.Error
	if errors.As(err, &amqpErr) && amqpErr.Code == amqp.NotFound {
		// Not "gone": the management API found the queue, so this AMQP
		// endpoint may be another broker's. Nothing is believed.
		return leaderAnswer{}, fmt.Errorf("AMQP passive declaration of queue %q: not found at %s, though the management API "+
			"has it: is that AMQP endpoint this broker's?", queue, endpoint)
	}
	return answer, err
}

// proveAMQP proves that conn reaches the cluster that the management API
// serves: the same cluster_name on both sides, and the management API
// listing the connection, by the nonce in its connection_name or by its
// addresses (a load balancer in front of two clusters of one name passes
// the first test, never the second). An *unprovenAMQPError when it does
// not; another error when the management API could not be asked.
func (k *counter) proveAMQP(ctx context.Context, conn *amqp.Connection, endpoint, vhost, nonce string) error {
	unproven := func(format string, args ...any) error {
		return &unprovenAMQPError{Endpoint: endpoint, VHost: vhost, Reason: fmt.Sprintf(format, args...)}
	}
	want, err := k.api.clusterName(ctx)
	if err != nil {
		return err
	}
	if got, _ := conn.Properties["cluster_name"].(string); got != want {
		return unproven("its broker's cluster is %q, the management API's %q", got, want)
	}
	// RabbitMQ names a connection by its peer's address and its own, as
	// Go prints a TCP address: the same socket, seen from both ends,
	// unless something stands between them.
	addresses := conn.LocalAddr().String() + " -> " + conn.RemoteAddr().String()
	named := amqpConnectionName + " " + nonce
	// The user's own connections are listed from the moment they open, on
	// every version, to a user with the management tag; where that listing
	// is refused or lacks the connection (a proxy between them), the
	// listings of every connection decide.
	own := apiPath("connections", "username", k.amqp.username)
	if listed, err := k.listsConnection(ctx, own, url.Values{"columns": {"name,user_provided_name"}}, addresses, named); listed {
		return nil
	} else if ctx.Err() != nil {
		return errors.Join(context.Cause(ctx), err)
	}
	// First the connections tracked at once (RabbitMQ 3.x–4.2 list them so
	// without statistics, by name alone); then the listing with
	// statistics, where a connection shows its connection_name once its
	// statistics are collected.
	query := url.Values{"disable_stats": {"true"}, "columns": {"name,user_provided_name"},
		"page": {"1"}, "page_size": {"100"}, "name": {addresses}}
	deadline := time.Now().Add(k.amqp.proof())
	for {
		listed, err := k.listsConnection(ctx, apiPath("connections"), query, addresses, named)
		switch {
		case IsAccessRefused(err):
			return unproven("the management API does not show the user's connections: %v", err)
		case err != nil:
			return fmt.Errorf("listing the connections to prove the AMQP connection to %s: %w", endpoint, err)
		case listed:
			return nil
		case time.Now().After(deadline):
			return unproven("the management API listed no connection named %q within %s (cluster %q on both sides)",
				named, k.amqp.proof(), want)
		}
		if err := k.pause(ctx); err != nil {
			return err
		}
		query = url.Values{"columns": {"name,user_provided_name"}}
	}
}

// listsConnection tells whether the management API's listing at path
// has a connection named addresses or provided the name named.
func (k *counter) listsConnection(ctx context.Context, path string, query url.Values, addresses, named string) (bool, error) {
	var raw json.RawMessage
	if err := k.api.get(ctx, path, query, &raw); err != nil {
		return false, err
	}
	listed, err := parseConnections(raw)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(listed, func(l listedConnection) bool { return l.Name == addresses || l.ProvidedName == named }), nil
}

// amqpEndpoint is the AMQP URL to count through, learned once
// (discoverAMQP); errNoAMQP where there is none.
func (k *counter) amqpEndpoint(ctx context.Context) (string, error) {
	return k.amqp.resolve(ctx, k.discoverAMQP)
}

// discoverAMQP is the AMQP URL to count through: the configured one, else
// the management endpoint's host with the port of the broker's own AMQP
// listener (amqps for an https endpoint: the credentials never travel in
// clear where the management API's do not). None when counts over AMQP
// are disabled, when a proxy carries the management API (AMQP would not
// go through it), or when the broker shows the user no such listener.
func (k *counter) discoverAMQP(ctx context.Context) (string, error) {
	switch {
	case k.amqp.disabled:
		return "", nil
	case k.amqp.configured != "":
		return k.amqp.configured, nil
	}
	// New parsed the endpoint already; a proxy that carries the management
	// API, or a proxy setting that fails, means no AMQP.
	management, parseErr := url.Parse(k.management)
	if parseErr != nil {
		return "", nil //nolint:nilerr // no endpoint to count through: counts by statistics
	}
	if proxy, proxyErr := k.proxy(&http.Request{URL: management}); proxyErr != nil || proxy != nil {
		return "", nil //nolint:nilerr // as above
	}
	var raw json.RawMessage
	if err := k.api.get(ctx, apiPath("overview"), url.Values{"columns": {"listeners"}}, &raw); err != nil {
		return "", fmt.Errorf("reading the broker's listeners: %w", err)
	}
	return amqpListenerURL(management, raw), nil
}

// askOverAMQP is the passive declaration's answer for queue, where the
// counter has an AMQP endpoint.
func (k *counter) askOverAMQP(ctx context.Context, vhost, queue string) (leaderAnswer, error) {
	if _, err := k.amqpEndpoint(ctx); err != nil {
		return leaderAnswer{}, err
	}
	answer, err := k.declarePassive(ctx, vhost, queue)
	if err != nil {
		k.logAMQP(ctx, err)
	}
	return answer, err
}

// askOverAMQPIfOpen is askOverAMQP through a connection already open and
// proven; errAMQPNotYetOpen while it is not (its opening begins).
func (k *counter) askOverAMQPIfOpen(ctx context.Context, vhost, queue string) (leaderAnswer, error) {
	endpoint, err := k.amqpEndpoint(ctx)
	if err != nil {
		return leaderAnswer{}, err
	}
	open, err := k.amqp.connectionIfOpen(ctx, vhost, endpoint, k.proveAMQP)
	if err != nil {
		return leaderAnswer{}, err
	}
	return k.declareOn(ctx, open, endpoint, queue)
}
