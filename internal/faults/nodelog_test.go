package faults

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// logEntryStart matches the first line of a RabbitMQ log entry (3.10 and
// 4.x write the same format); the lines that follow it up to the next such
// line belong to the entry.
var logEntryStart = regexp.MustCompile(`^\d{4}-\d\d-\d\d \S+ \[(\w+)\] `)

// crashedRequest marks the warning the management API logs when a request
// crashed inside the node: it runs the request's AMQP method (a queue
// declaration, say) by rpc, and an exception there comes back as
// {badrpc, {'EXIT', {Reason, Stack}}}, which rabbit_mgmt_util:direct_request
// logs as a warning ("Declare queue error: {'EXIT',…") and answers with 400
// "Request to node … failed with …". Such an entry is kept with the errors.
const crashedRequest = "{'EXIT',"

const (
	// nodeLogEntriesKept is how many of a node's last error entries a failed
	// test prints, and nodeLogEntryChars how much of each: enough for a
	// crash's reason and first frames, few enough that go test's tail still
	// shows them.
	nodeLogEntriesKept = 4
	nodeLogEntryChars  = 800
)

// lastLogErrors returns the last error entries of a node's log, and the
// warnings of requests that crashed (crashedRequest), each on one line and
// clipped, oldest first.
func lastLogErrors(path string) ([]string, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = file.Close() }()
	var entries []string
	var current *strings.Builder
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for scanner.Scan() {
		line := scanner.Text()
		if m := logEntryStart.FindStringSubmatch(line); m != nil {
			current = nil
			if m[1] == "error" || (m[1] == "warning" && strings.Contains(line, crashedRequest)) {
				current = &strings.Builder{}
				entries = append(entries, "")
			}
		}
		if current == nil || current.Len() >= nodeLogEntryChars {
			continue
		}
		if current.Len() > 0 {
			current.WriteByte(' ')
		}
		current.WriteString(strings.Join(strings.Fields(line), " "))
		entries[len(entries)-1] = clip(current.String(), nodeLogEntryChars)
	}
	if len(entries) > nodeLogEntriesKept {
		entries = entries[len(entries)-nodeLogEntriesKept:]
	}
	return entries, scanner.Err()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " …"
}

// noteNodeErrors records, for the end of the run's output, the last errors
// the nodes of a failed test logged: the nodes' directories go with the
// next run, and go test's tail may be all a CI log keeps.
// With them goes how each node then saw its metadata store: a quorum
// queue's declaration crashes on a node whose store member is down (4.3's
// rabbit_queue_location checks the node is among the members it knows).
func noteNodeErrors(t *testing.T, indexes []int) {
	for _, index := range indexes {
		n := describeNode(t, index)
		report.addNodeErrors(fmt.Sprintf("%s, %s: metadata store: %s", t.Name(), n.Name, nodeMetadata(index)))
		entries, err := lastLogErrors(n.Log)
		switch {
		case err != nil:
			report.addNodeErrors(fmt.Sprintf("%s, %s: log unreadable: %v", t.Name(), n.Name, err))
		case len(entries) == 0:
			report.addNodeErrors(fmt.Sprintf("%s, %s: no error in its log", t.Name(), n.Name))
		default:
			for _, entry := range entries {
				report.addNodeErrors(fmt.Sprintf("%s, %s: %s", t.Name(), n.Name, entry))
			}
		}
	}
}

// nodeMetadata is what `rabbitmq-nodes.sh metadata` prints for node index,
// or why it printed nothing: never a failure, since the test has failed.
func nodeMetadata(index int) string {
	out, err := exec.Command(nodesScript, "metadata", strconv.Itoa(index)).Output()
	if text := strings.TrimSpace(string(out)); text != "" {
		return clip(text, nodeLogEntryChars)
	}
	return fmt.Sprintf("unknown (%v)", err)
}

func TestLastLogErrors(t *testing.T) {
	entries, err := lastLogErrors(filepath.Join("testdata", "node-errors.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2026-11-26 23:50:04.000001+00:00 [error] <0.904.0> Channel error on connection <0.905.0>:",
		"2026-11-26 23:50:04.000001+00:00 [error] <0.904.0> {badmatch,",
		"2026-11-26 23:50:05.000001+00:00 [error] <0.906.0> crasher: initial call: rabbit_channel:init/1 pid: <0.906.0>",
		"2026-11-26 23:50:05.500001+00:00 [warning] <0.908.0> Declare queue error: {'EXIT',{{case_clause,{error,noproc}}, " +
			"[{rabbit_quorum_queue,start_cluster,1,[]}, {rabbit_channel,handle_method,6,[]}]}}",
	}
	if !slices.Equal(entries, want) {
		t.Errorf("lastLogErrors:\n got %q\nwant %q", entries, want)
	}
}

func TestLastLogErrorsClipsAnEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.log")
	long := "2026-11-26 23:50:02.000001+00:00 [error] <0.1.0> " + strings.Repeat("x", 2*nodeLogEntryChars)
	if err := os.WriteFile(path, []byte(long+"\n    and a continuation\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := lastLogErrors(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || len(entries[0]) != nodeLogEntryChars+len(" …") || !strings.HasSuffix(entries[0], " …") {
		t.Errorf("a long entry is not clipped to %d characters: %d entries, %q", nodeLogEntryChars, len(entries), entries)
	}
}
