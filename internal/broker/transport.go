package broker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// countingTransport counts every request sent: the client's total, and the
// count of the operation whose context carries an *atomic.Int64. It sends a
// change again when the connection closed unanswered (each change leaves
// the broker the same made once or twice), keeps connections alive though
// rabbit-hole asks to close them, and remembers the reason of the last 401,
// which rabbit-hole drops.
type countingTransport struct {
	next       http.RoundTripper
	total      atomic.Int64
	authReason atomic.Pointer[string]
}

type operationRequestsKey struct{}

// maxErrorBody bounds how much of a 401 answer the transport reads.
const maxErrorBody = 4096

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	change := isChange(req) && !sentOnce(req.Context())
	if req.Close || change {
		req = req.Clone(req.Context()) // a RoundTripper must not change the caller's request
		req.Close = false
	}
	if change {
		// Lets net/http send it again when a kept-alive connection turns out
		// closed after the request went out (a key without a value is not sent).
		req.Header["Idempotency-Key"] = nil
	}
	resp, err := t.send(req)
	for attempt := 2; change && attempt <= changeAttempts && closedUnanswered(req, err); attempt++ {
		body, rewindErr := rewind(req)
		if rewindErr != nil {
			break // err stays the closed connection's
		}
		req.Body = body
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(time.Duration(attempt-1) * resendPause):
		}
		resp, err = t.send(req)
	}
	if err != nil {
		return resp, err
	}
	if err := refuseRedirectAnswer(req, resp); err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{body: resp.Body, left: MaxAnswerBytes}
	if resp.StatusCode != http.StatusUnauthorized {
		return resp, nil
	}
	answer, readErr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if readErr != nil {
		return nil, readErr
	}
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	_, reason := errorReply(answer)
	t.authReason.Store(&reason)
	return resp, nil
}

// MaxAnswerBytes is the most the client reads of one answer's body: many
// times the listing of a vhost that holds thousands of sets' objects. A
// longer answer fails the request with ErrAnswerTooLarge.
const MaxAnswerBytes = 64 << 20

// ErrAnswerTooLarge is returned, wrapped, when an answer's body is longer
// than MaxAnswerBytes.
var ErrAnswerTooLarge = fmt.Errorf("the management API's answer is longer than %d MiB, the most the provider reads; "+
	"a vhost this large needs a larger limit (please report it)", MaxAnswerBytes>>20)

// cappedBody reads an answer's body up to left bytes, then fails with
// ErrAnswerTooLarge.
type cappedBody struct {
	body io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrAnswerTooLarge
	}
	// One byte past the cap tells a body of exactly the cap from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - 1, ErrAnswerTooLarge
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.body.Close() }

// RedirectError is the management API, or something in front of it,
// answering with a redirect, which the client never follows: net/http
// would send the credentials again to where it points, in clear if that
// is http://.
type RedirectError struct {
	StatusCode int
	Location   string // redacted
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the management API answered %d %s, a redirect to %s, which the provider does not follow "+
		"(it would send the credentials there): set endpoint to the URL the API is served at", e.StatusCode,
		http.StatusText(e.StatusCode), e.Location)
}

// refuseRedirectAnswer returns a *RedirectError for an answer that
// redirects, after closing its body; nil for any other answer.
func refuseRedirectAnswer(req *http.Request, resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil
	}
	_ = closeAnswer(resp, nil)
	location := resp.Header.Get("Location")
	if u, err := req.URL.Parse(location); err == nil {
		location = u.String()
	}
	return &RedirectError{StatusCode: resp.StatusCode, Location: RedactURL(location)}
}

// refuseRedirect is the CheckRedirect of the client's own http.Client.
func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return &RedirectError{StatusCode: req.Response.StatusCode, Location: RedactURL(req.URL.String())}
}

// send sends req once, and counts it.
func (t *countingTransport) send(req *http.Request) (*http.Response, error) {
	t.total.Add(1)
	if count, ok := req.Context().Value(operationRequestsKey{}).(*atomic.Int64); ok {
		count.Add(1)
	}
	return t.next.RoundTrip(req)
}

// A change whose connection closed unanswered is sent up to changeAttempts
// times in all, resendPause × (attempt − 1) apart. net/http itself resends it
// at once on a new connection when a kept-alive one was closed; these
// attempts cover a new connection closed too, as by a listener that restarts.
const (
	changeAttempts = 3
	resendPause    = 100 * time.Millisecond
)

type sendOnceKey struct{}

// sendOnce marks a request's context: the transport must not send it again,
// whatever happened to its connection (deleteCheckedQueue).
func sendOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, sendOnceKey{}, true)
}

func sentOnce(ctx context.Context) bool { once, _ := ctx.Value(sendOnceKey{}).(bool); return once }

// isChange tells the requests that declare or delete an object or binding.
// Each leaves the broker as one would: a declaration of what exists is a
// no-op, a deletion of what is gone a 404 that Apply takes for success.
// Reads need no help (net/http resends them itself) and a peek is not
// resent: it is not a change, and a second one is a second delivery on
// some brokers.
func isChange(req *http.Request) bool {
	switch req.Method {
	case http.MethodPut, http.MethodDelete:
		return true
	case http.MethodPost:
		return strings.Contains(req.URL.Path, "/api/bindings/")
	}
	return false
}

// closedUnanswered tells whether err is a connection closed before any
// answer, for a request that may be sent again: not a refused connection, a
// timeout or the caller's cancellation.
func closedUnanswered(req *http.Request, err error) bool {
	if err == nil || req.Context().Err() != nil {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// rewind returns a new copy of req's body, for sending it again.
func rewind(req *http.Request) (io.ReadCloser, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req.Body, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("the request's body cannot be read again")
	}
	return req.GetBody()
}

// lastAuthReason is the broker's reason for the last 401, if any.
func (t *countingTransport) lastAuthReason() string {
	if reason := t.authReason.Load(); reason != nil {
		return *reason
	}
	return ""
}
