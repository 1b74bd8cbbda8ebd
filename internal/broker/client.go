package broker

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"
)

// DefaultTimeout bounds each HTTP request when Config.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// Config says how to reach the management API. The field names follow the
// provider settings of cyrilgdn/terraform-provider-rabbitmq.
type Config struct {
	// Endpoint is the management API's base URL, e.g. http://127.0.0.1:15672,
	// with an optional path prefix when it sits behind a reverse proxy.
	Endpoint string
	Username string
	Password string

	// Insecure skips verifying the server's certificate.
	Insecure bool
	// CACertFile is a PEM file of the certificates to trust instead of the
	// system's roots.
	CACertFile string
	// ClientCertFile and ClientKeyFile are a PEM certificate and its key for
	// mutual TLS; both or neither.
	ClientCertFile string
	ClientKeyFile  string

	// Proxy is the URL of an HTTP(S) or SOCKS5 proxy. When empty, the usual
	// HTTPS_PROXY, HTTP_PROXY and NO_PROXY variables apply, as in most HTTP
	// clients (Go never proxies requests to localhost or loopback addresses).
	Proxy string

	// Timeout bounds each request, from dialling to the end of the answer;
	// zero means DefaultTimeout.
	Timeout time.Duration

	// AMQPEndpoint is the AMQP 0-9-1 URL (amqp:// or amqps://, no
	// credentials or vhost) through which the client asks a quorum queue's
	// leader for its count where a peek would be a delivery (RabbitMQ
	// 4.0–4.2). Empty: the management endpoint's host, at the port of the
	// broker's AMQP listener (amqps for an https endpoint), unless a proxy
	// carries the management API. The credentials and TLS settings are
	// the management API's.
	AMQPEndpoint string
	// DisableAMQPCounts makes the client count by statistics alone.
	DisableAMQPCounts bool

	// Logf, when set, is called once at the end of each read of a set, count
	// of messages and Apply with the operation's request count and duration.
	Logf func(ctx context.Context, msg string, fields map[string]any)
}

// Client talks to one RabbitMQ management API. It is safe for concurrent use.
//
// Most requests go through rabbit-hole; the few it cannot make are sent
// directly, through the same transport (DESIGN.md, "The client's requests").
type Client struct {
	endpoint  string // no trailing slash
	username  string
	password  string
	timeout   time.Duration
	rabbit    *rabbithole.Client
	http      *http.Client
	transport *countingTransport
	logf      func(ctx context.Context, msg string, fields map[string]any)
	// bindingKeys are the properties keys of the bindings ReadSet saw.
	bindingKeys bindingKeys
	// placements are where the queues the reads found run.
	placements placements
	// policies are the vhosts' policies VHostPolicies read.
	policies policiesRead
	// shared are the listings of bindings that set reads share.
	shared sharedBindings
	// cluster is the name of the cluster the management API serves.
	cluster learnedCluster
	// counter counts the messages of queues, and changes nothing (count.go).
	counter *counter
}

// New checks cfg and returns a client. It makes no request, so a broker that
// is down is only noticed by the first call.
func New(cfg Config) (*Client, error) {
	endpoint, err := parseEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := newTLSConfig(cfg)
	if err != nil {
		return nil, err
	}
	proxy, err := proxyFunc(cfg.Proxy)
	if err != nil {
		return nil, err
	}
	amqpEndpoint, err := parseAMQPEndpoint(cfg.AMQPEndpoint)
	if err != nil {
		return nil, err
	}
	if err := amqpBesideManagement(cfg.AMQPEndpoint, endpoint); err != nil {
		return nil, err
	}
	// http.DefaultTransport's settings, keeping a connection per request that
	// Apply runs at once.
	base := &http.Transport{
		Proxy:               proxy,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConfig,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: applyConcurrency,
		// Shorter than the 5 s after which RabbitMQ's HTTP server (cowboy's
		// request_timeout) closes a connection that waits for a request, so
		// the client seldom picks a connection the broker is closing.
		IdleConnTimeout:       4 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	transport := &countingTransport{next: base}

	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rabbit, err := rabbithole.NewTLSClient(endpoint, cfg.Username, cfg.Password, transport)
	if err != nil {
		return nil, fmt.Errorf("invalid management API endpoint %q: %s", RedactURL(endpoint), parseProblem(endpoint, err))
	}
	rabbit.SetTimeout(timeout)
	c := &Client{
		endpoint: endpoint,
		username: cfg.Username,
		password: cfg.Password,
		timeout:  timeout,
		rabbit:   rabbit,
		// The transport refuses redirects (countingTransport); this
		// client would follow none anyway.
		http:      &http.Client{Transport: transport, CheckRedirect: refuseRedirect},
		transport: transport,
		logf:      cfg.Logf,
	}
	c.counter = &counter{
		api: c, logf: cfg.Logf, management: endpoint, proxy: proxy, timing: defaultCheckTiming,
		amqp: amqpCounts{
			configured: amqpEndpoint, disabled: cfg.DisableAMQPCounts,
			username: cfg.Username, password: cfg.Password, tls: tlsConfig, timeout: timeout,
		},
	}
	return c, nil
}

// Endpoint is the management API's base URL, without a trailing slash.
func (c *Client) Endpoint() string { return c.endpoint }

// Requests is the number of HTTP requests the client has sent so far,
// answered or not.
func (c *Client) Requests() int64 { return c.transport.total.Load() }

func parseEndpoint(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("the management API endpoint is empty; expected a URL such as http://127.0.0.1:15672")
	}
	if scheme := urlScheme(raw); scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("invalid management API endpoint %q: the scheme must be http or https, e.g. http://127.0.0.1:15672", RedactURL(raw))
	}
	// Refused by the raw string's last "@", not the parser's reading: with
	// a "/" in the password, http://admin:1234/x@host would be host admin,
	// port 1234, and the password would show in every later message.
	if _, _, _, found := splitUserinfo(raw); found {
		return "", fmt.Errorf("invalid management API endpoint %q: give the credentials as username and password, not in the URL "+
			"(an \"@\" in a path is written %%40)", RedactURL(raw))
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("invalid management API endpoint %q: %s", RedactURL(raw), parseProblem(raw, err))
	case u.Host == "":
		return "", fmt.Errorf("invalid management API endpoint %q: it names no host", RedactURL(raw))
	case u.RawQuery != "" || u.Fragment != "":
		return "", fmt.Errorf("invalid management API endpoint %q: it must have no query or fragment", RedactURL(raw))
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// CheckEndpoint refuses a management API endpoint the client cannot use,
// as New would, naming it redacted.
func CheckEndpoint(raw string) error {
	_, err := parseEndpoint(raw)
	return err
}

// CheckAMQPEndpoint refuses an AMQP endpoint the client cannot use beside
// the management endpoint, as New would, naming it redacted.
func CheckAMQPEndpoint(raw, managementEndpoint string) error {
	if _, err := parseAMQPEndpoint(raw); err != nil {
		return err
	}
	return amqpBesideManagement(raw, managementEndpoint)
}

// amqpBesideManagement refuses amqp:// beside an https:// management
// endpoint: the credentials, which both share, would travel in clear over
// AMQP while the management API is reached over TLS.
func amqpBesideManagement(amqpEndpoint, managementEndpoint string) error {
	if urlScheme(amqpEndpoint) == "amqp" && urlScheme(managementEndpoint) == "https" {
		return fmt.Errorf("invalid AMQP endpoint %q: it is amqp:// beside the https:// management endpoint %q, so the username "+
			"and password, which both use, would travel in clear over AMQP; use the broker's amqps:// listener",
			RedactURL(amqpEndpoint), RedactURL(managementEndpoint))
	}
	return nil
}

func newTLSConfig(cfg Config) (*tls.Config, error) {
	// InsecureSkipVerify only when the user says insecure = true; never
	// below TLS 1.2, whatever the platform's default.
	config := &tls.Config{InsecureSkipVerify: cfg.Insecure, MinVersion: tls.VersionTLS12}
	if cfg.CACertFile != "" {
		pem, err := os.ReadFile(cfg.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("reading the CA certificate file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the CA certificate file %s holds no PEM certificate", cfg.CACertFile)
		}
		config.RootCAs = pool
	}
	switch {
	case cfg.ClientCertFile != "" && cfg.ClientKeyFile != "":
		pair, err := tls.LoadX509KeyPair(cfg.ClientCertFile, cfg.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("loading the client certificate %s and key %s: %w", cfg.ClientCertFile, cfg.ClientKeyFile, err)
		}
		config.Certificates = []tls.Certificate{pair}
	case cfg.ClientCertFile != "":
		return nil, fmt.Errorf("a client certificate (%s) needs its key file too", cfg.ClientCertFile)
	case cfg.ClientKeyFile != "":
		return nil, fmt.Errorf("a client key (%s) needs its certificate file too", cfg.ClientKeyFile)
	}
	return config, nil
}

// CheckProxy refuses a proxy URL the client cannot use, as New would,
// naming it redacted.
func CheckProxy(raw string) error {
	_, err := proxyFunc(raw)
	return err
}

func proxyFunc(raw string) (func(*http.Request) (*url.URL, error), error) {
	if raw == "" {
		return http.ProxyFromEnvironment, nil
	}
	switch urlScheme(raw) {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, fmt.Errorf("invalid proxy URL %q: the scheme must be http, https, socks5 or socks5h", RedactURL(raw))
	}
	// A proxy may take credentials in its URL: the userinfo runs to the
	// last "@", as RedactURL reads it, so a password may hold "/", "?",
	// "#" or "@" unescaped.
	prefix, userinfo, rest, hasUserinfo := splitUserinfo(raw)
	u, err := url.Parse(prefix + rest)
	if err != nil {
		return nil, fmt.Errorf("invalid proxy URL %q: %s", RedactURL(raw), parseProblem(prefix+rest, err))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid proxy URL %q: it names no host", RedactURL(raw))
	}
	if hasUserinfo {
		if u.User, err = parseUserinfo(userinfo); err != nil {
			return nil, fmt.Errorf("invalid proxy URL %q: its userinfo %s", RedactURL(raw), err)
		}
	}
	return http.ProxyURL(u), nil
}

// parseUserinfo is a URL's userinfo, "user" or "user:password", each
// percent-decoded. Its errors never quote it.
func parseUserinfo(userinfo string) (*url.Userinfo, error) {
	if strings.ContainsFunc(userinfo, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, errors.New("holds a control character")
	}
	user, password, hasPassword := strings.Cut(userinfo, ":")
	user, userErr := url.PathUnescape(user)
	password, passwordErr := url.PathUnescape(password)
	if userErr != nil || passwordErr != nil {
		return nil, errors.New(`holds a "%" that starts no escape of two hex digits (write "%" as %25)`)
	}
	if !hasPassword {
		return url.User(user), nil
	}
	return url.UserPassword(user, password), nil
}

// observe counts the requests of one operation and, when Logf is set,
// returns the function that reports them with the operation's duration.
func (c *Client) observe(ctx context.Context, operation string, fields map[string]any) (context.Context, func(error)) {
	if c.logf == nil {
		return ctx, func(error) {}
	}
	count := new(atomic.Int64)
	started := time.Now()
	ctx = context.WithValue(ctx, operationRequestsKey{}, count)
	return ctx, func(err error) {
		fields["requests"] = count.Load()
		fields["duration_ms"] = time.Since(started).Milliseconds()
		if err != nil {
			fields["error"] = err.Error()
		}
		c.logf(ctx, "RabbitMQ management API: "+operation, fields)
	}
}

// apiPath joins the segments under /api/, each escaped so that "/" (the
// default vhost) and any other byte of a name survive.
func apiPath(segments ...string) string {
	var b strings.Builder
	b.WriteString("/api")
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// call sends one request and decodes a 2xx answer's JSON into out, when out
// is not nil. Errors: the caller's context error when it ended,
// *UnreachableError without an answer, *AuthError for 401, *APIError for any
// other status of 400 or more.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	_, err := c.callStatus(ctx, method, path, query, body, out)
	return err
}

// callStatus is call that also returns the answer's status.
func (c *Client) callStatus(ctx context.Context, method, path string, query url.Values, body, out any) (int, error) {
	var payload io.Reader
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("encoding the body of %s %s: %w", method, path, err)
		}
		payload = bytes.NewReader(encoded)
	}
	target := c.endpoint + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	requestCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(requestCtx, method, target, payload)
	if err != nil {
		return 0, fmt.Errorf("building the request %s %s: %w", method, path, err)
	}
	req.SetBasicAuth(c.username, c.password)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	resp, err := c.http.Do(req)
	if err != nil {
		return 0, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, c.transportError(ctx, err)
	}

	if resp.StatusCode >= http.StatusBadRequest {
		code, reason := errorReply(answer)
		if resp.StatusCode == http.StatusUnauthorized {
			return resp.StatusCode, &AuthError{Endpoint: c.endpoint, Username: c.username, Reason: reason}
		}
		return resp.StatusCode, &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Code: code, Reason: reason}
	}
	if out == nil {
		return resp.StatusCode, nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return resp.StatusCode, fmt.Errorf("decoding the management API's answer to %s %s: %w", method, path, err)
	}
	return resp.StatusCode, nil
}

// errorReply reads the "error" and "reason" of an error answer's body.
func errorReply(answer []byte) (code, reason string) {
	var reply struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(answer, &reply) != nil {
		// Not the API's JSON: a proxy's or load balancer's page, say.
		return "", strings.TrimSpace(string(answer[:min(len(answer), 200)]))
	}
	return reply.Error, reply.Reason
}

// transportError tells the caller's cancellation from a broker that did not
// answer, which includes one that took longer than the client's timeout.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var redirect *RedirectError
	if errors.As(err, &redirect) {
		return redirect
	}
	if errors.Is(err, ErrAnswerTooLarge) {
		return fmt.Errorf("reading an answer of %s: %w", c.endpoint, ErrAnswerTooLarge)
	}
	var timeout interface{ Timeout() bool }
	timedOut := errors.Is(err, context.DeadlineExceeded) || errors.As(err, &timeout) && timeout.Timeout()
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // it repeats the URL, which the message names already
	}
	if timedOut {
		err = fmt.Errorf("no answer within %s: %w", c.timeout, err)
	}
	return &UnreachableError{Endpoint: c.endpoint, Err: err}
}

// rabbitHoleUnauthorized is the whole message of the untyped error rabbit-hole
// v3.5.0 returns for a 401.
const rabbitHoleUnauthorized = "Error: API responded with a 401 Unauthorized"

// viaRabbitHole makes one rabbit-hole call, which sends one request to path
// with method (both only name it in errors), and maps its errors to ours as
// call does.
//
// rabbit-hole takes no context: the call does not start once ctx has ended,
// but once started only the client's timeout, which rabbit-hole applies to
// every request, ends it early. For the same reason the transport cannot
// tell the request's operation, so it is counted here.
func (c *Client) viaRabbitHole(ctx context.Context, method, path string, call func() error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if count, ok := ctx.Value(operationRequestsKey{}).(*atomic.Int64); ok {
		count.Add(1)
	}
	err := call()
	if err == nil {
		return nil
	}
	var answer rabbithole.ErrorResponse
	var netErr net.Error
	switch {
	case errors.As(err, &answer) && answer.StatusCode == http.StatusUnauthorized,
		err.Error() == rabbitHoleUnauthorized:
		return &AuthError{Endpoint: c.endpoint, Username: c.username, Reason: c.transport.lastAuthReason()}
	case errors.As(err, &answer):
		return &APIError{Method: method, Path: path, StatusCode: answer.StatusCode, Code: answer.Message, Reason: answer.Reason}
	case errors.As(err, &netErr):
		// No answer, or one cut off: *url.Error from the request, or the
		// timeout striking while the answer's body was read.
		return c.transportError(ctx, err)
	}
	return fmt.Errorf("decoding the management API's answer to %s %s: %w", method, path, err)
}

// closeAnswer closes the body of an answer that a rabbit-hole method returns
// undecoded, read to the end so that its connection serves again.
func closeAnswer(resp *http.Response, err error) error {
	if resp != nil && resp.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
	}
	return err
}

// isNotFound tells whether err is the API answering 404 Not Found.
func isNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound
}
