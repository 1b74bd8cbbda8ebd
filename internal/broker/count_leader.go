package broker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// The leader's count of a quorum queue, over AMQP, where a peek would be a
// delivery (RabbitMQ 4.0–4.2), and when a 0 of it is believed: the pure
// parts of the counter's leaderCount (count.go).

// leaderQueryTimeout is how long RabbitMQ 4.0–4.2 let a quorum queue's
// leader answer a passive declaration's count (rabbit_quorum_queue:stat/1)
// before answering 0, as for an empty queue.
const leaderQueryTimeout = 250 * time.Millisecond

// slowZeroTries is how many times a leader is asked while it answers 0 no
// sooner than leaderQueryTimeout.
const slowZeroTries = 3

// arrivalsSettle is how long after the client's last deletion of a binding
// a deletion's check asks a leader for its count: a message routed just
// before the binding went reaches the leader's state within it.
const arrivalsSettle = time.Second

// zeroTrusted tells whether a passive declaration's 0 is its leader's
// answer, not the one RabbitMQ gives in its place: it came within the
// broker's timeout, with no consumer, and the member it asked serves right
// after (leaderCount). A member that did not answer and serves again
// milliseconds later would have stopped and recovered in between, and a
// recovering member does not serve.
func zeroTrusted(answer leaderAnswer, after leaderState) bool {
	return answer.ready == 0 && answer.took < leaderQueryTimeout && answer.consumers == 0 && after.serving()
}

// servingLeader stands for a leader that serves, for asking zeroTrusted
// what the answer alone tells.
var servingLeader = leaderState{state: "running", node: "-", online: []string{"-"}}

const (
	argDeadLetterStrategy = "x-dead-letter-strategy"
	atLeastOnce           = "at-least-once"
)

// leaderState is how the broker sees a quorum queue's leader when it
// answers, not as its statistics sampled it.
type leaderState struct {
	// state is "running" when the member the queue's record names as
	// leader is registered on its node and not recovering.
	state string
	// node is the record's leader, the member a passive declaration asks.
	node string
	// online are the nodes where a member of the queue is registered.
	online []string
}

// serving tells whether the member a passive declaration asks was there to
// answer.
func (s leaderState) serving() bool {
	return s.state == "running" && s.node != "" && slices.Contains(s.online, s.node)
}

// leaderStateQuery asks for a queue without statistics, with the items the
// broker reads from the queue's members as it answers.
var leaderStateQuery = url.Values{"disable_stats": {"true"}, "enable_queue_totals": {"true"}}

// parseLeaderState reads a leaderState from the first "state", "node" and
// "online" of a queue's answer to leaderStateQuery (readLeaderState).
func parseLeaderState(raw []byte) (leaderState, error) {
	first, err := firstValues(raw, "state", "node", "online")
	if err != nil {
		return leaderState{}, err
	}
	var s leaderState
	// A missing or odd field leaves its zero value, which serves nothing.
	_ = json.Unmarshal(first["state"], &s.state)
	_ = json.Unmarshal(first["node"], &s.node)
	_ = json.Unmarshal(first["online"], &s.online)
	return s, nil
}

// firstValues returns the first value of each of keys in the JSON object
// raw, where a key may occur more than once.
func firstValues(raw []byte, keys ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	found := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if _, seen := found[key]; !seen && slices.Contains(keys, key) {
			found[key] = value
		}
	}
	return found, nil
}

// strategyByPolicies is the dead-letter strategy that policies give quorum
// queue name, for a broker that shows a queue's effective policy only with
// the statistics it does not collect. known is false when a pattern cannot
// be matched here, or two policies of the top priority disagree.
func strategyByPolicies(policies []Policy, name string) (strategy string, known bool) {
	top, found := 0, false
	for _, p := range policies {
		if !appliesToQueue(p.ApplyTo, topology.QueueTypeQuorum) {
			continue
		}
		pattern, err := regexp.Compile(p.Pattern)
		if err != nil {
			return "", false
		}
		if !pattern.MatchString(name) {
			continue
		}
		s, _ := p.Definition[policyDeadLetterStrategy].(string)
		switch {
		case !found || p.Priority > top:
			strategy, top, found = s, p.Priority, true
		case p.Priority == top && s != strategy:
			return "", false
		}
	}
	return strategy, true
}
