package broker

import (
	"encoding/json"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v3"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/topology"
)

// TestBindingArgumentsRoundTrip: a binding declared with its arguments
// reads back the same through the management API's JSON, and what no
// layout sets (a string or fractional x-delay, a foreign header) shows in
// Other, so that it is drift.
func TestBindingArgumentsRoundTrip(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		sent map[string]any // the arguments the broker lists
		want topology.BindingArguments
	}{
		"none":          {sent: map[string]any{}, want: topology.BindingArguments{}},
		"delay":         {sent: map[string]any{"x-match": "all-with-x", "x-delay": 5000}, want: topology.BindingArguments{Match: "all-with-x", HasDelay: true, Delay: 5000}},
		"delay 0":       {sent: map[string]any{"x-match": "all-with-x", "x-delay": 0}, want: topology.BindingArguments{Match: "all-with-x", HasDelay: true}},
		"longest delay": {sent: map[string]any{"x-delay": topology.MaxTTL}, want: topology.BindingArguments{HasDelay: true, Delay: topology.MaxTTL}},
		"string delay":  {sent: map[string]any{"x-delay": "5000"}, want: topology.BindingArguments{Other: `{"x-delay":"5000"}`}},
		"fraction":      {sent: map[string]any{"x-delay": 1.5}, want: topology.BindingArguments{Other: `{"x-delay":1.5}`}},
		"foreign":       {sent: map[string]any{"b": true, "a": 1, "x-match": "any"}, want: topology.BindingArguments{Match: "any", Other: `{"a":1,"b":true}`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := bindingFromInfo(listedBinding(t, tc.sent)).Arguments
			if got != tc.want {
				t.Fatalf("read %v as %+v, want %+v", tc.sent, got, tc.want)
			}
			binding := topology.Binding{Source: "s", Destination: "d", Arguments: got}
			if again := bindingFromInfo(listedBinding(t, bindingInfo(binding).Arguments)).Arguments; again != got {
				t.Errorf("declared %+v, read back %+v", got, again)
			}
		})
	}
}

// listedBinding is arguments as a listing of the management API decodes them.
func listedBinding(t *testing.T, arguments map[string]any) rabbithole.BindingInfo {
	t.Helper()
	text, err := json.Marshal(arguments)
	if err != nil {
		t.Fatal(err)
	}
	var info rabbithole.BindingInfo
	if err := json.Unmarshal([]byte(`{"source":"s","destination":"d","destination_type":"queue","arguments":`+string(text)+`}`), &info); err != nil {
		t.Fatal(err)
	}
	return info
}
