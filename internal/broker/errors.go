package broker

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// ErrVHostNotFound is returned, wrapped, when the virtual host of a read or a
// change does not exist on the broker. Test for it with errors.Is.
var ErrVHostNotFound = errors.New("virtual host not found")

// UnreachableError is a request that got no HTTP answer at all: the
// connection was refused, timed out, or failed its TLS handshake.
type UnreachableError struct {
	Endpoint string
	Err      error
}

func (e *UnreachableError) Error() string {
	return "cannot reach the RabbitMQ management API at " + e.Endpoint + ": " + e.Err.Error()
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// AuthError is the management API refusing the credentials (401).
type AuthError struct {
	Endpoint string
	Username string
	// Reason is the broker's own explanation, e.g. "Login failed" or "Not management user".
	Reason string
}

func (e *AuthError) Error() string {
	advice := "check the username and password, and that the user has the management tag"
	if e.AccessRefused() {
		advice = "the user logged in but lacks a permission this request needs in the vhost"
	}
	return fmt.Sprintf("the RabbitMQ management API at %s refused user %q (401 Unauthorized: %s): %s",
		e.Endpoint, e.Username, e.Reason, advice)
}

// AccessRefused tells a refused permission from refused credentials:
// RabbitMQ answers both with 401, the first with the reason "Access
// refused." after a good login.
func (e *AuthError) AccessRefused() bool { return strings.HasPrefix(e.Reason, "Access refused") }

// IsAccessRefused tells whether err is the broker refusing a permission the
// user lacks, after a good login: a 401 "Access refused." (RabbitMQ 3.10),
// or a 403.
func IsAccessRefused(err error) bool {
	var auth *AuthError
	var api *APIError
	return errors.As(err, &auth) && auth.AccessRefused() ||
		errors.As(err, &api) && api.StatusCode == http.StatusForbidden
}

// APIError is any other answer of the management API with status 400 or
// above. Code and Reason are the "error" and "reason" fields of its body.
type APIError struct {
	Method     string
	Path       string // the request's path, escaped as sent, without the query
	StatusCode int
	Code       string
	Reason     string
}

func (e *APIError) Error() string {
	status := strconv.Itoa(e.StatusCode)
	if text := http.StatusText(e.StatusCode); text != "" {
		status += " " + text
	}
	detail := e.Code
	if e.Reason != "" && e.Reason != e.Code {
		detail += ": " + e.Reason
	}
	return fmt.Sprintf("the management API answered %s %s with %s (%s)", e.Method, e.Path, status, detail)
}

// Is makes errors.Is(err, ErrVHostNotFound) hold for the broker's answer to
// a declaration in a virtual host that does not exist.
func (e *APIError) Is(target error) bool {
	return target == ErrVHostNotFound && e.StatusCode == http.StatusNotFound && e.Reason == "vhost_not_found"
}

// QueueNotEmptyError is Apply refusing to delete a queue that holds
// messages, unless told to force: for a classic queue the broker's if-empty
// guard refused, for a quorum queue the management statistics or a peek at
// its head found a message.
type QueueNotEmptyError struct {
	Queue string
	// Messages is the largest count known. For a classic queue, the
	// management statistics right after the refusal: sampled every few
	// seconds, they may lag and even read 0, while the refusal itself is the
	// broker's exact word. For a quorum queue, at least 1: the larger of the
	// statistics' count and the ready messages the peek saw.
	Messages int64
}

func (e *QueueNotEmptyError) Error() string {
	if e.Messages > 0 {
		return fmt.Sprintf("queue %q is not empty (%d messages), so the broker did not delete it", e.Queue, e.Messages)
	}
	return fmt.Sprintf("queue %q is not empty, so the broker did not delete it", e.Queue)
}

// UncountedError is a queue whose messages the client cannot count
// exactly: a peek would count as a delivery and the statistics cannot be
// trusted (checkRule), its check was cut short, or only statistics that lag
// count its messages (Messages > 0). Reason says why, and what to do. A
// deletion refuses such a queue, as one that holds messages; HeldMessages
// and CountedMessages count it as holding at least one message and return
// this error beside their counts (see IsUncounted).
type UncountedError struct {
	VHost, Queue string
	// Version is the broker's RabbitMQ version.
	Version string
	Reason  string
	// Messages is what lagging statistics alone count in the queue: they
	// may have left it since. 0 when nothing counted them.
	Messages int64
}

func (e *UncountedError) Error() string {
	// How to delete it anyway is the caller's to say, once for all queues.
	if e.Messages > 0 {
		return fmt.Sprintf("queue %q of vhost %q may hold %d message(s): %s, and they may have left since; try again",
			e.Queue, e.VHost, e.Messages, e.Reason)
	}
	return fmt.Sprintf("cannot tell whether queue %q of vhost %q holds messages: %s", e.Queue, e.VHost, e.Reason)
}

// IsUncounted tells whether err is only *UncountedError: counts returned
// with it are whole, each uncounted queue counted as holding one message.
func IsUncounted(err error) bool {
	return err != nil && len(Uncounted(err)) == len(joinedErrors(err))
}

// Uncounted is the *UncountedError of each queue that err, as
// HeldMessages returns it, names.
func Uncounted(err error) map[string]*UncountedError {
	found := map[string]*UncountedError{}
	for _, e := range joinedErrors(err) {
		var uncounted *UncountedError
		if errors.As(e, &uncounted) {
			found[uncounted.Queue] = uncounted
		}
	}
	return found
}

// joinedErrors is the errors that errors.Join joined into err, or err alone.
func joinedErrors(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// ChangeError is one change of Apply that failed.
type ChangeError struct {
	Change topology.Change
	Err    error
}

func (e *ChangeError) Error() string { return DescribeChange(e.Change) + ": " + e.Err.Error() }

func (e *ChangeError) Unwrap() error { return e.Err }

// DescribeChange names what a change does and to which object, for errors
// and logs.
func DescribeChange(c topology.Change) string {
	verb := map[topology.ChangeKind]string{
		topology.CreateExchange: "creating", topology.CreateQueue: "creating", topology.CreateBinding: "creating",
		topology.DeleteBinding: "deleting", topology.DeleteQueue: "deleting", topology.DeleteExchange: "deleting",
	}[c.Kind]
	if verb == "" {
		verb = string(c.Kind)
	}
	switch {
	case c.Exchange != nil:
		return fmt.Sprintf("%s exchange %q", verb, c.Exchange.Name)
	case c.Queue != nil:
		return fmt.Sprintf("%s queue %q", verb, c.Queue.Name)
	case c.Binding != nil:
		b := c.Binding
		return fmt.Sprintf("%s binding from exchange %q to %s %q with routing key %q",
			verb, b.Source, b.DestinationType.OrQueue(), b.Destination, b.RoutingKey)
	}
	return verb + " (no object)"
}
