package broker_test

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
)

// TestRedirectRefused has an https management API answer every request with
// 302 to an http:// listener: neither the client's own requests (VHosts)
// nor rabbit-hole's (VHostExists) follow it, so the http:// listener never
// sees the credentials, and the error says why.
func TestRedirectRefused(t *testing.T) {
	t.Parallel()
	var reachedPlain atomic.Int64
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reachedPlain.Add(1)
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(secure.Close)
	client, err := broker.New(broker.Config{Endpoint: secure.URL, Username: "alice", Password: "s3cret-redirected", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"the client's own request": func() error { _, err := client.VHosts(t.Context()); return err },
		"rabbit-hole's request":    func() error { _, err := client.VHostExists(t.Context(), "/"); return err },
	}
	for name, call := range calls {
		err := call()
		var redirect *broker.RedirectError
		if !errors.As(err, &redirect) || redirect.StatusCode != http.StatusFound || !strings.HasPrefix(redirect.Location, plain.URL) {
			t.Errorf("%s: error = %v, want a *broker.RedirectError 302 to %s", name, err, plain.URL)
		}
		if err != nil && !strings.Contains(err.Error(), "does not follow") {
			t.Errorf("%s: error %q does not say the redirect is not followed", name, err)
		}
	}
	if n := reachedPlain.Load(); n != 0 {
		t.Errorf("the http:// listener got %d requests: a redirect was followed", n)
	}
}

// TestTLSMinimumVersion has a management API that speaks TLS 1.1 at most:
// the client refuses the handshake.
func TestTLSMinimumVersion(t *testing.T) {
	t.Parallel()
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`[]`))
	}))
	server.TLS = &tls.Config{MaxVersion: tls.VersionTLS11}
	server.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	server.StartTLS()
	t.Cleanup(server.Close)
	client, err := broker.New(broker.Config{Endpoint: server.URL, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.VHosts(t.Context())
	var unreachable *broker.UnreachableError
	if !errors.As(err, &unreachable) || !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("error = %v, want an *UnreachableError of the TLS version", err)
	}
}

// TestAnswerTooLarge has the management API answer a listing one byte
// longer than MaxAnswerBytes, and one exactly that long: the first fails
// with ErrAnswerTooLarge, through either client; the second is read whole.
func TestAnswerTooLarge(t *testing.T) {
	t.Parallel()
	answer := func(size int) []byte {
		// A listing of one vhost whose name pads it to size bytes.
		return []byte(`[{"name":"` + strings.Repeat("v", size-13) + `"}]`)
	}
	var size atomic.Int64
	client := brokertest.NewClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer(int(size.Load())))
	}), broker.Config{})
	size.Store(broker.MaxAnswerBytes + 1)
	if _, err := client.VHosts(t.Context()); !errors.Is(err, broker.ErrAnswerTooLarge) {
		t.Errorf("VHosts of %d bytes: error = %v, want ErrAnswerTooLarge", size.Load(), err)
	}
	if _, err := client.VHostExists(t.Context(), "/"); err == nil || !strings.Contains(err.Error(), "longer than 64 MiB") {
		t.Errorf("VHostExists (rabbit-hole) of %d bytes: error = %v, want the answer's cap", size.Load(), err)
	}
	size.Store(broker.MaxAnswerBytes)
	if _, err := client.VHosts(t.Context()); err != nil {
		t.Errorf("VHosts of exactly %d bytes: %v", size.Load(), err)
	}
}
