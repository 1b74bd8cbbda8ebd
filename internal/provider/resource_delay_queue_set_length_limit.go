package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// policiesTimeout bounds the plan's read of a vhost's policies: the
// warning it may bring is not worth a slow plan.
const policiesTimeout = 10 * time.Second

// lengthLimitWarnings warns at plan time when a policy or operator policy
// of the set's vhost limits the length of its TTL queues so that a full
// one sends messages on early (broker.LengthLimit.SendsEarly), as managed
// brokers' operator policies often do. ModifyPlan asks for it in the plans
// of a create or a change only, so that a refresh and a plan without a
// change make no more requests. The policies are read once per vhost and
// run; a user who may not read them, or a broker that does not answer,
// gets no warning and no error: the plan does not depend on it.
func (r *DelayQueueSetResource) lengthLimitWarnings(ctx context.Context, spec topology.Spec, desired topology.Topology) diag.Diagnostics {
	if r.data == nil || r.data.clientErr != nil || r.data.client == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, policiesTimeout)
	defer cancel()
	policies, ok, err := r.data.client.VHostPolicies(ctx, spec.VHost)
	if err != nil || !ok {
		tflog.Debug(ctx, "the vhost's policies were not read: no check of the queues' length limits", map[string]any{
			"vhost": spec.VHost, "readable": ok, "error": fmt.Sprint(err)})
		return nil
	}
	return lengthLimitDiagnostics(spec, desired.Queues, policies)
}

// lengthLimitDiagnostics is one warning naming the policies that make a
// full TTL queue of the set send messages on early, and what to change;
// none when no such limit applies.
func lengthLimitDiagnostics(spec topology.Spec, queues []topology.Queue, policies broker.VHostPolicies) diag.Diagnostics {
	var limited []string
	var limit broker.LengthLimit
	ttlQueues := 0
	for _, q := range queues {
		if q.Arguments.MessageTTL == 0 {
			continue // not a level: the parking lot
		}
		ttlQueues++
		if l := policies.LengthLimitOf(q); l.SendsEarly() {
			limited = append(limited, q.Name)
			limit = l
		}
	}
	if len(limited) == 0 {
		return nil
	}
	var diags diag.Diagnostics
	diags.AddWarning("Queue Length Limit Sends Delayed Messages Early",
		fmt.Sprintf("The %s of vhost %q limits the length of %d of the %d TTL queues of the delay queue set %q (%s). A TTL queue that "+
			"reaches the limit %s: the broker dead-letters that message to the set's next level at once, and it arrives "+
			"before its delay is over. The set works while no level queue holds more messages than the limit at once.\n\n"+
			"To keep every delay: have the broker's operator exclude the set's queues from the policy (a pattern that "+
			"matches none of %s), or raise the limit above the most messages one level holds at once. With "+
			"queue_type = \"quorum\" and dead_letter_strategy = \"at-least-once\" the set's queues overflow with "+
			"reject-publish instead, which refuses a message rather than dead-letter it (a publisher with confirms gets "+
			"a nack).",
			limitedBy(limit), spec.VHost, len(limited), ttlQueues, spec.Name, limitText(limit),
			overflowText(limit.Overflow), exampleNames(limited)))
	return diags
}

// limitedBy names the policies that set the limit.
func limitedBy(l broker.LengthLimit) string {
	var by []string
	if l.OperatorPolicy != "" {
		by = append(by, fmt.Sprintf("operator policy %q", l.OperatorPolicy))
	}
	if l.Policy != "" {
		by = append(by, fmt.Sprintf("policy %q", l.Policy))
	}
	if len(by) == 0 {
		return "queue arguments"
	}
	return strings.Join(by, " and the ")
}

func limitText(l broker.LengthLimit) string {
	var parts []string
	if l.MaxLength > 0 {
		parts = append(parts, fmt.Sprintf("max-length %d", l.MaxLength))
	}
	if l.MaxLengthBytes > 0 {
		parts = append(parts, fmt.Sprintf("max-length-bytes %d", l.MaxLengthBytes))
	}
	return strings.Join(append(parts, "overflow "+l.Overflow), ", ")
}

func overflowText(overflow string) string {
	if overflow == broker.OverflowRejectPublishDLX {
		return "refuses each new message (overflow reject-publish-dlx)"
	}
	return "drops its oldest message (overflow " + overflow + ")"
}

// exampleNames quotes the first two names and says how many more.
func exampleNames(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	quoted := make([]string, 0, 2)
	for _, n := range names[:min(2, len(names))] {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	text := strings.Join(quoted, ", ")
	if more := len(names) - len(quoted); more > 0 {
		text += fmt.Sprintf(" and %d more of the set's queues", more)
	}
	return text
}
