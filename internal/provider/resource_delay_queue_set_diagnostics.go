package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/delayset"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// problemDiagnostics turns the planner's refusal into one attribute error per
// problem, but those skip leaves out (skip may be nil).
func problemDiagnostics(err error, summary string, skip func(*topology.FieldError) bool) diag.Diagnostics {
	var diags diag.Diagnostics
	var problems topology.ValidationErrors
	if !errors.As(err, &problems) {
		if err != nil {
			diags.AddError(summary, err.Error())
		}
		return diags
	}
	for _, problem := range problems {
		if skip == nil || !skip(problem) {
			diags.AddAttributeError(fieldPath(problem), summary, problem.Error())
		}
	}
	return diags
}

// fieldPath turns a planner field name into the attribute path it concerns.
func fieldPath(problem *topology.FieldError) path.Path {
	route, attribute, isRoute := strings.Cut(problem.Field, ".")
	if route != "route" || problem.Route < 0 {
		return path.Root(problem.Field)
	}
	p := path.Root("route").AtListIndex(problem.Route)
	if isRoute {
		p = p.AtName(attribute)
	}
	return p
}

// setError is brokerError for a step of package delayset that failed,
// with what partly says of the stage it failed at.
func setError(action string, spec topology.Spec, err error, partly map[delayset.Stage]string) diag.Diagnostics {
	stage := delayset.Reading
	var failed *delayset.StageError
	if errors.As(err, &failed) {
		stage, err = failed.Stage, failed.Err
	}
	return brokerError(action, spec, err, partly[stage])
}

// stageOf is how far a step of package delayset got before err; Draining
// (the furthest) when it did not fail.
func stageOf(err error) delayset.Stage {
	var failed *delayset.StageError
	if errors.As(err, &failed) {
		return failed.Stage
	}
	if err == nil {
		return delayset.Draining
	}
	return delayset.Reading
}

// warnings are package delayset's warnings as diagnostics.
func warnings(ws []delayset.Warning) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, w := range ws {
		diags.AddWarning(w.Summary, w.Detail)
	}
	return diags
}

// brokerError turns a broker failure into one diagnostic that says what was
// being attempted, on which set, why it failed and, when the failure may
// have struck part-way through changes, what partly says happens next.
func brokerError(action string, spec topology.Spec, err error, partly string) diag.Diagnostics {
	var diags diag.Diagnostics
	summary := "RabbitMQ Request Failed"
	failed := fmt.Sprintf("Could not %s the delay queue set %q in vhost %q", action, spec.Name, spec.VHost)
	detail := failed + ": " + describeFailures(err, 5)
	var (
		unreachable *broker.UnreachableError
		auth        *broker.AuthError
		held        *delayset.HoldsMessagesError
		notEmpty    *broker.QueueNotEmptyError
		uncounted   *broker.UncountedError
	)
	switch {
	case errors.As(err, &held):
		summary, partly = "Delay Queues Hold Messages", "" // refused before any change
	case errors.As(err, &notEmpty):
		summary = "Delay Queues Hold Messages"
	case errors.As(err, &uncounted):
		summary = "Delay Queues May Hold Messages"
	case errors.As(err, &unreachable):
		// Every request failed alike: the first says it.
		summary = "Cannot Reach RabbitMQ"
		detail = fmt.Sprintf("%s: the RabbitMQ management API at %s did not answer.\n\n%s",
			failed, unreachable.Endpoint, describeFailures(err, 1))
		if partly != "" && action != "create" {
			// The set was read just before: the broker may be up, and one queue stuck.
			partly += " If the broker answers other requests and the failure above names a quorum queue, " +
				"that queue may be stuck without a leader since its declaration was cut off (RabbitMQ 3.10 " +
				"does that) and will never answer. Delete it by hand (the broker takes 5 s to give up on its " +
				"leader), then apply again."
		}
	case broker.IsAccessRefused(err):
		summary = "RabbitMQ Refused the Operation"
		detail += fmt.Sprintf("\n\nThe broker answers \"Access refused.\" when the user lacks a permission, even with the right "+
			"credentials. In vhost %q the user needs configure and read permission on the names of the set's "+
			"objects (%s), write permission on them and on each route's destination, and the management tag; "+
			"see the provider's documentation of the minimal permissions.",
			spec.VHost, spec.Layout.ObjectNamePattern(spec.Name))
	case errors.As(err, &auth):
		summary = "RabbitMQ Refused the Credentials"
	case errors.Is(err, broker.ErrVHostNotFound):
		summary = "Vhost Not Found"
		detail = fmt.Sprintf("Could not %s the delay queue set %q: the vhost %q does not exist on the broker. "+
			"Create the vhost first, or correct the set's vhost.\n\n%s", action, spec.Name, spec.VHost, describeFailures(err, 1))
	}
	if partly != "" {
		detail += "\n\n" + partly
	}
	diags.AddError(summary, detail)
	return diags
}

// describeFailures writes the first limit of the failures joined in err
// (Apply and HeldMessages join one per change or queue), one a line, and how
// many more there were.
func describeFailures(err error, limit int) string {
	failures := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		failures = joined.Unwrap()
	}
	lines := make([]string, 0, limit+1)
	for _, failure := range failures[:min(limit, len(failures))] {
		lines = append(lines, failure.Error())
	}
	if more := len(failures) - limit; more > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more", more))
	}
	return strings.Join(lines, "\n")
}

func firstObjectName(t topology.Topology) string {
	if len(t.Exchanges) > 0 {
		return t.Exchanges[0].Name
	}
	return t.Queues[0].Name
}

// alreadyExists refuses to create a set whose objects, some of actual,
// exist already, and says how to manage them instead.
func alreadyExists(spec topology.Spec, actual topology.Topology) diag.Diagnostics {
	var diags diag.Diagnostics
	if spec.Layout.DeclaredByLibrary() {
		diags.AddError("Delay Queue Set Already Exists",
			fmt.Sprintf("Objects of the %s layout already exist in vhost %q (for example %s). Its names are the library's, "+
				"so a vhost holds at most one set of that layout: if it is the library's own, import it with "+
				"`terraform import <address> %s` to manage it; if another resource manages it, keep one of the two.",
				spec.Layout, spec.VHost, firstObjectName(actual), importID(spec.VHost, spec.Name)))
		return diags
	}
	diags.AddError("Delay Queue Set Already Exists",
		fmt.Sprintf("Objects of the set %q already exist in vhost %q (for example %s). Import the set with "+
			"`terraform import <address> %s` to manage it, or choose another name.",
			spec.Name, spec.VHost, firstObjectName(actual), importID(spec.VHost, spec.Name)))
	return diags
}

// removedRoutesStayBound warns when a plan of a set of a library layout
// drops routes whose bindings the last refresh found on the broker: the
// plan no longer lists those bindings, yet the apply leaves them where they
// are, because the library binds its destinations from the delivery
// exchange too (NServiceBus before each delayed send, a Celery worker at
// start-up), and on the broker a route's binding and the library's for
// the same destination are one binding. Deleting it would drop the delayed
// messages on their way there. state is the prior state, desired the plan.
func removedRoutesStayBound(state delayQueueSetModel, resolved topology.Spec, desired topology.Topology) diag.Diagnostics {
	var diags diag.Diagnostics
	if !resolved.Layout.DeclaredByLibrary() {
		return diags
	}
	_, prior, priorDiags := planOf(state, shownOf(state))
	if priorDiags.HasError() {
		return diags // a state that plans no set had no routes to remove
	}
	onBroker := map[string]bool{}
	for _, line := range lines(state.Bindings) {
		onBroker[line] = true
	}
	var staying []string
	for _, b := range topology.LibraryBindings(resolved, desired, prior) {
		if onBroker[b.String()] {
			staying = append(staying, b.String())
		}
	}
	if len(staying) > 0 {
		diags.AddWarning("Removed Routes Stay Bound",
			fmt.Sprintf("The set no longer manages these bindings of the delivery exchange %s, but this apply does not delete them:\n%s\n\n"+
				"In the %s layout the library binds its destinations from the delivery exchange itself (NServiceBus before each "+
				"delayed send, a Celery worker for its task queues at start-up), and a route's binding is the very binding the "+
				"library makes: deleting it would drop the delayed messages on their way to that destination. The set leaves it "+
				"to the library from now on. Once no delayed message is to reach the destination any more, delete the "+
				"destination, which takes its bindings along, or unbind it yourself.",
				resolved.OutExchange(), strings.Join(staying, "\n"), resolved.Layout))
	}
	return diags
}

// cannotImport is the error of an import whose objects explain no set,
// the detail ending with hint.
func cannotImport(vhost, name string, err error, hint string) diag.Diagnostic {
	return diag.NewErrorDiagnostic("Cannot Import the Delay Queue Set",
		fmt.Sprintf("The objects of %q in vhost %q do not explain a delay queue set: %s%s", name, vhost, err, hint))
}
