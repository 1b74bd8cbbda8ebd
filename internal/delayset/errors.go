package delayset

import (
	"errors"
	"fmt"
	"strings"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// Stage is how far a step got when it failed.
type Stage int

const (
	// Reading: nothing was changed.
	Reading Stage = iota
	// Applying: part of the change may have been made.
	Applying
	// Draining: the change is made; the draining generations were being
	// waited for or deleted.
	Draining
)

// StageError is a failure of a step, with how far the step got.
type StageError struct {
	Stage Stage
	Err   error
}

func (e *StageError) Error() string { return e.Err.Error() }
func (e *StageError) Unwrap() error { return e.Err }

func failed(stage Stage, err error) error {
	if err == nil {
		return nil
	}
	return &StageError{Stage: stage, Err: err}
}

// ExistsError refuses to create a set whose objects exist already.
type ExistsError struct {
	// Found is the objects of the set the broker holds.
	Found topology.Topology
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%d exchanges and %d queues of the set exist already", len(e.Found.Exchanges), len(e.Found.Queues))
}

// ImportError is an import of objects that explain no set.
type ImportError struct {
	Err error
	// LayoutsMixed: the objects of no one layout could be told apart (the
	// import may name the layout).
	LayoutsMixed bool
}

func (e *ImportError) Error() string { return e.Err.Error() }
func (e *ImportError) Unwrap() error { return e.Err }

// HeldQueue is a queue that holds messages: Messages of them, or, when
// Uncounted is set, as many as the broker could not count.
type HeldQueue struct {
	Queue     string
	Messages  int64
	Uncounted *broker.UncountedError
}

func (h HeldQueue) String() string {
	if h.Uncounted != nil {
		return h.Uncounted.Error()
	}
	return fmt.Sprintf("%s holds %d message(s)", h.Queue, h.Messages)
}

// HoldsMessagesError refuses a change that would delete queues holding
// messages; a refused change changes nothing.
type HoldsMessagesError struct {
	Held []HeldQueue
	// RedeclaredIn is the library layout of a set whose change declares
	// some of those queues again, or "": such a layout's queues have the
	// library's names, so they cannot drain in an older generation.
	RedeclaredIn topology.Layout
}

func (e *HoldsMessagesError) Error() string {
	held := make([]string, len(e.Held))
	for i, h := range e.Held {
		held[i] = h.String()
	}
	return "refusing to delete queues that hold messages: " + strings.Join(held, "; ")
}

// PlanStep is what a plan was working out when it failed.
type PlanStep int

const (
	// PlanningPrior: the set planned from cannot be resolved.
	PlanningPrior PlanStep = iota
	// PlanningSwitch: the generation the change takes.
	PlanningSwitch
	// PlanningRepair: the generation that repairs drifted queues.
	PlanningRepair
	// PlanningObjects: the objects of the set.
	PlanningObjects
)

// PlanError is a plan that cannot be made, with the step that failed.
type PlanError struct {
	Step PlanStep
	Err  error
}

func (e *PlanError) Error() string { return e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// errUnresolved is a plan from a set whose spec could not be resolved.
var errUnresolved = errors.New("the set planned from has no resolved spec")
