package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// A policy that applies to a delay queue and limits its length makes a
// full queue drop its oldest message (overflow drop-head, the default) or
// refuse the newest one and dead-letter it (reject-publish-dlx): either
// way a TTL queue dead-letters a message before its time, and the set
// sends it on early. Managed brokers often set such a limit on every
// queue with an operator policy, which the set's owner cannot change.
// RabbitMQ 4.3 shows a queue's effective policy with every read of it;
// 4.0 only with its statistics, once they come. So the provider judges a
// set's queues, existing or planned, against the vhost's policies and
// operator policies themselves, which a user with the management tag may
// read (GET /api/policies/{vhost}, /api/operator-policies/{vhost}).

// Overflow behaviours of a full queue (x-overflow, the policy key overflow).
const (
	OverflowDropHead         = "drop-head"
	OverflowRejectPublish    = "reject-publish"
	OverflowRejectPublishDLX = "reject-publish-dlx"
)

// LengthLimit is what the policies of a vhost and a queue's own arguments
// make of its length: the lower of each limit where several set it, and
// the overflow behaviour.
type LengthLimit struct {
	// MaxLength and MaxLengthBytes are the limits, 0 where none applies.
	MaxLength, MaxLengthBytes int64
	// Overflow is the queue's x-overflow argument, else its policy's
	// overflow, else OverflowDropHead.
	Overflow string
	// Policy and OperatorPolicy name the policies that set a limit, ""
	// where none did.
	Policy, OperatorPolicy string
}

// SendsEarly reports whether a full queue dead-letters a message before
// its TTL: a limit applies and the queue overflows by dropping its head
// or dead-lettering what it refuses. With reject-publish the broker
// refuses the message instead, which a publisher with confirms sees.
func (l LengthLimit) SendsEarly() bool {
	return (l.MaxLength > 0 || l.MaxLengthBytes > 0) && l.Overflow != OverflowRejectPublish
}

// Policy is a policy or operator policy of a vhost, as the management API
// lists it.
type Policy struct {
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}

// VHostPolicies are a vhost's policies and operator policies.
type VHostPolicies struct {
	Policies, OperatorPolicies []Policy
}

// LengthLimitOf is the length limit policies make of queue. Of the
// policies, and of the operator policies, that match its name and type,
// the one of the highest priority applies, as the broker picks it; where
// both set a limit, the lower holds. A pattern Go cannot compile
// matches nothing here. The queue's own x-max-length, x-max-length-bytes
// and x-overflow, which the set never declares, count as the broker counts
// them: an argument's limit is one more to take the lowest of, its
// overflow wins over the policy's.
func (p VHostPolicies) LengthLimitOf(queue topology.Queue) LengthLimit {
	limit := LengthLimit{Overflow: OverflowDropHead}
	policy, operator := applying(p.Policies, queue), applying(p.OperatorPolicies, queue)
	if policy != nil {
		if setsLimit(policy.Definition) {
			limit.Policy = policy.Name
		}
		if overflow, ok := policy.Definition["overflow"].(string); ok && overflow != "" {
			limit.Overflow = overflow
		}
	}
	if operator != nil && setsLimit(operator.Definition) {
		limit.OperatorPolicy = operator.Name
	}
	for _, definition := range []map[string]any{definitionOf(policy), definitionOf(operator), argumentLimits(queue)} {
		limit.MaxLength = lower(limit.MaxLength, integer(definition["max-length"]))
		limit.MaxLengthBytes = lower(limit.MaxLengthBytes, integer(definition["max-length-bytes"]))
	}
	if overflow := queue.Arguments.Overflow; overflow != "" {
		limit.Overflow = overflow
	}
	return limit
}

// VHostPolicies reads the policies and operator policies of vhost, once
// per client and vhost: a plan asks for each of its sets. ok is false when
// the user may not read them (or the broker has none of that kind), and
// err only for other failures.
func (c *Client) VHostPolicies(ctx context.Context, vhost string) (_ VHostPolicies, ok bool, err error) {
	c.policies.mu.Lock()
	defer c.policies.mu.Unlock()
	if read, done := c.policies.read[vhost]; done {
		return read.policies, read.ok, nil
	}
	var read vhostPoliciesRead
	read.policies, read.ok, err = c.readVHostPolicies(ctx, vhost)
	if err != nil {
		return VHostPolicies{}, false, err
	}
	if c.policies.read == nil {
		c.policies.read = map[string]vhostPoliciesRead{}
	}
	c.policies.read[vhost] = read
	return read.policies, read.ok, nil
}

func (c *Client) readVHostPolicies(ctx context.Context, vhost string) (p VHostPolicies, ok bool, err error) {
	ctx, report := c.observe(ctx, "read policies", map[string]any{"vhost": vhost})
	defer func() { report(err) }()
	for _, read := range []struct {
		kind string
		into *[]Policy
	}{{"policies", &p.Policies}, {"operator-policies", &p.OperatorPolicies}} {
		err := c.call(ctx, http.MethodGet, apiPath(read.kind, vhost), nil, nil, read.into)
		switch {
		case isRefused(err) || isNotFound(err):
			return VHostPolicies{}, false, nil
		case err != nil:
			return VHostPolicies{}, false, fmt.Errorf("reading the %s of vhost %q: %w", read.kind, vhost, err)
		}
	}
	return p, true, nil
}

// isRefused is a 401 (such as "Not administrator user") or a 403: the
// user may not read it.
func isRefused(err error) bool {
	var auth *AuthError
	return errors.As(err, &auth) || IsAccessRefused(err)
}

// policiesRead are the vhosts' policies a client has read.
type policiesRead struct {
	mu   sync.Mutex
	read map[string]vhostPoliciesRead
}

type vhostPoliciesRead struct {
	policies VHostPolicies
	ok       bool
}

// applying is the policy of the highest priority that matches queue: its
// name by the policy's pattern, its type by apply-to; nil when none does.
// Of equal priorities, the first listed.
func applying(policies []Policy, queue topology.Queue) *Policy {
	var best *Policy
	for i, p := range policies {
		if !appliesToQueue(p.ApplyTo, queue.Arguments.QueueType) {
			continue
		}
		pattern, err := regexp.Compile(p.Pattern)
		if err != nil || !pattern.MatchString(queue.Name) {
			continue
		}
		if best == nil || p.Priority > best.Priority {
			best = &policies[i]
		}
	}
	return best
}

// appliesToQueue: apply-to "all" and "queues" take every queue;
// "classic_queues", "quorum_queues" and "streams" (4.x) those of their type.
func appliesToQueue(applyTo string, queueType topology.QueueType) bool {
	switch applyTo {
	case "all", "queues", "":
		return true
	case "classic_queues":
		return queueType == topology.QueueTypeClassic || queueType == ""
	case "quorum_queues":
		return queueType == topology.QueueTypeQuorum
	case "streams":
		return queueType == "stream"
	}
	return false
}

func setsLimit(definition map[string]any) bool {
	return integer(definition["max-length"]) > 0 || integer(definition["max-length-bytes"]) > 0
}

func definitionOf(p *Policy) map[string]any {
	if p == nil {
		return nil
	}
	return p.Definition
}

// argumentLimits are the queue's own x-max-length and x-max-length-bytes,
// under the policy keys' names.
func argumentLimits(queue topology.Queue) map[string]any {
	limits := map[string]any{}
	for argument, key := range map[string]string{"x-max-length": "max-length", "x-max-length-bytes": "max-length-bytes"} {
		if value, ok := queue.Arguments.Other[argument]; ok {
			limits[key] = value
		}
	}
	return limits
}

// integer reads a limit from JSON (a float64) or an argument's text; 0
// when it is neither or not positive.
func integer(value any) int64 {
	switch v := value.(type) {
	case float64:
		if v >= 1 && v < 1<<62 {
			return int64(v)
		}
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// lower is the lower of two limits, 0 standing for none.
func lower(a, b int64) int64 {
	if a == 0 || b == 0 {
		return max(a, b)
	}
	return slices.Min([]int64{a, b})
}
