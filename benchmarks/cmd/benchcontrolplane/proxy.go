package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"
)

// countingProxy forwards every request to the management API and counts
// them: the provider under measurement talks to the broker through it.
type countingProxy struct {
	server   *http.Server
	listener net.Listener
	requests atomic.Int64
}

func startCountingProxy(target string) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("invalid endpoint %q", target)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	forward := httputil.NewSingleHostReverseProxy(u)
	p := &countingProxy{listener: listener}
	p.server = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.requests.Add(1)
			forward.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 30 * time.Second,
	}
	go func() {
		if err := p.server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err) // the measurements would be wrong without the proxy
		}
	}()
	return p, nil
}

// URL is the endpoint to give the provider.
func (p *countingProxy) URL() string { return "http://" + p.listener.Addr().String() }

// Requests is the number of requests since the last Reset.
func (p *countingProxy) Requests() int64 { return p.requests.Load() }

func (p *countingProxy) Reset() { p.requests.Store(0) }

func (p *countingProxy) Close() error { return p.server.Close() }
