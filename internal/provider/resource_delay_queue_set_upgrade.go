package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

var _ resource.ResourceWithUpgradeState = &DelayQueueSetResource{}

// delayQueueSetSchemaVersion is the version of the resource's state: 1 since
// exchanges, queues and bindings are lines of one text each.
const delayQueueSetSchemaVersion = 1

// UpgradeState reads a state of version 0, whose exchanges and queues were
// lists of objects and bindings a list of lines.
func (r *DelayQueueSetResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: upgradeFromObjectLists}}
}

// Version 0's exchange and queue objects, as its JSON state holds them.
type (
	exchangeV0 struct {
		Name              string            `json:"name"`
		Type              string            `json:"type"`
		AlternateExchange *string           `json:"alternate_exchange"`
		OtherArguments    map[string]string `json:"other_arguments"`
	}
	queueV0 struct {
		Name               string            `json:"name"`
		QueueType          *string           `json:"queue_type"`
		MessageTTL         *int64            `json:"message_ttl"`
		DeadLetterExchange *string           `json:"dead_letter_exchange"`
		DeadLetterStrategy *string           `json:"dead_letter_strategy"`
		Overflow           *string           `json:"overflow"`
		OtherArguments     map[string]string `json:"other_arguments"`
	}
)

// upgradeFromObjectLists rewrites a version 0 state's exchanges, queues and
// bindings as the lines version 1 shows (topology.Lines); everything else
// is kept as it was.
func upgradeFromObjectLists(_ context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	state, err := upgradedObjectLists(req.RawState.JSON)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Upgrade the Delay Queue Set's State",
			"The state was written by an earlier version of this provider (schema version 0) and cannot be read: "+err.Error())
		return
	}
	resp.DynamicValue = &tfprotov6.DynamicValue{JSON: state}
}

// upgradedObjectLists is the JSON state of version 1 that the version 0
// state raw upgrades to: its object lists rewritten as texts (objectTexts),
// the attributes added since null.
func upgradedObjectLists(raw []byte) ([]byte, error) {
	var state map[string]json.RawMessage
	if err := json.Unmarshal(raw, &state); err != nil {
		return nil, err
	}
	texts, err := objectTexts(state)
	if err != nil {
		return nil, err
	}
	for name, text := range texts {
		encoded, err := json.Marshal(text)
		if err != nil {
			return nil, err
		}
		state[name] = encoded
	}
	// Attributes added since the state was written are null.
	schema := delayQueueSetSchema()
	for _, names := range []iter.Seq[string]{maps.Keys(schema.Attributes), maps.Keys(schema.Blocks)} {
		for name := range names {
			if _, ok := state[name]; !ok {
				state[name] = json.RawMessage("null")
			}
		}
	}
	return json.Marshal(state)
}

// objectTexts reads a version 0 state's exchanges, queues and bindings and
// writes each kind as the text of lines version 1 shows; a null list (a
// state that never got its objects) stays null.
func objectTexts(state map[string]json.RawMessage) (map[string]*string, error) {
	var (
		t        topology.Topology
		bindings []string
		v0       struct {
			exchanges []exchangeV0
			queues    []queueV0
		}
	)
	for name, target := range map[string]any{"exchanges": &v0.exchanges, "queues": &v0.queues, "bindings": &bindings} {
		if err := json.Unmarshal(orNull(state[name]), target); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, x := range v0.exchanges {
		t.Exchanges = append(t.Exchanges, topology.Exchange{Name: x.Name, Type: x.Type,
			Arguments: topology.ExchangeArguments{AlternateExchange: deref(x.AlternateExchange), Other: x.OtherArguments}})
	}
	for _, q := range v0.queues {
		t.Queues = append(t.Queues, topology.Queue{Name: q.Name, Arguments: topology.QueueArguments{
			MessageTTL: deref(q.MessageTTL), DeadLetterExchange: deref(q.DeadLetterExchange),
			QueueType: topology.QueueType(deref(q.QueueType)), DeadLetterStrategy: topology.DeadLetterStrategy(deref(q.DeadLetterStrategy)),
			Overflow: deref(q.Overflow), Other: q.OtherArguments,
		}})
	}
	texts := map[string]*string{"exchanges": nil, "queues": nil, "bindings": nil}
	if v0.exchanges != nil {
		texts["exchanges"] = ptr(topology.Lines(t.Exchanges))
	}
	if v0.queues != nil {
		texts["queues"] = ptr(topology.Lines(t.Queues))
	}
	if bindings != nil {
		texts["bindings"] = ptr(strings.Join(bindings, "\n"))
	}
	return texts, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }
