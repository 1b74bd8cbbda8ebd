package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// peekSet is the set whose empty classic TTL queue the peeks look into.
const peekSet = "bench-peek"

// peekBody is the provider's peek: basic.get, then basic.nack with requeue.
const peekBody = `{"count":1,"ackmode":"ack_requeue_true","encoding":"auto","truncate":50}`

// stalledPeek is how long a peek takes before the report counts it as stalled.
const stalledPeek = time.Second

// peekResult is the latency of peeks at an empty classic queue: the provider's
// exact check before it deletes a queue whose statistics count nothing.
type peekResult struct {
	InFlight int // requests at once
	Latency  messaging.Percentiles
	Stalled  int // peeks that took stalledPeek or longer
}

// createPeekQueue creates a one-level classic set as the provider does and
// returns its TTL queue, which goes with the benchmark's vhost.
func (b *bench) createPeekQueue(ctx context.Context) (string, error) {
	spec, err := topology.NewSet(topology.Spec{Name: peekSet, VHost: b.cfg.VHost, Levels: 1, Resolution: resolution,
		QueueType: topology.QueueTypeClassic})
	if err != nil {
		return "", err
	}
	if _, err := b.sets.Create(ctx, spec); err != nil {
		return "", fmt.Errorf("creating set %s to peek into: %w", peekSet, err)
	}
	return topology.Names(peekSet).Level(0), nil
}

// measurePeeks peeks n times at queue, an empty classic queue, with
// inFlight requests at once.
func (b *bench) measurePeeks(ctx context.Context, queue string, n, inFlight int) (peekResult, error) {
	b.progress.step("%d peeks at an empty classic queue, %d at once", n, inFlight)
	target := "/api/queues/" + url.PathEscape(b.cfg.VHost) + "/" + url.PathEscape(queue) + "/get"
	latencies := make([]time.Duration, n)
	errs := inParallel(n, inFlight, func(i int) (err error) {
		latencies[i], err = b.peek(ctx, queue, target)
		return err
	})
	result := peekResult{InFlight: inFlight, Latency: messaging.PercentilesOf(latencies)}
	for i, latency := range latencies {
		if errs[i] != nil {
			return peekResult{}, errs[i]
		}
		if latency >= stalledPeek {
			result.Stalled++
		}
	}
	return result, nil
}

// peek makes one peek at queue, by target, and times it.
func (b *bench) peek(ctx context.Context, queue, target string) (time.Duration, error) {
	started := time.Now()
	resp, err := b.post(ctx, target, strings.NewReader(peekBody))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	latency := time.Since(started)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(answer)) != "[]" {
		return 0, fmt.Errorf("peek at %s: %s: %s", queue, resp.Status, answer)
	}
	return latency, nil
}
