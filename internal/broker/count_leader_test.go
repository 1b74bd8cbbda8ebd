package broker

import (
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
)

// runningQueue and stoppedQueue are RabbitMQ 4.0.5's answers to a quorum
// queue's read with totals, as seen on the broker: the first "state" and
// "online" are the members' (rabbit_quorum_queue:i/2), the second the
// cluster's (format/2), which still says running when the queue's Ra server
// is stopped.
const (
	runningQueue = `{"arguments":{"x-queue-type":"quorum"},"leader":"rabbit@a","members":["rabbit@a"],"messages":0,` +
		`"name":"q","node":"rabbit@a","online":["rabbit@a"],"online":["rabbit@a"],"state":"running","state":"running","type":"quorum"}`
	stoppedQueue = `{"arguments":{"x-queue-type":"quorum"},"leader":"rabbit@a","members":["rabbit@a"],"messages":2,` +
		`"name":"q","node":"rabbit@a","online":[],"online":["rabbit@a"],"state":"down","state":"running","type":"quorum"}`
)

func TestFirstValuesKeepsTheMembersAnswer(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		raw  string
		want map[string]string
	}{
		"running": {raw: runningQueue, want: map[string]string{"state": `"running"`, "node": `"rabbit@a"`, "online": `["rabbit@a"]`}},
		"stopped": {raw: stoppedQueue, want: map[string]string{"state": `"down"`, "node": `"rabbit@a"`, "online": `[]`}},
		"absent":  {raw: `{"name":"q"}`, want: map[string]string{}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			found, err := firstValues([]byte(tt.raw), "state", "node", "online")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range found {
				got[k] = string(v)
			}
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("firstValues (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := firstValues([]byte(`[1]`), "state"); err == nil {
		t.Error("firstValues of an array: no error")
	}
}

// TestZeroTrusted: a passive declaration's 0 is believed only where it
// cannot be the 0 RabbitMQ answers when the leader does not.
func TestZeroTrusted(t *testing.T) {
	t.Parallel()
	serving := leaderState{state: "running", node: "rabbit@a", online: []string{"rabbit@a", "rabbit@b"}}
	fast := leaderAnswer{took: time.Millisecond}
	for name, tt := range map[string]struct {
		answer leaderAnswer
		after  leaderState
		want   bool
	}{
		"the leader answered":           {answer: fast, after: serving, want: true},
		"at the broker's timeout":       {answer: leaderAnswer{took: leaderQueryTimeout}, after: serving},
		"a consumer, unacknowledged":    {answer: leaderAnswer{consumers: 1, took: time.Millisecond}, after: serving},
		"a message":                     {answer: leaderAnswer{ready: 1, took: time.Millisecond}, after: serving},
		"the leader's member down":      {answer: fast, after: leaderState{state: "down", node: "rabbit@a", online: []string{"rabbit@b"}}},
		"recovering":                    {answer: fast, after: leaderState{state: "recovering", node: "rabbit@a", online: []string{"rabbit@a"}}},
		"not registered where it leads": {answer: fast, after: leaderState{state: "running", node: "rabbit@a", online: []string{"rabbit@b"}}},
		"nothing read":                  {answer: fast},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := zeroTrusted(tt.answer, tt.after); got != tt.want {
				t.Errorf("zeroTrusted() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseAMQPEndpoint(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"":                             "",
		"amqp://127.0.0.1:5672":        "amqp://127.0.0.1:5672/",
		"amqps://broker.example:5671/": "amqps://broker.example:5671/",
	} {
		if got, err := parseAMQPEndpoint(raw); err != nil || got != want {
			t.Errorf("parseAMQPEndpoint(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{"http://127.0.0.1:5672", "amqp://admin:S3cret@host:5672", "amqp://host:5672/vhost", "amqp://"} {
		got, err := parseAMQPEndpoint(raw)
		if err == nil {
			t.Errorf("parseAMQPEndpoint(%q) = %q, want an error", raw, got)
		} else if strings.Contains(err.Error(), "S3cret") {
			t.Errorf("parseAMQPEndpoint(%q): the error shows the password: %v", raw, err)
		}
	}
}
