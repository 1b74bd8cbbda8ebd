package broker_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker/brokertest"
)

// writePEMFiles writes a self-signed certificate and its key, and a file of
// junk, and returns their paths.
func writePEMFiles(t *testing.T) (certFile, keyFile, junkFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, junkFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "junk.pem")
	for path, content := range map[string][]byte{
		certFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyFile:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		junkFile: []byte("not a certificate\n"),
	} {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile, junkFile
}

func TestNew(t *testing.T) {
	t.Parallel()
	certFile, keyFile, junkFile := writePEMFiles(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	tests := map[string]struct {
		config       broker.Config
		wantErr      string // substring; "" means success
		wantEndpoint string
	}{
		"plain":                {config: broker.Config{Endpoint: "http://127.0.0.1:15672"}, wantEndpoint: "http://127.0.0.1:15672"},
		"trailing slash":       {config: broker.Config{Endpoint: "https://rabbit.example:15671/"}, wantEndpoint: "https://rabbit.example:15671"},
		"path prefix":          {config: broker.Config{Endpoint: "https://proxy.example/rabbitmq/"}, wantEndpoint: "https://proxy.example/rabbitmq"},
		"empty endpoint":       {config: broker.Config{}, wantErr: "endpoint is empty"},
		"no scheme":            {config: broker.Config{Endpoint: "127.0.0.1:15672"}, wantErr: "invalid management API endpoint"},
		"wrong scheme":         {config: broker.Config{Endpoint: "amqp://127.0.0.1:5672"}, wantErr: "scheme must be http or https"},
		"no host":              {config: broker.Config{Endpoint: "http://"}, wantErr: "names no host"},
		"unparsable":           {config: broker.Config{Endpoint: "http://[::1"}, wantErr: "invalid management API endpoint"},
		"credentials in URL":   {config: broker.Config{Endpoint: "http://guest:secret@127.0.0.1:15672"}, wantErr: "not in the URL"},
		"query":                {config: broker.Config{Endpoint: "http://127.0.0.1:15672?x=1"}, wantErr: "no query"},
		"CA file":              {config: broker.Config{Endpoint: "https://h", CACertFile: certFile}, wantEndpoint: "https://h"},
		"missing CA file":      {config: broker.Config{Endpoint: "https://h", CACertFile: missing}, wantErr: "reading the CA certificate file"},
		"CA file not PEM":      {config: broker.Config{Endpoint: "https://h", CACertFile: junkFile}, wantErr: "holds no PEM certificate"},
		"client pair":          {config: broker.Config{Endpoint: "https://h", ClientCertFile: certFile, ClientKeyFile: keyFile}, wantEndpoint: "https://h"},
		"client cert, no key":  {config: broker.Config{Endpoint: "https://h", ClientCertFile: certFile}, wantErr: "needs its key file"},
		"client key, no cert":  {config: broker.Config{Endpoint: "https://h", ClientKeyFile: keyFile}, wantErr: "needs its certificate file"},
		"client key not PEM":   {config: broker.Config{Endpoint: "https://h", ClientCertFile: certFile, ClientKeyFile: junkFile}, wantErr: "loading the client certificate"},
		"client cert missing":  {config: broker.Config{Endpoint: "https://h", ClientCertFile: missing, ClientKeyFile: keyFile}, wantErr: "loading the client certificate"},
		"proxy":                {config: broker.Config{Endpoint: "http://h", Proxy: "http://proxy.example:3128"}, wantEndpoint: "http://h"},
		"socks proxy":          {config: broker.Config{Endpoint: "http://h", Proxy: "socks5://proxy.example:1080"}, wantEndpoint: "http://h"},
		"proxy wrong scheme":   {config: broker.Config{Endpoint: "http://h", Proxy: "ftp://proxy.example"}, wantErr: "invalid proxy URL"},
		"proxy without host":   {config: broker.Config{Endpoint: "http://h", Proxy: "http://"}, wantErr: "names no host"},
		"proxy unparsable":     {config: broker.Config{Endpoint: "http://h", Proxy: "http://u:secret@[::1"}, wantErr: "invalid proxy URL"},
		"insecure, no CA file": {config: broker.Config{Endpoint: "https://h", Insecure: true}, wantEndpoint: "https://h"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, err := broker.New(tt.config)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New() error = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("New() error %q shows the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			if got := client.Endpoint(); got != tt.wantEndpoint {
				t.Errorf("Endpoint() = %q, want %q", got, tt.wantEndpoint)
			}
			if got := client.Requests(); got != 0 {
				t.Errorf("Requests() = %d after New, want 0: New must not touch the network", got)
			}
		})
	}
}

// TestProxy checks that requests go through the configured proxy: the
// endpoint's host does not even resolve, only the proxy can answer.
func TestProxy(t *testing.T) {
	t.Parallel()
	var sawHost string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawHost = r.Host
		_, _ = w.Write([]byte(`{"name":"/"}`))
	}))
	defer proxy.Close()
	client, err := broker.New(broker.Config{Endpoint: "http://rabbit.invalid:15672", Proxy: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	exists, err := client.VHostExists(t.Context(), "/")
	if err != nil || !exists {
		t.Fatalf("VHostExists() = %v, %v; want true, nil through the proxy", exists, err)
	}
	if sawHost != "rabbit.invalid:15672" {
		t.Errorf("the proxy saw host %q, want rabbit.invalid:15672", sawHost)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	client, err := broker.New(broker.Config{Endpoint: "http://127.0.0.1:1", Username: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	_, err = client.ReadSet(t.Context(), "/", "delay")
	var unreachable *broker.UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("ReadSet() error = %v (%T), want *UnreachableError", err, err)
	}
	want := "cannot reach the RabbitMQ management API at http://127.0.0.1:1: "
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	// The refusal itself, not a timeout waited out after it.
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("ReadSet() error = %v, want the refused connection", err)
	}
	t.Logf("ReadSet noticed the refused connection after %s", time.Since(started))
}

func TestErrors(t *testing.T) {
	t.Parallel()
	client := brokertest.NewClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// QueueMessages asks for "^(name)$".
		switch strings.TrimSuffix(strings.TrimPrefix(r.URL.Query().Get("name"), "^("), ")$") {
		case "unauthorized":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"not_authorized","reason":"Login failed"}`))
		case "missing":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
		case "broken":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":"internal_error","reason":"something broke"}`))
		case "html":
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(`<html>bad gateway</html>`))
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	}), broker.Config{Username: "alice", Timeout: 200 * time.Millisecond})
	queueMessages := func(ctx context.Context, queue string) error {
		_, err := client.QueueMessages(ctx, "/", []string{queue})
		return err
	}

	t.Run("401 names the user", func(t *testing.T) {
		t.Parallel()
		err := queueMessages(t.Context(), "unauthorized")
		var authErr *broker.AuthError
		if !errors.As(err, &authErr) || authErr.Username != "alice" || !strings.Contains(err.Error(), `user "alice"`) {
			t.Errorf("error = %v, want an *AuthError naming alice", err)
		}
	})
	t.Run("404 on a listing is a missing vhost", func(t *testing.T) {
		t.Parallel()
		if err := queueMessages(t.Context(), "missing"); !errors.Is(err, broker.ErrVHostNotFound) {
			t.Errorf("error = %v, want ErrVHostNotFound", err)
		}
	})
	t.Run("other statuses keep the reason", func(t *testing.T) {
		t.Parallel()
		err := queueMessages(t.Context(), "broken")
		var apiErr *broker.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Reason != "something broke" {
			t.Fatalf("error = %v, want *APIError 500 with the reason", err)
		}
		if !strings.Contains(err.Error(), "500 Internal Server Error (internal_error: something broke)") {
			t.Errorf("error %q does not show the status and reason", err)
		}
	})
	t.Run("a page that is not JSON shows in the reason", func(t *testing.T) {
		t.Parallel()
		if err := queueMessages(t.Context(), "html"); err == nil || !strings.Contains(err.Error(), "<html>bad gateway</html>") {
			t.Errorf("error = %v, want the page's text", err)
		}
	})
	t.Run("timeout is unreachable", func(t *testing.T) {
		t.Parallel()
		err := queueMessages(t.Context(), "slow")
		var unreachable *broker.UnreachableError
		if !errors.As(err, &unreachable) || !strings.Contains(err.Error(), "no answer within 200ms") {
			t.Errorf("error = %v, want *UnreachableError with no answer within 200ms", err)
		}
	})
	t.Run("cancelled context is the context's error", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if err := queueMessages(ctx, "slow"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error = %v, want context.DeadlineExceeded", err)
		}
		var unreachable *broker.UnreachableError
		if errors.As(queueMessages(ctx, "slow"), &unreachable) {
			t.Errorf("a cancelled caller must not read as an unreachable broker")
		}
	})
}

// TestUnreachableClosedListener checks that the error carries the endpoint
// of a port that just closed.
func TestUnreachableClosedListener(t *testing.T) {
	t.Parallel()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + listener.Addr().String()
	listener.Close()
	client, err := broker.New(broker.Config{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.VHostExists(t.Context(), "/")
	var unreachable *broker.UnreachableError
	if !errors.As(err, &unreachable) || unreachable.Endpoint != endpoint {
		t.Errorf("VHostExists() error = %v, want *UnreachableError for %s", err, endpoint)
	}
}
