package broker_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestAccDeletionWindow measures the window in which a message reaching a
// quorum queue would be lost with it: from the last answer of the check
// that found it empty to the answer of its deletion, for the 17 queues of
// the README's set deleted in one Apply, as a destroy does. Each deletion
// must follow its own check, one queue at a time: the windows must not
// overlap, so together they fit in the Apply, whatever the machine's
// speed. Their lengths are figures, logged; DELETION_WINDOW_MARKDOWN=FILE
// writes them.
func TestAccDeletionWindow(t *testing.T) {
	if os.Getenv("TF_ACC") != "1" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	var mu sync.Mutex
	var windows []float64
	client, err := broker.New(broker.Config{Endpoint: accEndpoint, Username: "guest", Password: "guest",
		Logf: func(_ context.Context, msg string, fields map[string]any) {
			if w, ok := fields["window_ms"].(float64); ok {
				mu.Lock()
				windows = append(windows, w)
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	base := uniqueName(t)
	var queues []topology.Queue
	var changes []topology.Change
	for k := range 17 {
		q := quorumQueue(fmt.Sprintf("%s.level.%02d", base, k))
		queues = append(queues, q)
		changes = append(changes, topology.Change{Kind: topology.DeleteQueue, Queue: &queues[k]})
	}
	createObjects(t, client, nil, queues, nil)
	awaitQueueStatistics(t, client, base+".level.00")
	started := time.Now()
	if err := client.Apply(t.Context(), accVHost, changes, broker.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(started)
	if len(windows) != len(queues) {
		t.Fatalf("%d deletions reported a window, want %d", len(windows), len(queues))
	}
	slices.Sort(windows)
	median, largest := windows[len(windows)/2], windows[len(windows)-1]
	version := brokerVersion(t, client)
	t.Logf("RabbitMQ %s: 17 empty quorum queues deleted in %s; window median %.1f ms, largest %.1f ms", version, took.Round(time.Millisecond), median, largest)
	var total float64
	for _, w := range windows {
		total += w
	}
	if applied := float64(took.Microseconds()) / 1000; total > applied {
		t.Errorf("the windows add up to %.1f ms, more than the %.1f ms of the whole Apply: they overlap, "+
			"so a deletion waited with its check behind another's", total, applied)
	}
	if file := os.Getenv("DELETION_WINDOW_MARKDOWN"); file != "" {
		writeWindow(t, file, version, took, windows)
	}
}

func writeWindow(t *testing.T, file, version string, took time.Duration, windows []float64) {
	t.Helper()
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	load, _ := os.ReadFile("/proc/loadavg")
	var b strings.Builder
	fmt.Fprintf(&b, "# The deletion window: RabbitMQ %s\n\n", version)
	fmt.Fprintf(&b, "Written by `TestAccDeletionWindow` (internal/broker, `DELETION_WINDOW_MARKDOWN`) at commit %s, %s, on %s/%s, %d CPUs, load average %s.\n\n",
		strings.TrimSpace(string(commit)), time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(&b, "17 empty quorum queues (the README's set) deleted by one Apply in %s. The window of each: from the last answer of the check that found it empty to the answer of its DELETE, in ms, sorted:\n\n",
		took.Round(time.Millisecond))
	parts := make([]string, len(windows))
	for i, w := range windows {
		parts[i] = fmt.Sprintf("%.1f", w)
	}
	fmt.Fprintf(&b, "%s\n\nmedian %.1f ms, largest %.1f ms.\n", strings.Join(parts, ", "), windows[len(windows)/2], cmp.Or(windows[len(windows)-1], 0))
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
