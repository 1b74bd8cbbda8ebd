package broker

import "testing"

// The properties keys RabbitMQ 3.10.8's management API answered for
// bindings without arguments with these routing keys (GET /api/bindings).
func TestPropertiesKey(t *testing.T) {
	for routingKey, want := range map[string]string{
		"":        "~",
		"#":       "%23",
		"#.0.1":   "%23.0.1",
		"#.1.*.*": "%23.1.%2A.%2A",
		"a b":     "a+b",
		"a~b":     "a%7Eb",
		"n+m":     "n%2Bm",
		"p%q":     "p%25q",
		"x/y":     "x%2Fy",
	} {
		if got := propertiesKey(routingKey); got != want {
			t.Errorf("propertiesKey(%q) = %q, want %q", routingKey, got, want)
		}
	}
}
