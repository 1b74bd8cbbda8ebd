package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/benchmarks/internal/results"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/messaging"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccDemoRadix16 runs the demo, as `make demo` runs it for examples/demo's
// radix-16 set (-tf-output with -tf-set), against a radix-16 set created as
// the provider creates one (internal/delayset), with a unique name: every
// message arrives once, none early, with its delay in hex digits. It needs
// TF_ACC=1 and the local broker (or RABBITMQ_ENDPOINT and RABBITMQ_AMQP_URL).
func TestAccDemoRadix16(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: needs TF_ACC=1 and a broker")
	}
	endpoint := results.EnvOr("RABBITMQ_ENDPOINT", "http://127.0.0.1:15672")
	client, err := broker.New(broker.Config{Endpoint: endpoint, Username: "guest", Password: "guest", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	name := fmt.Sprintf("delaydemo-test-%d", time.Now().UnixNano())
	queue := name + ".work"
	var stdout, stderr strings.Builder
	if code := run([]string{"-declare-queue", "-queue", queue}, &stdout, &stderr); code != 0 {
		t.Fatalf("delaydemo -declare-queue: exit %d\n%s", code, stderr.String())
	}
	t.Cleanup(func() {
		conn, err := messaging.Dial(messaging.URLFromEnv(), 10*time.Second)
		if err != nil {
			t.Error(err)
			return
		}
		defer func() { _ = conn.Close() }()
		if err := messaging.DeleteQueue(conn, queue); err != nil {
			t.Error(err)
		}
	})
	sets := delayset.Sets{Broker: client}
	spec := topology.Spec{
		Name: name, VHost: "/", Levels: 2, Radix: 16, Resolution: 100 * time.Millisecond,
		QueueType: topology.QueueTypeClassic, Routes: []topology.Route{{Destination: queue, Key: "demo"}},
	}
	created := delayset.Remembered{Spec: spec} // what a create that failed part-way leaves to delete
	t.Cleanup(func() {
		// Forced only when the test failed. A demo that passed consumed every
		// message, and the set's destroy passes the guard as a user's does
		// once the statistics it counts by have caught up with the messages
		// that just went through.
		if !t.Failed() {
			time.Sleep(broker.StatisticsLag)
		}
		if err := sets.Destroy(context.Background(), created, t.Failed()); err != nil {
			t.Error(err)
		}
	})
	set, err := sets.Create(ctx, spec)
	if set.Spec.Name != "" {
		created = set.Remembered
	}
	if err != nil {
		t.Fatal(err)
	}

	// As `terraform output -json` writes examples/demo's radix16 output.
	outputs := filepath.Join(t.TempDir(), "outputs.json")
	err = os.WriteFile(outputs, []byte(fmt.Sprintf(`{"radix16": {"sensitive": false, "type": ["object", {}], "value": {
  "ingest_exchange": %q, "levels": 2, "radix": 16, "resolution": "100ms", "route_key": "demo", "route_queue": %q}}}`,
		topology.Names(name).Ingest(), queue)), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	// A generous grace: the demo stops waiting once every message is in, and
	// lateness is its figure to print, not this test's to bound.
	code := run([]string{"-tf-output", outputs, "-tf-set", "radix16", "-delays", "0s,100ms,1.6s,1.7s,3.4s", "-grace", "2m"}, &stdout, &stderr)
	t.Logf("delaydemo:\n%s%s", stdout.String(), stderr.String())
	if code != 0 {
		t.Fatalf("delaydemo exited %d", code)
	}
	// 1.6s is 16 ticks (1.0, one queue), 1.7s is 17 (1.1, two), 3.4s is 34 (2.2, two).
	for _, want := range []string{"(levels 2, radix 16, resolution 100ms, key \"demo\")", " demo.0.0 ", " demo.0.1 ", " demo.1.0     1 ", " demo.1.1     2 ", " demo.2.2     2 ", "PASS"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("delaydemo's output lacks %q", want)
		}
	}
}
