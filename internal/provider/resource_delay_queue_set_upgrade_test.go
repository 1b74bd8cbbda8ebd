package provider

import (
	"context"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// testdata/state-v0-levels-2.json is the state of a 2-level set as the
// provider wrote it before version 1 (exchanges and queues as objects,
// bindings as a list), with an argument a refresh found on one queue.
func TestUpgradeStateFromObjectLists(t *testing.T) {
	raw, err := os.ReadFile("testdata/state-v0-levels-2.json")
	if err != nil {
		t.Fatal(err)
	}
	upgraders := (&DelayQueueSetResource{}).UpgradeState(context.Background())
	var resp resource.UpgradeStateResponse
	upgraders[0].StateUpgrader(context.Background(), resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: raw}}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("upgrade: %v", resp.Diagnostics)
	}
	schema := delayQueueSetSchema()
	upgraded, err := resp.DynamicValue.Unmarshal(schema.Type().TerraformType(context.Background()))
	if err != nil {
		t.Fatalf("the upgraded state does not fit the schema: %v", err)
	}
	var attributes map[string]tftypes.Value
	if err := upgraded.As(&attributes); err != nil {
		t.Fatal(err)
	}
	text := func(name string) string {
		var s string
		if err := attributes[name].As(&s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s
	}
	for name, want := range map[string]string{
		"exchanges": `upgrade-v0.ingest: topic, alternate-exchange "upgrade-v0.unroutable"
upgrade-v0.level.00.done: topic, alternate-exchange "upgrade-v0.unroutable"
upgrade-v0.level.01.done: topic, alternate-exchange "upgrade-v0.unroutable"
upgrade-v0.out: topic, alternate-exchange "upgrade-v0.unroutable"
upgrade-v0.unroutable: fanout`,
		"queues": `upgrade-v0.level.00: x-queue-type "quorum", x-message-ttl 1000, x-dead-letter-exchange "upgrade-v0.level.00.done", x-dead-letter-strategy "at-least-once", x-overflow "reject-publish", x-max-length 10
upgrade-v0.level.01: x-queue-type "quorum", x-message-ttl 2000, x-dead-letter-exchange "upgrade-v0.level.01.done", x-dead-letter-strategy "at-least-once", x-overflow "reject-publish"
upgrade-v0.unroutable: x-queue-type "quorum"`,
		"bindings": `upgrade-v0.ingest -> queue upgrade-v0.level.01, key "#.1.*"
upgrade-v0.ingest -> queue upgrade-v0.level.00, key "#.0.1"
upgrade-v0.ingest -> exchange upgrade-v0.out, key "#.0.0"
upgrade-v0.level.00.done -> exchange upgrade-v0.out, key "#"
upgrade-v0.level.01.done -> queue upgrade-v0.level.00, key "#.1"
upgrade-v0.level.01.done -> exchange upgrade-v0.out, key "#.0"
upgrade-v0.unroutable -> queue upgrade-v0.unroutable, key ""
upgrade-v0.out -> queue bench-out, key "#.*.*"`,
		"name":            "upgrade-v0",
		"ingest_exchange": "upgrade-v0.ingest",
	} {
		if got := text(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	var draining []tftypes.Value
	if err := attributes["draining"].As(&draining); err != nil || attributes["draining"].IsNull() || len(draining) != 0 {
		t.Errorf("draining = %v (%v), want the empty list it was", attributes["draining"], err)
	}
	var routes []tftypes.Value
	if err := attributes["route"].As(&routes); err != nil || len(routes) != 1 {
		t.Errorf("route = %v (%v), want the one route it was", attributes["route"], err)
	}
	if text("id") != "%2F/upgrade-v0" {
		t.Errorf("id = %q, want it as it was", text("id"))
	}
}

func TestUpgradeStateFromObjectListsRefusesWhatItCannotRead(t *testing.T) {
	for name, raw := range map[string]string{
		"not JSON":          `{"name": `,
		"queues not a list": `{"queues": {"name": "q"}}`,
	} {
		var resp resource.UpgradeStateResponse
		upgradeFromObjectLists(context.Background(), resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: []byte(raw)}}, &resp)
		if !resp.Diagnostics.HasError() || resp.DynamicValue != nil {
			t.Errorf("%s: diagnostics %v, value %v; want an error and no value", name, resp.Diagnostics, resp.DynamicValue)
		}
	}
}

// A state written before layout existed has no layout: it upgrades with null there.
func TestUpgradeStateFromObjectListsFillsLaterAttributes(t *testing.T) {
	var resp resource.UpgradeStateResponse
	upgradeFromObjectLists(context.Background(), resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: []byte(`{"name": "old"}`)}}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	upgraded, err := resp.DynamicValue.Unmarshal(delayQueueSetSchema().Type().TerraformType(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	var attributes map[string]tftypes.Value
	if err := upgraded.As(&attributes); err != nil {
		t.Fatal(err)
	}
	if !attributes["layout"].IsNull() || !attributes["bindings"].IsNull() {
		t.Errorf("layout %v, bindings %v; want null", attributes["layout"], attributes["bindings"])
	}
}
