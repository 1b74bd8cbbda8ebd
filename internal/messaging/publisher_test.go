package messaging

import (
	"strings"
	"testing"
	"time"
)

// TestNewPublisherRefusesKeyFormat checks that a set whose routing keys
// cannot be written is refused before any channel is opened (there is no
// connection here), with the planner's words about the field at fault.
func TestNewPublisherRefusesKeyFormat(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		set  Set
		want string
	}{
		"radix 3":  {set: Set{Levels: 2, Resolution: time.Second, Radix: 3}, want: "radix: must be one of 2, 4, 8, 16, 256, got 3"},
		"0 levels": {set: Set{Levels: 0, Resolution: time.Second, Radix: 16}, want: "levels: must be between 1 and 32, got 0"},
		"radix 16 past the broker's TTL": {set: Set{Levels: 10, Resolution: time.Second, Radix: 16},
			want: "levels: 10 levels of radix 16 at resolution 1s"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			publisher, err := NewPublisher(nil, tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewPublisher(%+v) = %v, %v; want an error saying %q", tc.set, publisher, err, tc.want)
			}
		})
	}
}
