package broker

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCheckRuleByVersion pins which quorum queues a check may peek at, by
// the broker's version and feature flags: only where a peek's return is no
// counted delivery (rabbit_fifo at each tag; DESIGN.md, "What counts as a
// delivery, by version"), and nowhere the client cannot vouch for.
func TestCheckRuleByVersion(t *testing.T) {
	t.Parallel()
	flag43 := map[string]bool{"rabbitmq_4.3.0": true, "khepri_db": true}
	unlimited := queueJSON{Type: "quorum", EffectivePolicy: json.RawMessage(`[]`)}
	limitedByArgument := queueJSON{Type: "quorum", Arguments: map[string]any{"x-delivery-limit": 5.0},
		EffectivePolicy: json.RawMessage(`{}`)}
	limitedByPolicy := queueJSON{Type: "quorum", EffectivePolicy: json.RawMessage(`{"delivery-limit":7,"max-length":9}`)}
	policyUnknown := queueJSON{Type: "quorum"} // no statistics yet: the policy is not in the answer
	tests := []struct {
		version string
		flags   map[string]bool // nil: not read, or unreadable
		queue   queueJSON
		want    bool
	}{
		{"3.10.8", nil, unlimited, true},
		{"3.10.8", nil, limitedByArgument, false},
		{"3.10.8", nil, limitedByPolicy, false},
		{"3.10.8", nil, policyUnknown, false},
		{"3.13.7", nil, unlimited, true},
		{"3.9.29", nil, unlimited, false}, // older than the provider supports
		{"4.0.5", flag43, unlimited, false},
		{"4.0.9", nil, unlimited, false},
		{"4.1.8", nil, unlimited, false},
		{"4.2.9", nil, unlimited, false},
		{"4.3.0", flag43, unlimited, true},
		{"4.3.6", flag43, limitedByArgument, true},
		{"4.4.1", flag43, limitedByPolicy, true},
		{"4.3.6", map[string]bool{"rabbitmq_4.3.0": false}, unlimited, false}, // a cluster upgraded, the flag not yet enabled
		{"4.3.6", map[string]bool{}, unlimited, false},
		{"4.3.6", nil, unlimited, false}, // the flags unreadable
		{"5.0.0", flag43, unlimited, false},
		{"", flag43, unlimited, false},
		{"garbage", flag43, unlimited, false},
		{"4", flag43, unlimited, false},
		{"4.x.1", flag43, unlimited, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v/%s", tt.version, tt.flags, tt.queue.EffectivePolicy), func(t *testing.T) {
			t.Parallel()
			if got := ruleFor(tt.version, "rabbit@a", tt.flags).mayPeek(tt.queue); got != tt.want {
				t.Errorf("RabbitMQ %q, flags %v: mayPeek(%+v) = %v, want %v", tt.version, tt.flags, tt.queue, got, tt.want)
			}
		})
	}
}

// TestCheckRuleByQueueType: a classic queue counts no delivery on any
// version, so it is peeked at everywhere; a queue of another type or none
// stated (a stream, an answer without its type) never.
func TestCheckRuleByQueueType(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"3.10.8", "4.0.5", "4.2.9", "4.3.6", "5.0.0", ""} {
		rule := ruleFor(version, "rabbit@a", map[string]bool{"rabbitmq_4.3.0": true})
		for queueType, want := range map[string]bool{"classic": true, "stream": false, "": false} {
			if got := rule.mayPeek(queueJSON{Type: queueType, EffectivePolicy: json.RawMessage(`{}`)}); got != want {
				t.Errorf("RabbitMQ %q: mayPeek(%s queue) = %v, want %v", version, queueType, got, want)
			}
		}
	}
}

// TestCountOf pins what the no-peek check believes of one answer: the
// statistics (messages_dlx among them) always; the totals of a broker
// without management metrics only from the node that leads the queue; no
// count at all never.
func TestCountOf(t *testing.T) {
	t.Parallel()
	rule := ruleFor("4.0.5", "rabbit@a", nil)
	tests := map[string]struct {
		answer        string
		want          int64
		wantUncounted string // part of the reason; "": counted
	}{
		"statistics count": {answer: `{"messages_ready":1,"messages_unacknowledged":2,"messages_dlx":3,"messages":6,"reductions":9}`, want: 6},
		"statistics count 0": {
			answer: `{"messages_ready":0,"messages_unacknowledged":0,"messages_dlx":0,"messages":0,"reductions":9}`, want: 0,
		},
		"dead-lettering only": {answer: `{"messages_ready":0,"messages_unacknowledged":0,"messages_dlx":4,"reductions":9}`, want: 4},
		"statistics without messages_dlx yet": {
			answer: `{"leader":"rabbit@b","messages_ready":1,"messages_unacknowledged":0,"messages":1,"reductions":9}`, want: 1,
		},
		"messages_dlx before the counts": {answer: `{"leader":"rabbit@a","messages_dlx":0}`, wantUncounted: "no statistics of the queue yet"},
		"totals of the leader":           {answer: `{"leader":"rabbit@a","messages":3,"messages_ready":3,"messages_unacknowledged":0}`, want: 3},
		"totals of the leader, 0": {
			answer: `{"leader":"rabbit@a","messages":0,"messages_ready":0,"messages_unacknowledged":0}`, want: 0,
		},
		"totals of another node": {
			answer:        `{"leader":"rabbit@b","messages":0,"messages_ready":0,"messages_unacknowledged":0}`,
			wantUncounted: "does not lead the queue (its leader: rabbit@b)",
		},
		"totals without a leader": {
			answer:        `{"messages":0,"messages_ready":0,"messages_unacknowledged":0}`,
			wantUncounted: "its leader: none now",
		},
		"no count yet": {answer: `{"leader":"rabbit@a"}`, wantUncounted: "no statistics of the queue yet"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var q queueJSON
			if err := json.Unmarshal([]byte(tt.answer), &q); err != nil {
				t.Fatal(err)
			}
			q.Name = "q"
			got, err := rule.countOf("/", q)
			if tt.wantUncounted != "" {
				if !IsUncounted(err) || !strings.Contains(err.Error(), tt.wantUncounted) {
					t.Errorf("countOf(%s) error = %v, want an *UncountedError saying %q", tt.answer, err, tt.wantUncounted)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("countOf(%s) = %d, %v; want %d", tt.answer, got, err, tt.want)
			}
		})
	}
}

// TestDeadLetterStrategyIsTheEffectiveOne: the argument wins, else the
// policy's; with neither known (no statistics yet), at-least-once is
// assumed, since its messages waiting for a confirm are seen by nothing
// but the statistics.
func TestDeadLetterStrategyIsTheEffectiveOne(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		q    queueJSON
		want bool // mayDeadLetterAtLeastOnce
	}{
		"argument":               {queueJSON{Arguments: map[string]any{argDeadLetterStrategy: atLeastOnce}}, true},
		"argument over a policy": {queueJSON{Arguments: map[string]any{argDeadLetterStrategy: "at-most-once"}, EffectivePolicy: json.RawMessage(`{"dead-letter-strategy":"at-least-once"}`)}, false},
		"policy":                 {queueJSON{EffectivePolicy: json.RawMessage(`{"dead-letter-strategy":"at-least-once"}`)}, true},
		"policy of another kind": {queueJSON{EffectivePolicy: json.RawMessage(`{"max-length":10}`)}, false},
		"no policy":              {queueJSON{EffectivePolicy: json.RawMessage(`[]`)}, false},
		"policy not read yet":    {queueJSON{}, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := tt.q.mayDeadLetterAtLeastOnce(); got != tt.want {
				t.Errorf("mayDeadLetterAtLeastOnce() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestStaleCountNamesWhatItCounts: a refusal names the messages it counts.
// Beside a leader's count of ready messages only the others are named; a
// count of all names them all.
func TestStaleCountNamesWhatItCounts(t *testing.T) {
	t.Parallel()
	count := func(n int64) *int64 { return &n }
	tests := []struct {
		name               string
		queue              queueJSON
		wantAll, wantOther string
	}{
		{"ready and dead-lettering", queueJSON{Messages: count(9), MessagesReady: count(8), MessagesUnacknowledged: count(0), MessagesDLX: count(1)},
			"8 ready, 1 waiting to be dead-lettered", "1 waiting to be dead-lettered"},
		{"unacknowledged", queueJSON{Messages: count(5), MessagesReady: count(2), MessagesUnacknowledged: count(3)},
			"2 ready, 3 delivered and unacknowledged", "3 delivered and unacknowledged"},
		{"a total beside ready ones", queueJSON{Messages: count(4), MessagesReady: count(3)},
			"3 ready", "1 message(s) that are not ready"},
		{"a total alone", queueJSON{Messages: count(2)}, "2 message(s)", "2 message(s) that are not ready"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			t.Parallel()
			if got := test.queue.describeCounts(); got != test.wantAll {
				t.Errorf("describeCounts() = %q, want %q", got, test.wantAll)
			}
			if got := test.queue.describeUnseen(); got != test.wantOther {
				t.Errorf("describeUnseen() = %q, want %q", got, test.wantOther)
			}
		})
	}
}
