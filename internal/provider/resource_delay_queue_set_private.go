package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// The provider's notes in a resource's private state, which a plan reads.

// privateState is the provider's private data of a resource, as the
// framework passes it (its type is internal to the framework).
type privateState interface {
	GetKey(context.Context, string) ([]byte, diag.Diagnostics)
	SetKey(context.Context, string, []byte) diag.Diagnostics
}

// driftedHoldingKey is the private state key under which a refresh notes
// the TTL queues of the current generation that drifted and hold messages,
// for the next plan to repair through a new generation.
const driftedHoldingKey = "drifted_queues_holding_messages"

// noteDriftedHolding notes in private the TTL queues of the current
// generation whose arguments drifted and that hold messages, as a refresh
// found them (delayset.Remembered.DriftedHolding), or that there are none.
func noteDriftedHolding(ctx context.Context, private privateState, holding []string) diag.Diagnostics {
	if len(holding) == 0 {
		return private.SetKey(ctx, driftedHoldingKey, nil)
	}
	value, _ := json.Marshal(holding) // a list of strings always marshals
	return private.SetKey(ctx, driftedHoldingKey, value)
}

// driftedHolding reads what noteDriftedHolding noted.
func driftedHolding(ctx context.Context, private privateState) ([]string, diag.Diagnostics) {
	value, diags := private.GetKey(ctx, driftedHoldingKey)
	if diags.HasError() || len(value) == 0 {
		return nil, diags
	}
	var queues []string
	if err := json.Unmarshal(value, &queues); err != nil {
		diags.Append(unreadableNote(driftedHoldingKey, "a list of queue names", err))
		return nil, diags
	}
	return queues, diags
}

// switchedAtKey is the private state key under which an update that starts
// a new generation notes when the one before it stopped taking messages:
// until broker.StatisticsLag has passed, that generation's statistics may
// count nothing while it holds messages.
const switchedAtKey = "generation_switched_at"

// noteSwitchedAt notes in private when the last switch happened.
func noteSwitchedAt(ctx context.Context, private privateState, at time.Time) diag.Diagnostics {
	value, _ := json.Marshal(at) // a time always marshals
	return private.SetKey(ctx, switchedAtKey, value)
}

// switchedAt reads when the last switch noteSwitchedAt noted happened, or
// the zero time when none is noted (see delayset.Settled).
func switchedAt(ctx context.Context, private privateState) (time.Time, diag.Diagnostics) {
	value, diags := private.GetKey(ctx, switchedAtKey)
	if diags.HasError() || len(value) == 0 {
		return time.Time{}, diags
	}
	var at time.Time
	if err := json.Unmarshal(value, &at); err != nil {
		diags.Append(unreadableNote(switchedAtKey, "a time", err))
		return time.Time{}, diags
	}
	return at, diags
}

// declaredLogsKey is the private state key under which an apply notes
// where the logs of the quorum queues it created ended right after their
// declarations (delayset.Remembered.Declared): a later count compares
// each log with its mark instead of waiting for the queue's first
// statistics.
const declaredLogsKey = "declared_quorum_queue_logs"

// noteDeclared notes marks in private, or that there are none.
func noteDeclared(ctx context.Context, private privateState, marks map[string]broker.LogMark) diag.Diagnostics {
	if len(marks) == 0 {
		return private.SetKey(ctx, declaredLogsKey, nil)
	}
	value, _ := json.Marshal(marks) // a map of names to numbers always marshals
	return private.SetKey(ctx, declaredLogsKey, value)
}

// declared reads what noteDeclared noted.
func declared(ctx context.Context, private privateState) (map[string]broker.LogMark, diag.Diagnostics) {
	value, diags := private.GetKey(ctx, declaredLogsKey)
	if diags.HasError() || len(value) == 0 {
		return nil, diags
	}
	var marks map[string]broker.LogMark
	if err := json.Unmarshal(value, &marks); err != nil {
		diags.Append(unreadableNote(declaredLogsKey, "a map of queue names to log marks", err))
		return nil, diags
	}
	return marks, diags
}

// unreadableNote warns that a note of the provider's in the private state
// could not be read. The notes only spare a refresh or an apply work (a
// look at drifted queues, a wait for the statistics); the exact check
// before any deletion does not depend on them. So the note is ignored
// rather than failing every plan, and the next apply writes it anew.
func unreadableNote(key, want string, err error) diag.Diagnostic {
	return diag.NewWarningDiagnostic("Unreadable Private State Ignored",
		fmt.Sprintf("The provider's note %q in the state is not %s (%v), so it is ignored: nothing needs doing, "+
			"and the next apply that changes the set writes it again. No queue is deleted on the strength of a note: "+
			"each is checked for messages first.", key, want, err))
}
