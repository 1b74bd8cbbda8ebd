package provider

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestBrokerError_accessRefusedNamesTheLayoutsObjects: the permissions an
// "Access refused." asks for are on the names of the set's objects in its
// layout: a library's fixed names, not <name>.ingest and the like.
func TestBrokerError_accessRefusedNamesTheLayoutsObjects(t *testing.T) {
	t.Parallel()
	refused := &broker.APIError{Method: http.MethodPut, Path: "/api/queues/v/q", StatusCode: http.StatusForbidden,
		Code: "not_authorised", Reason: "Access refused."}
	tests := map[string]struct {
		spec      topology.Spec
		want, not string
	}{
		"default": {spec: topology.Spec{Name: "delay", VHost: "v"}, want: topology.Names("delay").ObjectNamePattern()},
		"nservicebus": {spec: topology.Spec{Name: "delay", VHost: "v", Layout: topology.LayoutNServiceBus},
			want: topology.LayoutNServiceBus.ObjectNamePattern("delay"), not: topology.Names("delay").ObjectNamePattern()},
		"celery": {spec: topology.Spec{Name: "delay", VHost: "v", Layout: topology.LayoutCelery},
			want: topology.LayoutCelery.ObjectNamePattern("delay"), not: topology.Names("delay").ObjectNamePattern()},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags := brokerError("update", tc.spec, refused, "")
			if len(diags) != 1 || diags[0].Summary() != "RabbitMQ Refused the Operation" {
				t.Fatalf("diagnostics = %v, want one \"RabbitMQ Refused the Operation\"", diags)
			}
			detail := diags[0].Detail()
			if !strings.Contains(detail, "("+tc.want+")") {
				t.Errorf("the detail does not name the pattern %s of the set's objects:\n%s", tc.want, detail)
			}
			if tc.not != "" && regexp.MustCompile(regexp.QuoteMeta(tc.not)).MatchString(detail) {
				t.Errorf("the detail names the default layout's pattern %s:\n%s", tc.not, detail)
			}
		})
	}
}

// TestRemovedRoutesStayBound: a plan (delayset.Plan from what the state
// remembers, worded by setWarnings) of a library layout that drops a
// route whose binding the last refresh found warns, naming the binding and
// that it stays; a route kept, a removed route whose binding was already
// gone, a library's binding no route ever listed (the refresh shows none)
// and the default layout do not.
func TestRemovedRoutesStayBound(t *testing.T) {
	t.Parallel()
	sales := topology.Route{Destination: "Sales", DestinationType: topology.DestinationExchange, Key: "Sales"}
	billing := topology.Route{Destination: "Billing", DestinationType: topology.DestinationExchange, Key: "Billing"}
	billingBinding := `nsb.v2.delay-delivery -> exchange Billing, key "#.Billing"`
	nsb := func(routes ...topology.Route) topology.Spec {
		return topology.Spec{Name: "nsb", VHost: "/", Layout: topology.LayoutNServiceBus, Routes: routes}
	}
	defaultSet := func(routes ...topology.Route) topology.Spec {
		return topology.Spec{Name: "delay", VHost: "/", Levels: 2, Routes: routes}
	}
	tests := map[string]struct {
		state delayQueueSetModel
		plan  topology.Spec
		warns bool
	}{
		"a removed route's binding stays":      {testModelOf(t, nsb(sales, billing)), nsb(sales), true},
		"routes kept":                          {testModelOf(t, nsb(sales, billing)), nsb(sales, billing), false},
		"a new route":                          {testModelOf(t, nsb(sales)), nsb(sales, billing), false},
		"the removed route's binding is gone":  {testModelOf(t, nsb(sales, billing), billing), nsb(sales), false},
		"the default layout deletes its out's": {testModelOf(t, defaultSet(sales, billing)), defaultSet(sales), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resolved, err := topology.Resolve(tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			prior, priorDiags := rememberedOf(t.Context(), tc.state, nil)
			if priorDiags.HasError() {
				t.Fatal(priorDiags)
			}
			planned, err := delayset.Plan(prior, resolved, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			diags := setWarnings(planned.Spec, planned.Warnings)
			if !tc.warns {
				if len(diags) > 0 {
					t.Errorf("diagnostics = %v, want none", diags)
				}
				return
			}
			if len(diags) != 1 || diags.WarningsCount() != 1 || !strings.Contains(diags[0].Detail(), billingBinding) ||
				strings.Contains(diags[0].Detail(), "#.Sales") {
				t.Errorf("diagnostics = %v, want one warning naming %s alone", diags, billingBinding)
			}
		})
	}
}

// TestSetWarnings: each reason of package delayset's warnings is one
// warning, worded with its values.
func TestSetWarnings(t *testing.T) {
	t.Parallel()
	spec := topology.Spec{Name: "delay", VHost: "/", Layout: topology.LayoutCelery}
	refused := &delayset.HoldsMessagesError{Held: []delayset.HeldQueue{{Queue: "delay.level.00", Messages: 2}}}
	tests := map[string]struct {
		warning delayset.Warning
		summary string
		detail  []string
	}{
		"drift repaired": {delayset.Warning{Reason: delayset.DriftRepaired, Generation: 2, Queues: []string{"delay.level.01", "delay.level.02"}},
			"Drifted Queues Hold Messages", []string{"delay.level.01, delay.level.02", "starts generation 2", `"delay"`}},
		"a generation empty": {delayset.Warning{Reason: delayset.GenerationEmpty, Generation: 1, Queues: []string{"a", "b", "c"}},
			"A Draining Generation Is Empty", []string{"Generation 1 ", "deletes its 3 queues"}},
		"a generation still drains": {delayset.Warning{Reason: delayset.GenerationStillDrains, Err: refused},
			"A Generation Still Drains", []string{"delay.level.00 holds 2 message(s)", "force_destroy = true"}},
		"routes stay bound": {delayset.Warning{Reason: delayset.RoutesStayBound, Bindings: []topology.Binding{
			{Source: "celery_delayed_delivery", Destination: "tasks", DestinationType: topology.DestinationQueue, RoutingKey: "#.tasks"}}},
			"Removed Routes Stay Bound", []string{`celery_delayed_delivery -> queue tasks, key "#.tasks"`, "In the celery layout"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags := setWarnings(spec, []delayset.Warning{tc.warning})
			if len(diags) != 1 || diags.WarningsCount() != 1 || diags[0].Summary() != tc.summary {
				t.Fatalf("diagnostics = %v, want one warning %q", diags, tc.summary)
			}
			for _, want := range tc.detail {
				if !strings.Contains(diags[0].Detail(), want) {
					t.Errorf("the detail lacks %q:\n%s", want, diags[0].Detail())
				}
			}
		})
	}
}

// TestBrokerError_holdsMessages: a refusal to delete queues that hold
// messages names each with its count, or why it could not be counted, and
// the attribute that forces the deletion; in a library layout, why no
// generation can drain them.
func TestBrokerError_holdsMessages(t *testing.T) {
	t.Parallel()
	refused := &delayset.HoldsMessagesError{Held: []delayset.HeldQueue{{Queue: "q1", Messages: 3}}, RedeclaredIn: topology.LayoutCelery}
	diags := setError("update", topology.Spec{Name: "delay", VHost: "/"}, &delayset.StageError{Stage: delayset.Applying, Err: refused},
		map[delayset.Stage]string{delayset.Applying: "Part of the change may have been made."})
	if len(diags) != 1 || diags[0].Summary() != "Delay Queues Hold Messages" {
		t.Fatalf("diagnostics = %v, want one \"Delay Queues Hold Messages\"", diags)
	}
	for _, want := range []string{"q1 holds 3 message(s)", "force_destroy = true", "In the celery layout the queues have the library's names"} {
		if !strings.Contains(diags[0].Detail(), want) {
			t.Errorf("the detail lacks %q:\n%s", want, diags[0].Detail())
		}
	}
	if strings.Contains(diags[0].Detail(), "Part of the change") {
		t.Errorf("a refusal changed nothing, yet the detail says it may have:\n%s", diags[0].Detail())
	}
}

// TestBrokerError_forceAdviceOnce: a refusal to delete queues that hold
// messages, or may, names force_destroy once, however many queues it
// names and whether the guard or the deletion itself refused.
func TestBrokerError_forceAdviceOnce(t *testing.T) {
	t.Parallel()
	mayHold := func(queue string, messages int64) *broker.UncountedError {
		return &broker.UncountedError{VHost: "/", Queue: queue, Version: "4.0.5", Messages: messages,
			Reason: "only its management statistics, which lag by up to 10s, count 1 ready"}
	}
	deleting := func(queue string, err error) error {
		return &broker.ChangeError{Change: topology.Change{Kind: topology.DeleteQueue, Queue: &topology.Queue{Name: queue}}, Err: err}
	}
	tests := map[string]struct {
		err     error
		summary string
	}{
		"the guard refused": {err: &delayset.HoldsMessagesError{Held: []delayset.HeldQueue{
			{Queue: "q1", Messages: 1, Uncounted: mayHold("q1", 1)},
			{Queue: "q2", Messages: 1, Uncounted: mayHold("q2", 0)},
			{Queue: "q3", Messages: 3},
		}}, summary: "Delay Queues Hold Messages"},
		"the deletion found it uncounted": {err: errors.Join(deleting("q1", mayHold("q1", 1)), deleting("q2", mayHold("q2", 0))),
			summary: "Delay Queues May Hold Messages"},
		"the deletion found it not empty": {err: deleting("q3", &broker.QueueNotEmptyError{Queue: "q3", Messages: 3}),
			summary: "Delay Queues Hold Messages"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags := setError("destroy", topology.Spec{Name: "delay", VHost: "/"}, &delayset.StageError{Stage: delayset.Applying, Err: tc.err}, nil)
			if len(diags) != 1 || diags[0].Summary() != tc.summary {
				t.Fatalf("diagnostics = %v, want one %q", diags, tc.summary)
			}
			if n := strings.Count(diags[0].Detail(), "force_destroy"); n != 1 {
				t.Errorf("the detail names force_destroy %d times, want once:\n%s", n, diags[0].Detail())
			}
		})
	}
}
