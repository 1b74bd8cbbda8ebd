package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The deletion of a queue that must lose no message: the one place that
// changes a queue's bindings to check it, and gives them back.

// queueDeletion deletes one queue only if it holds nothing. The bindings it
// removes so that the queue takes no more messages while it is counted are
// recorded before each removal is sent, and declared again on every outcome
// but the queue's deletion, on a deadline of their own.
type queueDeletion struct {
	c     *Client
	vhost string
	queue topology.Queue

	// unguarded: the broker refused if-empty and if-unused for the queue,
	// which it does for quorum queues.
	unguarded bool

	mu      sync.Mutex
	stopped bool
	removed []rabbithole.BindingInfo
	deleted bool // or found gone: nothing to give back
}

// deleteQueue deletes a queue, with whatever it holds when force is set.
// Otherwise a classic queue goes with the broker's own guard (if-empty and
// if-unused, exact and atomic); one in use, and a quorum queue (which
// refuses both flags), only after its count finds it empty (checkThenDelete).
// A 404 is success: the queue is gone.
func (c *Client) deleteQueue(ctx context.Context, vhost string, queue topology.Queue, force bool) error {
	if force {
		return c.deleteQueueRequest(ctx, vhost, queue, nil)
	}
	d := &queueDeletion{c: c, vhost: vhost, queue: queue}
	return d.run(ctx)
}

func (d *queueDeletion) run(ctx context.Context) (err error) {
	defer func() {
		if !d.isDeleted() {
			err = errors.Join(err, d.restore(ctx))
		}
	}()
	if d.isQuorum() && d.c.refusesIfEmptyForQuorum() {
		d.unguarded = true
		return d.checkThenDelete(ctx)
	}
	guarded := []rabbithole.QueueDeleteOptions{{IfEmpty: true, IfUnused: true}}
	err = d.c.deleteQueueRequest(ctx, d.vhost, d.queue, guarded)
	var apiErr *APIError
	switch {
	case err == nil:
		d.markDeleted()
		return nil
	case !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest:
		return err
	case strings.Contains(apiErr.Reason, "not empty"):
		return d.notEmpty(ctx)
	case strings.Contains(apiErr.Reason, "flag set are not supported"):
		d.unguarded = true
		return d.checkThenDelete(ctx)
	case strings.Contains(apiErr.Reason, "in use"):
		// Its consumers may hold messages that the queue's length leaves out.
		return d.checkThenDelete(ctx)
	}
	return err
}

// notEmpty is the broker's refusal of a queue that is not empty; its
// statistics only decorate it.
func (d *queueDeletion) notEmpty(ctx context.Context) error {
	messages, _, err := d.c.counter.statistics(ctx, d.vhost, d.queue.Name)
	if err != nil && !isNotFound(err) {
		return errors.Join(&QueueNotEmptyError{Queue: d.queue.Name}, fmt.Errorf("counting its messages: %w", err))
	}
	return &QueueNotEmptyError{Queue: d.queue.Name, Messages: messages}
}

// checkThenDelete deletes the queue once its count, exact at this moment,
// finds it empty (see queueHeld), a quorum queue's count beginning among
// the few that may run ahead of its deletion turn (quorumCheckAhead),
// unless its check mostly waits for arrivals to settle; a queue it cannot
// count is refused
// (*UncountedError), as one that holds messages is (*QueueNotEmptyError).
func (d *queueDeletion) checkThenDelete(ctx context.Context) error {
	name := d.queue.Name
	if d.isQuorum() && !d.c.counter.checksWaitForArrivals() {
		release, err := d.c.quorumCheckAhead(ctx, d.vhost)
		if err != nil {
			return err
		}
		defer release()
	}
	held, err := d.c.counter.count(ctx, d.vhost, []string{name}, countForDeletion, d.stopArrivals)
	var uncounted *UncountedError
	switch {
	case IsUncounted(err) && errors.As(err, &uncounted):
		return uncounted
	case err != nil:
		return fmt.Errorf("the queue may be deleted only once counted empty, and checking it for messages failed: %w", err)
	}
	messages, exists := held[name]
	switch {
	case !exists:
		d.markDeleted() // gone already
		return nil
	case messages > 0:
		return &QueueNotEmptyError{Queue: name, Messages: messages}
	}
	return d.deleteChecked(ctx)
}

// deleteChecked sends the deletion of a queue its count found empty, once:
// a resend would come 100 ms and more after the check, and widen the window
// in which a message reaching the queue is lost with it. A classic queue
// keeps the broker's if-empty guard. A quorum queue waits its turn
// (quorumDeletionTurn), and where the client can ask the queue's leader it asks
// once more in its turn, so that the window is that answer's and the
// deletion's round trips, not the wait.
func (d *queueDeletion) deleteChecked(ctx context.Context) error {
	name := d.queue.Name
	checked := time.Now()
	query := url.Values{"if-empty": {"true"}}
	if d.unguarded {
		query = nil
	}
	if d.isQuorum() {
		release, err := d.c.quorumDeletionTurn(ctx, d.vhost)
		if err != nil {
			return err
		}
		defer release()
		if held, err := d.c.counter.count(ctx, d.vhost, []string{name}, leaderAgain, nil); err == nil {
			if held[name] > 0 {
				return &QueueNotEmptyError{Queue: name, Messages: held[name]}
			}
			checked = time.Now()
		}
	}
	err := d.c.call(sendOnce(ctx), http.MethodDelete, apiPath("queues", d.vhost, name), query, nil, nil)
	if d.c.logf != nil {
		// The window in which a message reaching the queue would be lost: at
		// most from the check's last answer to the deletion's.
		d.c.logf(ctx, "deleted a queue its check found empty", map[string]any{
			"queue": name, "type": string(d.queue.Arguments.QueueType), "window_ms": float64(time.Since(checked).Microseconds()) / 1000,
		})
	}
	var apiErr *APIError
	switch {
	case err == nil || isGone(err):
		d.markDeleted()
		return nil
	case errors.As(err, &apiErr) && strings.Contains(apiErr.Reason, "not empty"):
		return d.notEmpty(ctx)
	}
	return err
}

// stopArrivals is the deletion's arrivalsStopper: it deletes the bindings
// into the queue (not the default exchange's, which none can delete), each
// recorded before its DELETE is sent. Apply has deleted them already, but
// for a queue it replaces: topology.Diff lets that queue's deletion drop
// them. Meanwhile messages go where their exchange sends what it cannot
// route (a set's exchanges: its parking lot).
func (d *queueDeletion) stopArrivals(ctx context.Context) (stoppedAny bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return len(d.removed) > 0, nil
	}
	var bindings []rabbithole.BindingInfo
	err = d.c.viaRabbitHole(ctx, http.MethodGet, apiPath("queues", d.vhost, d.queue.Name, "bindings"), func() (err error) {
		bindings, err = d.c.rabbit.ListQueueBindings(d.vhost, d.queue.Name)
		return err
	})
	if err != nil && !isNotFound(err) {
		return false, fmt.Errorf("listing the bindings into queue %q of vhost %q: %w", d.queue.Name, d.vhost, err)
	}
	for _, b := range bindings {
		if b.Source == "" {
			continue
		}
		d.removed = append(d.removed, b)
		into := topology.Binding{Source: b.Source, Destination: d.queue.Name, DestinationType: topology.DestinationQueue}
		if err := d.c.deleteBindingByKeys(ctx, d.vhost, into, []string{b.PropertiesKey}); err != nil && !isGone(err) {
			return false, fmt.Errorf("deleting the bindings into queue %q of vhost %q: %w", d.queue.Name, d.vhost, err)
		}
	}
	d.stopped = true
	return len(d.removed) > 0, nil
}

// restoreTimeout bounds the restoring of what a check removed: long enough
// for a few declarations, short enough for a user who pressed Ctrl-C.
const restoreTimeout = 15 * time.Second

// restore declares again the bindings stopArrivals removed, on a deadline of
// its own whatever became of ctx: work that undoes a step must not end with
// the step's cancellation. A 404 (the queue or its source gone) needs none.
func (d *queueDeletion) restore(ctx context.Context) error {
	d.mu.Lock()
	removed := d.removed
	d.mu.Unlock()
	if len(removed) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	var errs []error
	for _, b := range removed {
		path := bindingPath(d.vhost, topology.Binding{Source: b.Source, Destination: b.Destination, DestinationType: topology.DestinationQueue})
		err := d.c.viaRabbitHole(ctx, http.MethodPost, path, func() error {
			return closeAnswer(d.c.rabbit.DeclareBinding(d.vhost, b))
		})
		if err != nil && !isNotFound(err) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("declaring again the bindings the check deleted: %w", err)
	}
	return nil
}

func (d *queueDeletion) isQuorum() bool {
	return d.queue.Arguments.QueueType == topology.QueueTypeQuorum || d.unguarded
}

func (d *queueDeletion) markDeleted() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleted = true
}

func (d *queueDeletion) isDeleted() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deleted
}

// refusesIfEmptyForQuorum tells whether the client's broker, as its first
// check learned it, is a 3.x or 4.x, whose quorum queues refuse if-empty:
// the attempt would only take a turn of the one-at-a-time deletions.
func (c *Client) refusesIfEmptyForQuorum() bool {
	version, known := c.counter.learnedVersion()
	major, _, ok := parseVersion(version)
	return known && ok && (major == 3 || major == 4)
}

// deleteQueueRequest sends the deletion of queue, in its turn for a quorum
// queue (quorumDeletionTurn): only the request waits, not the checks before it.
func (c *Client) deleteQueueRequest(ctx context.Context, vhost string, queue topology.Queue, options []rabbithole.QueueDeleteOptions) error {
	if queue.Arguments.QueueType == topology.QueueTypeQuorum {
		release, err := c.quorumDeletionTurn(ctx, vhost)
		if err != nil {
			return err
		}
		defer release()
	}
	return c.viaRabbitHole(ctx, http.MethodDelete, apiPath("queues", vhost, queue.Name), func() error {
		return closeAnswer(c.rabbit.DeleteQueue(vhost, queue.Name, options...))
	})
}

// isGone tells whether err is a 404 for the object itself, not for its vhost.
func isGone(err error) bool {
	return isNotFound(err) && !errors.Is(err, ErrVHostNotFound)
}
