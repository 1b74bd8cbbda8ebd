package provider

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

func TestSetPlacement(t *testing.T) {
	t.Parallel()
	cluster := []string{"rabbit@a", "rabbit@b", "rabbit@c"}
	var m delayQueueSetModel
	setPlacement(&m, map[string]broker.Placement{
		"d.level.01":   {Leader: "rabbit@b", Members: cluster, Online: cluster},
		"d.level.00":   {Leader: "rabbit@a", Members: cluster, Online: []string{"rabbit@a", "rabbit@b"}},
		"d.level.02":   {Members: cluster, Online: []string{"rabbit@a"}},
		"d.unroutable": {Leader: "rabbit@a"}, // classic
	})
	want := "d.level.00: leader rabbit@a, members rabbit@a rabbit@b rabbit@c, offline rabbit@c\n" +
		"d.level.01: leader rabbit@b, members rabbit@a rabbit@b rabbit@c\n" +
		"d.level.02: no leader, members rabbit@a rabbit@b rabbit@c, offline rabbit@b rabbit@c\n" +
		"d.unroutable: node rabbit@a"
	if got := m.Placement.ValueString(); got != want {
		t.Errorf("placement:\n%s\nwant:\n%s", got, want)
	}
	wantLeaders := types.MapValueMust(types.Int64Type, map[string]attr.Value{
		"rabbit@a": types.Int64Value(2), "rabbit@b": types.Int64Value(1),
	})
	if !m.Leaders.Equal(wantLeaders) {
		t.Errorf("leaders = %s, want %s", m.Leaders, wantLeaders)
	}

	setPlacement(&m, nil)
	if !m.Placement.IsNull() || !m.Leaders.IsNull() {
		t.Errorf("no queue: placement %s, leaders %s; want both null", m.Placement, m.Leaders)
	}
}

// TestKeptMembers checks what an apply shows of members: the plan's where
// it knew them, what the apply read for the others, "" for one the read
// did not find.
func TestKeptMembers(t *testing.T) {
	t.Parallel()
	planned := types.MapValueMust(types.StringType, map[string]attr.Value{
		"kept": types.StringValue("rabbit@a rabbit@b"), "declared": types.StringUnknown(), "missed": types.StringUnknown(),
	})
	read := types.MapValueMust(types.StringType, map[string]attr.Value{
		"kept": types.StringValue("rabbit@a rabbit@c"), "declared": types.StringValue("rabbit@b rabbit@c"),
	})
	want := map[string]string{"kept": "rabbit@a rabbit@b", "declared": "rabbit@b rabbit@c", "missed": ""}
	if d := cmp.Diff(want, membersShown(keptMembers(planned, read))); d != "" {
		t.Errorf("kept members (-want +got):\n%s", d)
	}
	if got := keptMembers(types.MapUnknown(types.StringType), read); !got.Equal(read) {
		t.Errorf("members planned unknown: got %s, want what the apply read", got)
	}
}

// TestMembersOf checks the members of queues: a quorum queue's members, a
// classic queue's node, and none for a queue no read found.
func TestMembersOf(t *testing.T) {
	t.Parallel()
	queues := types.StringValue("d.level.00: x-queue-type \"quorum\"\nd.level.01: x-queue-type \"quorum\"\nd.unroutable")
	got := membersShown(membersOf(queues, map[string]broker.Placement{
		"d.level.00":   {Leader: "rabbit@b", Members: []string{"rabbit@a", "rabbit@b"}},
		"d.unroutable": {Leader: "rabbit@c"},
		"d.level.09":   {Leader: "rabbit@c"}, // not the set's now
	}))
	want := map[string]string{"d.level.00": "rabbit@a rabbit@b", "d.unroutable": "rabbit@c"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("members (-want +got):\n%s", d)
	}
}

// membersShown is a members value as a plan shows it, unknownMembers for
// an unknown element.
func membersShown(members types.Map) map[string]string {
	if members.IsUnknown() || members.IsNull() {
		return map[string]string{"": members.String()}
	}
	shown := map[string]string{}
	for queue, v := range members.Elements() {
		s, _ := v.(types.String)
		shown[queue] = s.ValueString()
		if s.IsUnknown() {
			shown[queue] = unknownMembers
		}
	}
	return shown
}

// unknownMembers stands for a queue whose members a plan leaves to the apply.
const unknownMembers = "(known after apply)"
