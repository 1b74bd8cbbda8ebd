// Package publishers holds the publisher snippets of the publishing guide, in
// Go (go/), Python, Node.js and Java. This test runs the Python, Node.js and
// Java routing-key encoders and compares every key with the provider's own.
package publishers

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

func TestEncoders(t *testing.T) {
	var args, want []string
	for _, key := range []string{"orders", "", "billing.eu"} {
		for _, c := range []struct {
			levels     int
			resolution time.Duration
			delays     []time.Duration
		}{
			{4, 100 * time.Millisecond, []time.Duration{0, time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond, 101 * time.Millisecond, 1500 * time.Millisecond}},
			{9, time.Second, []time.Duration{time.Second, 10 * time.Second, 100 * time.Second, 500 * time.Second, 511 * time.Second}},
			{17, time.Second, []time.Duration{36 * time.Hour, 9*time.Hour + 30*time.Minute}},
			{32, time.Millisecond, []time.Duration{topology.MaxDelayFor(32, time.Millisecond)}},
		} {
			for _, delay := range c.delays {
				routingKey, err := topology.EncodeKey(key, delay, c.levels, c.resolution)
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, key, strconv.FormatInt(delay.Milliseconds(), 10), strconv.Itoa(c.levels), strconv.FormatInt(c.resolution.Milliseconds(), 10))
				want = append(want, routingKey)
			}
		}
	}
	for name, command := range map[string][]string{
		"python": {"python3", "python/delay_routing_key.py"},
		"node":   {"node", "node/delayRoutingKey.js"},
		"java":   {"java", "java/DelayRoutingKey.java"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(command[0]); err != nil {
				t.Skipf("%s is not installed", command[0])
			}
			out, err := exec.Command(command[0], append(command[1:], args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(command, " "), err, out)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(got) != len(want) {
				t.Fatalf("%d keys, want %d:\n%s", len(got), len(want), out)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s %s: %q, want %q", command[1], strings.Join(args[4*i:4*i+4], " "), got[i], want[i])
				}
			}
		})
	}
}
