package broker

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := map[string]struct{ raw, want string }{
		"no userinfo":           {"http://127.0.0.1:15672/api", "http://127.0.0.1:15672/api"},
		"password":              {"amqp://admin:S3cret@rabbit.internal:5672", "amqp://admin:xxxxx@rabbit.internal:5672"},
		"user only":             {"http://admin@rabbit.internal", "http://admin@rabbit.internal"},
		"unparsable, password":  {"http://admin:S3cret@[::1:15672/x", "http://xxxxx@[::1:15672/x"},
		"unparsable, no scheme": {"admin:S3cret@%zz", "xxxxx@%zz"},
		"@ in the password":     {"http://a:S3c@ret@[bad", "http://xxxxx@[bad"},
		"not a URL at all":      {"%zz", "%zz"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := RedactURL(tc.raw)
			if got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.raw, got, tc.want)
			}
			if strings.Contains(got, "S3c") {
				t.Errorf("RedactURL(%q) = %q shows the password", tc.raw, got)
			}
		})
	}
}
