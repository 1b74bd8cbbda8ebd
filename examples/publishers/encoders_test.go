// Package publishers holds the publishers of the publishing guide, in Go
// (go/), Python, Node.js and Java. TestEncoders runs the Python, Node.js and
// Java routing-key encoders through their harnesses (encode_keys.py,
// encodeKeys.js, EncodeKeys.java) and compares every key with the
// provider's own, in every radix, and every refusal with the one they share;
// TestAccPublishers runs each publisher through a set on a broker.
package publishers

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// encoderCase is one call of an encoder: radix 0 calls it without a radix.
type encoderCase struct {
	key        string
	delay      time.Duration
	levels     int
	resolution time.Duration
	radix      int
}

// args are the five command-line arguments of the encoders' main for c.
func (c encoderCase) args() []string {
	radix := ""
	if c.radix != 0 {
		radix = strconv.Itoa(c.radix)
	}
	return []string{c.key, strconv.FormatInt(c.delay.Milliseconds(), 10), strconv.Itoa(c.levels), strconv.FormatInt(c.resolution.Milliseconds(), 10), radix}
}

// want is the line an encoder's main prints for c: the provider's routing
// key, or the refusal the snippets share when the provider refuses too.
func (c encoderCase) want(t *testing.T) string {
	t.Helper()
	format := topology.KeyFormat{Levels: c.levels, Radix: c.radix, Resolution: c.resolution}
	key, err := format.Encode(c.key, c.delay)
	if err == nil {
		return key
	}
	radix := c.radix
	if radix == 0 {
		radix = topology.DefaultRadix
	}
	switch {
	case !isRadix(radix):
		return fmt.Sprintf("refused: radix %d is not 2, 4, 8, 16 or 256", radix)
	case c.delay < 0 || c.delay > format.MaxDelay():
		return fmt.Sprintf("refused: delay %dms does not fit %d levels of %dms in radix %d", c.delay.Milliseconds(), c.levels, c.resolution.Milliseconds(), radix)
	}
	t.Fatalf("the provider refuses %+v for a reason the snippets do not check: %v", c, err)
	return ""
}

func isRadix(radix int) bool {
	for _, r := range topology.Radixes {
		if r == radix {
			return true
		}
	}
	return false
}

// encoderCases are, for each key: the delays this test checked before
// radixes, called without a radix; for each radix, every whole number of
// ticks of a small set and one millisecond over each, the shortest and
// longest delays of the largest sets the radix allows at 1ms and at 1s,
// and delays just beyond the longest; radixes no set has; and negative
// delays.
func encoderCases() []encoderCase {
	var cases []encoderCase
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
				cases = append(cases, encoderCase{key, delay, c.levels, c.resolution, 0})
			}
		}
		for _, radix := range topology.Radixes {
			small := map[int]int{2: 5, 4: 3, 8: 2, 16: 2, 256: 1}[radix] // 32, 64, 64, 256 and 256 ticks
			format := topology.KeyFormat{Levels: small, Radix: radix, Resolution: 100 * time.Millisecond}
			for delay := time.Duration(0); delay <= format.MaxDelay(); delay += format.Resolution {
				cases = append(cases, encoderCase{key, delay, small, format.Resolution, radix})
				cases = append(cases, encoderCase{key, delay + time.Millisecond, small, format.Resolution, radix})
			}
			for _, resolution := range []time.Duration{time.Millisecond, time.Second} {
				levels := largestLevels(radix, resolution)
				longest := topology.KeyFormat{Levels: levels, Radix: radix, Resolution: resolution}.MaxDelay()
				for _, delay := range []time.Duration{0, time.Millisecond, resolution, longest - resolution + time.Millisecond, longest, longest + time.Millisecond} {
					cases = append(cases, encoderCase{key, delay, levels, resolution, radix})
				}
			}
			cases = append(cases, encoderCase{key, -time.Millisecond, small, format.Resolution, radix})
		}
		for _, radix := range []int{1, 3, 10, 32} {
			cases = append(cases, encoderCase{key, time.Second, 4, time.Second, radix})
		}
	}
	return cases
}

// largestLevels is the most levels the provider's encoder takes in radix
// at resolution.
func largestLevels(radix int, resolution time.Duration) int {
	levels := 1
	for {
		if _, err := (topology.KeyFormat{Levels: levels + 1, Radix: radix, Resolution: resolution}).Encode("", 0); err != nil {
			return levels
		}
		levels++
	}
}

func TestEncoders(t *testing.T) {
	cases := encoderCases()
	var args, want []string
	refusals := 0
	for _, c := range cases {
		args = append(args, c.args()...)
		want = append(want, c.want(t))
		if strings.HasPrefix(want[len(want)-1], "refused: ") {
			refusals++
		}
	}
	t.Logf("%d calls, %d of them refused", len(cases), refusals)
	for name, command := range map[string][]string{
		"python": {"python3", "python/encode_keys.py"},
		"node":   {"node", "node/encodeKeys.js"},
		"java":   {"java", "-cp", "", "EncodeKeys"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(command[0]); err != nil {
				t.Skipf("%s is not installed", command[0])
			}
			if name == "java" {
				command = javaEncoder(t, command)
			}
			out, err := exec.Command(command[0], append(command[1:], args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(command, " "), err, out)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(got) != len(want) {
				t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), out)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s %q: %q, want %q", command[1], cases[i].args(), got[i], want[i])
				}
			}
		})
	}
}

// javaEncoder compiles the Java encoder and its harness into a directory of
// the test's, and names it as command's class path.
func javaEncoder(t *testing.T, command []string) []string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("javac", "-d", dir, "java/DelayRoutingKey.java", "java/EncodeKeys.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	command = slices.Clone(command)
	command[2] = dir
	return command
}
