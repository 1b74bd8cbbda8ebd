package provider

import (
	"testing"

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
