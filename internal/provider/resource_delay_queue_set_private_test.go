package provider

import (
	"context"
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// notes is a private state of raw notes by key.
type notes map[string][]byte

func (n notes) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) { return n[key], nil }

func (n notes) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	n[key] = value
	return nil
}

// TestUnreadableNotesAreIgnored checks that a note the provider cannot read
// warns and reads as no note, instead of failing every plan with an error
// the user cannot clear; and that a readable one reads back.
func TestUnreadableNotesAreIgnored(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	garbled := notes{driftedHoldingKey: []byte(`{"not":"a list"}`), switchedAtKey: []byte(`"yesterday"`),
		declaredLogsKey: []byte(`["a.level.00"]`)}
	queues, diags := driftedHolding(ctx, garbled)
	if queues != nil || diags.HasError() || diags.WarningsCount() != 1 {
		t.Errorf("driftedHolding of a garbled note = %v, %v; want nothing and one warning", queues, diags)
	}
	at, diags := switchedAt(ctx, garbled)
	if !at.IsZero() || diags.HasError() || diags.WarningsCount() != 1 {
		t.Errorf("switchedAt of a garbled note = %v, %v; want the zero time and one warning", at, diags)
	}

	marks, diags := declared(ctx, garbled)
	if marks != nil || diags.HasError() || diags.WarningsCount() != 1 {
		t.Errorf("declared of a garbled note = %v, %v; want nothing and one warning", marks, diags)
	}

	readable := notes{driftedHoldingKey: []byte(`["a.level.00"]`)}
	if queues, diags := driftedHolding(ctx, readable); len(queues) != 1 || queues[0] != "a.level.00" || len(diags) > 0 {
		t.Errorf("driftedHolding = %v, %v; want [a.level.00] and no diagnostic", queues, diags)
	}
	written := map[string]broker.LogMark{"a.level.00": {Term: 1, Index: 3}}
	if diags := noteDeclared(ctx, readable, written); diags.HasError() {
		t.Fatal(diags)
	}
	if marks, diags := declared(ctx, readable); !maps.Equal(marks, written) || len(diags) > 0 {
		t.Errorf("declared = %v, %v; want %v and no diagnostic", marks, diags, written)
	}
	if _ = noteDeclared(ctx, readable, nil); readable[declaredLogsKey] != nil {
		t.Errorf("noteDeclared(nil) left %s, want the note removed", readable[declaredLogsKey])
	}
}
