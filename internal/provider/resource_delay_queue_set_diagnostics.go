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
	stage, cause := stageOf(err)
	return brokerError(action, spec, cause, partly[stage])
}

// stageOf is how far a step of package delayset got before err, and the
// failure itself; Draining (the furthest) when it did not fail.
func stageOf(err error) (delayset.Stage, error) {
	var failed *delayset.StageError
	switch {
	case errors.As(err, &failed):
		return failed.Stage, failed.Err
	case err == nil:
		return delayset.Draining, nil
	}
	return delayset.Reading, err
}

// planSummaries name what a plan of package delayset was working out when
// it failed.
var planSummaries = map[delayset.PlanStep]string{
	delayset.PlanningSwitch:  "Cannot Change the Delay Queue Set",
	delayset.PlanningRepair:  "Cannot Repair the Delay Queue Set",
	delayset.PlanningObjects: "Invalid Delay Queue Set",
}

// planDiagnostics are a plan's: those of reading the prior state (prior),
// whose errors say why a set that cannot be resolved cannot be updated,
// and err's, a failure of delayset.Plan.
func planDiagnostics(err error, prior diag.Diagnostics) diag.Diagnostics {
	var planErr *delayset.PlanError
	if !errors.As(err, &planErr) {
		return prior.Warnings()
	}
	if planErr.Step == delayset.PlanningPrior {
		return prior
	}
	return append(prior.Warnings(), problemDiagnostics(planErr.Err, planSummaries[planErr.Step], nil)...)
}

// setWarnings words package delayset's warnings about the set of spec.
func setWarnings(spec topology.Spec, warnings []delayset.Warning) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, w := range warnings {
		switch w.Reason {
		case delayset.DriftRepaired:
			diags.AddWarning("Drifted Queues Hold Messages",
				fmt.Sprintf("The arguments of %s changed outside Terraform, and the broker cannot change them back in place; "+
					"they hold messages, so this apply does not declare them again but starts generation %d of the delay queue set %q "+
					"beside them. They drain as they are, and the first apply that finds them empty deletes them.",
					strings.Join(w.Queues, ", "), w.Generation, spec.Name))
		case delayset.GenerationEmpty:
			diags.AddWarning("A Draining Generation Is Empty",
				fmt.Sprintf("Generation %d of the delay queue set %q held no message at the last refresh, by the queues' statistics: "+
					"this apply deletes its %d queues and their exchanges if a look into each finds it empty.", w.Generation, spec.Name, len(w.Queues)))
		case delayset.GenerationStillDrains:
			diags.AddWarning("A Generation Still Drains", fmt.Sprintf("A generation the counts found empty took a message "+
				"before it was deleted, so it was kept: it drains on, and the next apply that finds it empty deletes it. "+
				"Nothing needs doing; its messages leave on time. The broker said: %s", errorText(w.Err)))
		case delayset.RoutesStayBound:
			diags.Append(routesStayBound(spec, w.Bindings))
		}
	}
	return diags
}

// routesStayBound warns that the apply leaves bindings of a library
// layout's delivery exchange that the plan no longer lists: the library
// binds its destinations there too (NServiceBus before each delayed send,
// a Celery worker at start-up), and deleting one would drop the delayed
// messages on their way.
func routesStayBound(spec topology.Spec, staying []topology.Binding) diag.Diagnostic {
	return diag.NewWarningDiagnostic("Removed Routes Stay Bound",
		fmt.Sprintf("The set no longer manages these bindings of the delivery exchange %s, but this apply does not delete them:\n%s\n\n"+
			"In the %s layout the library binds its destinations from the delivery exchange itself (NServiceBus before each "+
			"delayed send, a Celery worker for its task queues at start-up), and a route's binding is the very binding the "+
			"library makes: deleting it would drop the delayed messages on their way to that destination. The set leaves it "+
			"to the library from now on. Once no delayed message is to reach the destination any more, delete the "+
			"destination, which takes its bindings along, or unbind it yourself.",
			spec.OutExchange(), topology.Lines(staying), spec.Layout))
}

// holdsMessagesText words a refusal to delete queues that hold messages,
// naming the attribute that forces it.
func holdsMessagesText(refused *delayset.HoldsMessagesError) string {
	held := make([]string, len(refused.Held))
	for i, h := range refused.Held {
		held[i] = fmt.Sprintf("%s holds %d message(s)", h.Queue, h.Messages)
		if h.Uncounted != nil {
			held[i] = h.Uncounted.Error()
		}
	}
	text := fmt.Sprintf("refusing to delete queues that hold messages: %s. %s", strings.Join(held, "; "), drainOrForce)
	if refused.RedeclaredIn != "" {
		text += fmt.Sprintf(". In the %s layout the queues have the library's names, so a change of their "+
			"arguments (queue_type, or drift to repair) cannot start a new generation beside them to drain into: "+
			"each queue is deleted and declared again, which is done only to an empty one", refused.RedeclaredIn)
	}
	return text
}

// drainOrForce is the advice of a refusal to delete queues that hold
// messages, or may: said once, after every queue is named.
const drainOrForce = "Wait until they drain, or set force_destroy = true to delete them with their messages"

// errorText is err in the provider's words where package delayset's
// refusal has none of its own.
func errorText(err error) string {
	var refused *delayset.HoldsMessagesError
	if errors.As(err, &refused) {
		return holdsMessagesText(refused)
	}
	return err.Error()
}

// brokerError turns a broker failure into one diagnostic that says what was
// being attempted, on which set, why it failed and, when the failure may
// have struck part-way through changes, what partly says happens next.
func brokerError(action string, spec topology.Spec, err error, partly string) diag.Diagnostics {
	return brokerErrorOf(action, subject{kind: "delay queue set", short: "set", name: spec.Name, vhost: spec.VHost,
		pattern: spec.Layout.ObjectNamePattern(spec.Name), destinations: "each route's destination"}, err, partly)
}

// subject is what a broker error is about: a kind of resource (short in a
// sentence that names it again), its name and vhost, the pattern of its
// objects' names and the destinations it binds.
type subject struct{ kind, short, name, vhost, pattern, destinations string }

// brokerErrorOf is brokerError of any resource's objects.
func brokerErrorOf(action string, about subject, err error, partly string) diag.Diagnostics {
	var diags diag.Diagnostics
	summary := "RabbitMQ Request Failed"
	failed := fmt.Sprintf("Could not %s the %s %q in vhost %q", action, about.kind, about.name, about.vhost)
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
		detail = failed + ": " + holdsMessagesText(held)
	case errors.As(err, &notEmpty):
		summary = "Delay Queues Hold Messages"
		detail += "\n\n" + drainOrForce + "."
	case errors.As(err, &uncounted):
		summary = "Delay Queues May Hold Messages"
		detail += "\n\n" + drainOrForce + "."
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
			"credentials. In vhost %q the user needs configure and read permission on the names of the %s's "+
			"objects (%s), write permission on them and on %s, and the management tag; "+
			"see the provider's documentation of the minimal permissions.",
			about.vhost, about.short, about.pattern, about.destinations)
	case errors.As(err, &auth):
		summary = "RabbitMQ Refused the Credentials"
	case errors.Is(err, broker.ErrVHostNotFound):
		summary = "Vhost Not Found"
		detail = fmt.Sprintf("Could not %s the %s %q: the vhost %q does not exist on the broker. "+
			"Create the vhost first, or correct the %s's vhost.\n\n%s", action, about.kind, about.name, about.vhost, about.short, describeFailures(err, 1))
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

// cannotImport is the error of an import whose objects explain no set,
// the detail ending with hint.
func cannotImport(vhost, name string, err error, hint string) diag.Diagnostic {
	return diag.NewErrorDiagnostic("Cannot Import the Delay Queue Set",
		fmt.Sprintf("The objects of %q in vhost %q do not explain a delay queue set: %s%s", name, vhost, err, hint))
}
