package broker

import (
	"context"
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

// Listing whole vhosts, for finding every delay set they hold
// (topology.Discover): one request per kind of object and vhost, however
// many sets and other objects the vhost holds.

// ErrVHostNotReadable is returned, wrapped, when the broker refuses the
// user a vhost that exists: one it has no permissions in. Test for it
// with errors.Is.
var ErrVHostNotReadable = errors.New("the user may not read the vhost")

// vhostRefused tells whether err is the broker refusing the user a vhost
// that exists. RabbitMQ 4.3 answers a user without permissions in the vhost
// 404 "not_found" (and "Object Not Found" for a vhost that does not exist);
// RabbitMQ 3.x 401 "User not authorised to access virtual host"; a refused
// permission is 401 "Access refused." or 403.
func vhostRefused(err error) bool {
	var api *APIError
	var auth *AuthError
	return IsAccessRefused(err) ||
		errors.As(err, &api) && api.StatusCode == http.StatusNotFound && api.Code == "not_found" ||
		errors.As(err, &auth) && strings.Contains(auth.Reason, "not authorised to access virtual host")
}

// The fields of exchanges and queues that a listing of a vhost asks for:
// what exchangeFromInfo and queueFromInfo read, and no statistics.
var (
	vhostExchangeColumns = url.Values{"disable_stats": {"true"}, "columns": {"name,type,durable,auto_delete,internal,arguments"}}
	vhostQueueColumns    = url.Values{"disable_stats": {"true"}, "columns": {"name,type,durable,auto_delete,exclusive,arguments"}}
)

// VHosts lists the names of the vhosts the user sees, in one request
// (GET /api/vhosts): every vhost for an administrator or a monitoring
// user, those it has permissions in for any other.
func (c *Client) VHosts(ctx context.Context) (_ []string, err error) {
	ctx, report := c.observe(ctx, "list vhosts", map[string]any{})
	defer func() { report(err) }()
	var vhosts []struct {
		Name string `json:"name"`
	}
	if err := c.call(ctx, http.MethodGet, apiPath("vhosts"), url.Values{"columns": {"name"}}, nil, &vhosts); err != nil {
		return nil, fmt.Errorf("listing the vhosts: %w", err)
	}
	names := make([]string, len(vhosts))
	for i, v := range vhosts {
		names[i] = v.Name
	}
	slices.Sort(names)
	return names, nil
}

// ListVHost reads every exchange, queue and binding of vhost, in three
// requests made at once (GET /api/exchanges/{vhost}, /api/queues/{vhost}
// and /api/bindings/{vhost}), sorted as ReadSet sorts a set's. The default
// exchange's implicit bindings are left out. A vhost that does not exist is
// ErrVHostNotFound; one the user may not read, ErrVHostNotReadable. Unlike a read of a set, it remembers neither placements nor
// binding keys: it changes nothing a later read of a set relies on.
func (c *Client) ListVHost(ctx context.Context, vhost string) (_ topology.Topology, err error) {
	ctx, report := c.observe(ctx, "list vhost", map[string]any{"vhost": vhost})
	defer func() { report(err) }()
	var (
		exchanges []rabbithole.ExchangeInfo
		queues    []rabbithole.QueueInfo
		bindings  []rabbithole.BindingInfo
		errs      [3]error
		wg        sync.WaitGroup
	)
	wg.Go(func() {
		errs[0] = c.call(ctx, http.MethodGet, apiPath("exchanges", vhost), vhostExchangeColumns, nil, &exchanges)
	})
	wg.Go(func() {
		errs[1] = c.call(ctx, http.MethodGet, apiPath("queues", vhost), vhostQueueColumns, nil, &queues)
	})
	wg.Go(func() {
		errs[2] = c.call(ctx, http.MethodGet, apiPath("bindings", vhost), bindingColumns, nil, &bindings)
	})
	wg.Wait()
	for i, kind := range []string{"exchanges", "queues", "bindings"} {
		switch {
		case vhostRefused(errs[i]):
			return topology.Topology{}, fmt.Errorf("listing %s: %w: %q (%v)", kind, ErrVHostNotReadable, vhost, errs[i])
		case isNotFound(errs[i]):
			return topology.Topology{}, fmt.Errorf("listing %s: %w: %q", kind, ErrVHostNotFound, vhost)
		case errs[i] != nil:
			return topology.Topology{}, fmt.Errorf("listing the %s of vhost %q: %w", kind, vhost, errs[i])
		}
	}
	return listed(vhost, exchanges, queues, bindings), nil
}

// listed is the topology of a vhost's listings.
func listed(vhost string, exchanges []rabbithole.ExchangeInfo, queues []rabbithole.QueueInfo, bindings []rabbithole.BindingInfo) topology.Topology {
	t := topology.Topology{VHost: vhost}
	for _, e := range exchanges {
		t.Exchanges = append(t.Exchanges, exchangeFromInfo(e))
	}
	for _, q := range queues {
		t.Queues = append(t.Queues, queueFromInfo(q))
	}
	for _, b := range bindings {
		if b.Source != "" { // the default exchange's implicit bindings are no one's
			t.Bindings = append(t.Bindings, bindingFromInfo(b))
		}
	}
	slices.SortFunc(t.Bindings, topology.CompareBindings)
	return t
}
