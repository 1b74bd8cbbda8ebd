package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
)

// How an operation is measured: its requests through a counting proxy, the
// providers' CPU through /usr/bin/time, and the broker's CPU around it.

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

// providerCPUWrapper wraps the provider binary in dir in /usr/bin/time, which
// appends its CPU seconds to log: the provider's own, apart from terraform's.
func providerCPUWrapper(dir, log string) error {
	binary := filepath.Join(dir, "terraform-provider-rabbitmq")
	realDir := filepath.Join(filepath.Dir(dir), "provider-measured")
	if err := os.MkdirAll(realDir, 0o755); err != nil {
		return err
	}
	measured := filepath.Join(realDir, "terraform-provider-rabbitmq")
	if err := os.Rename(binary, measured); err != nil {
		return err
	}
	script := fmt.Sprintf("#!/bin/sh\nexec /usr/bin/time -a -o %q -f '%%U %%S' %q \"$@\"\n", log, measured)
	return os.WriteFile(binary, []byte(script), 0o755)
}

// providerCPU sums and empties the log providerCPUWrapper's script writes.
func providerCPU(log string) (time.Duration, error) {
	text, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, line := range strings.Split(string(text), "\n") {
		// Other lines say how a run ended ("Command exited with non-zero status 1").
		fields := strings.Fields(line)
		if len(fields) != 2 {
			continue
		}
		user, userErr := strconv.ParseFloat(fields[0], 64)
		system, systemErr := strconv.ParseFloat(fields[1], 64)
		if userErr == nil && systemErr == nil {
			total += time.Duration((user + system) * float64(time.Second))
		}
	}
	return total, os.Remove(log)
}

// timed measures f: its wall time and the broker's CPU.
func (b *bench) timed(f func() error) (measurement, error) {
	before, err := machine.ProcessCPU(b.brokerPID)
	if err != nil {
		return measurement{}, fmt.Errorf("reading the broker's CPU time: %w", err)
	}
	started := time.Now()
	if err := f(); err != nil {
		return measurement{}, err
	}
	m := measurement{Wall: time.Since(started)}
	after, err := machine.ProcessCPU(b.brokerPID)
	if err != nil {
		return measurement{}, fmt.Errorf("reading the broker's CPU time: %w", err)
	}
	m.BrokerCPU = after - before
	return m, nil
}
