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

// Reading an exchange's bindings by source costs RabbitMQ 4.x (metadata in
// Khepri) a scan of every binding of the broker, twice per request: its
// binding projection is a hash table, which a partial key cannot use. One
// listing of a vhost's bindings costs the broker about as much as twenty
// such reads, however many exchanges it serves. So the set reads of a
// refresh (ReadOptions.ShareBindings) share one: the first set read of a
// vhost reads by source, as a set read alone does (3N + 7 requests); from
// the second on, they take their bindings from one listing of the vhost,
// which later reads reuse for sharedListingMaxAge. With metadata in Mnesia
// (RabbitMQ 3.x, and 4.x without khepri_db) a read by source visits only
// the source's bindings, and a listing of a busy vhost costs more than the
// reads it saves: there every read is by source.
//
// A read that shares may see the bindings as they were up to that long
// before it began, which a plan can afford: Terraform refreshes the sets one
// by one anyway, none at one instant with another. A listing is never
// reused across a write: Apply, when it begins and when it ends, retires
// the vhost's listing, so what a client changes it reads back as changed.
// Reading bindings after its own writes (a create's or a destroy's read)
// does not share.
//
// An earlier version made every read of a set's exchange wait for a
// listing that began after it asked, so that each was as fresh as a read of
// its own: the listings ran one after another, and a plan of many sets took
// several times as long as with reads by source (the history of this file).

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
