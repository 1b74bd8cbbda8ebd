package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
)

// On Khepri (RabbitMQ 4.x) a read of an exchange's bindings by source scans
// every binding of the broker; one listing of a vhost's bindings costs about
// twenty such reads. So the set reads of a refresh (ShareBindings) share
// one listing from their vhost's second read on, reused for
// sharedListingMaxAge and retired by every Apply, so that a client reads
// its own writes. On Mnesia every read stays by source. DESIGN.md, "Many
// sets in one configuration", has the figures and the history.

// sharedListingMaxAge is how long after a listing of a vhost's bindings
// began the set reads that share it may still use it.
const sharedListingMaxAge = 10 * time.Second

// ReadOptions are the options of a read of a set.
type ReadOptions struct {
	// ShareBindings lets the read take its bindings from a listing of the
	// vhost shared with the client's other set reads that share, up to
	// sharedListingMaxAge old: for a refresh of many sets.
	ShareBindings bool
}

// sharedBindings keeps, by vhost, the listing of its bindings that the set
// reads sharing them use.
type sharedBindings struct {
	mu       sync.Mutex
	now      func() time.Time
	byVHost  map[string]*vhostShare
	scanOnce sync.Once
	scanning bool // reads by source scan every binding of the broker
}

// vhostShare is what sharedBindings knows of one vhost.
type vhostShare struct {
	reads   int             // set reads that asked to share
	writes  int             // Apply calls begun or ended
	listing *bindingListing // the latest, nil before the second read
}

// bindingListing is one listing of a vhost's bindings, by source.
type bindingListing struct {
	done     chan struct{}
	began    time.Time
	writes   int // vhostShare.writes when it began
	bySource map[string][]rabbithole.BindingInfo
	err      error
}

func (s *sharedBindings) vhost(name string) *vhostShare {
	if s.byVHost == nil {
		s.byVHost = map[string]*vhostShare{}
	}
	v := s.byVHost[name]
	if v == nil {
		v = &vhostShare{}
		s.byVHost[name] = v
	}
	return v
}

// wrote records a write to vhost beginning or ending: no read reuses a
// listing that began before.
func (s *sharedBindings) wrote(vhost string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vhost(vhost).writes++
}

// forSetRead returns the listing a set read of vhost takes its bindings
// from, starting one with list when the latest is too old, failed or
// predates a write; nil for the first set read of the vhost, and for every
// one when scans (asked once, at the second) says that reads by source do
// not scan the broker's bindings: those read by source.
func (s *sharedBindings) forSetRead(ctx context.Context, vhost string, scans func(context.Context) bool,
	list func(context.Context) (map[string][]rabbithole.BindingInfo, error),
) *bindingListing {
	s.mu.Lock()
	v := s.vhost(vhost)
	v.reads++
	first := v.reads == 1
	s.mu.Unlock()
	if first {
		return nil
	}
	s.scanOnce.Do(func() { s.scanning = scans(ctx) })
	if !s.scanning {
		return nil
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	if l := v.listing; l != nil && l.writes == v.writes && now().Sub(l.began) < sharedListingMaxAge && !l.failed() {
		return l
	}
	l := &bindingListing{done: make(chan struct{}), began: now(), writes: v.writes}
	v.listing = l
	// The listing serves every read that takes it, so it outlives the
	// cancellation of the one that started it; the client's timeout bounds it.
	ctx = context.WithoutCancel(ctx)
	go func() {
		l.bySource, l.err = list(ctx)
		close(l.done)
	}()
	return l
}

// failed tells whether the listing is done and failed.
func (l *bindingListing) failed() bool {
	select {
	case <-l.done:
		return l.err != nil
	default:
		return false
	}
}

// bindings returns the bindings whose source is the exchange name, once
// the listing is done.
func (l *bindingListing) bindings(ctx context.Context, name string) ([]rabbithole.BindingInfo, error) {
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if l.err != nil {
		return nil, l.err
	}
	return l.bySource[name], nil
}

// bindingColumns are the fields of a binding that a read uses.
var bindingColumns = url.Values{"columns": {"source,vhost,destination,destination_type,routing_key,arguments,properties_key"}}

// vhostBindingsBySource lists every binding of vhost in one request, by
// source.
func (c *Client) vhostBindingsBySource(ctx context.Context, vhost string) (map[string][]rabbithole.BindingInfo, error) {
	var bindings []rabbithole.BindingInfo
	if err := c.call(ctx, http.MethodGet, apiPath("bindings", vhost), bindingColumns, nil, &bindings); err != nil {
		return nil, fmt.Errorf("listing the bindings of vhost %q: %w", vhost, err)
	}
	bySource := map[string][]rabbithole.BindingInfo{}
	for _, b := range bindings {
		bySource[b.Source] = append(bySource[b.Source], b)
	}
	return bySource, nil
}

// readsBySourceScan tells whether the broker keeps its metadata in Khepri,
// where a read of bindings by source scans every binding; false when it
// cannot tell.
func (c *Client) readsBySourceScan(ctx context.Context) bool {
	return c.MetadataStore(ctx) == "Khepri"
}
