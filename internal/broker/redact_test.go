package broker

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := map[string]struct{ raw, want string }{
		"no userinfo":           {"http://127.0.0.1:15672/api", "http://127.0.0.1:15672/api"},
		"password":              {"amqp://admin:S3cret@rabbit.internal:5672", "amqp://admin:xxxxx@rabbit.internal:5672"},
		"user only, a token":    {"http://S3cret@rabbit.internal", "http://xxxxx@rabbit.internal"},
		"unparsable, password":  {"http://admin:S3cret@[::1:15672/x", "http://admin:xxxxx@[::1:15672/x"},
		"unparsable, no scheme": {"admin:S3cret@%zz", "admin:xxxxx@%zz"},
		"@ in the password":     {"http://a:S3c@ret@[bad", "http://a:xxxxx@[bad"},
		"/ in the password":     {"http://admin:pa/S3c@broker:15672", "http://admin:xxxxx@broker:15672"},
		"port-like password":    {"http://admin:1234/S3c@127.0.0.1:1", "http://admin:xxxxx@127.0.0.1:1"},
		"# in the password":     {"http://admin:pa#S3c@broker:15672/x", "http://admin:xxxxx@broker:15672/x"},
		"? in the password":     {"http://admin:pa?S3c@broker:15672", "http://admin:xxxxx@broker:15672"},
		"encoded ':' in a user": {"http://admin%3AS3cret@broker", "http://xxxxx@broker"},
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

// testSecrets are passwords that url.Parse reads otherwise than the raw
// string's last "@" does, or refuses, each between two fragments that
// must show nowhere: a parser that cuts the password at its odd character
// shows one of them.
var testSecrets = map[string]string{
	"slash":           "Qx7/Zk4",
	"hash":            "Qx7#Zk4",
	"question mark":   "Qx7?Zk4",
	"at":              "Qx7@Zk4",
	"colon":           "Qx7:Zk4",
	"percent":         "Qx7%Zk4",
	"space":           "Qx7 Zk4",
	"port-like":       "1234/Qx7Zk4",
	"all of them":     "Qx7/#?@: %Zk4",
	"encoded percent": "Qx7%25Zk4",
}

// testShowsSecret tells whether text shows any part of secret.
func testShowsSecret(text, secret string) bool {
	return strings.Contains(text, "Qx7") || strings.Contains(text, "Zk4") || strings.Contains(text, secret)
}

// TestSecretsInURLs gives each of testSecrets as the password in the
// userinfo of the management endpoint, the AMQP endpoint and the proxy:
// the first two are refused, naming the URL redacted; the proxy is used
// with the whole password, or refused the same way.
func TestSecretsInURLs(t *testing.T) {
	t.Parallel()
	for name, secret := range testSecrets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			endpoint := "http://admin:" + secret + "@127.0.0.1:15672"
			amqpEndpoint := "amqp://admin:" + secret + "@127.0.0.1:5672"
			proxy := "http://proxy:" + secret + "@proxy.internal:3128"
			for raw, redacted := range map[string]string{
				endpoint:     "http://admin:xxxxx@127.0.0.1:15672",
				amqpEndpoint: "amqp://admin:xxxxx@127.0.0.1:5672",
				proxy:        "http://proxy:xxxxx@proxy.internal:3128",
			} {
				if got := RedactURL(raw); got != redacted {
					t.Errorf("RedactURL(%q) = %q, want %q", raw, got, redacted)
				}
			}

			_, err := New(Config{Endpoint: endpoint})
			testRefusedRedacted(t, "endpoint", err, secret, "http://admin:xxxxx@127.0.0.1:15672", "not in the URL")
			err = CheckEndpoint(endpoint)
			testRefusedRedacted(t, "CheckEndpoint", err, secret, "http://admin:xxxxx@127.0.0.1:15672", "not in the URL")
			_, err = New(Config{Endpoint: "http://127.0.0.1:15672", AMQPEndpoint: amqpEndpoint})
			testRefusedRedacted(t, "amqp_endpoint", err, secret, "amqp://admin:xxxxx@127.0.0.1:5672", "give none in the URL")
			err = CheckAMQPEndpoint(amqpEndpoint, "http://127.0.0.1:15672")
			testRefusedRedacted(t, "CheckAMQPEndpoint", err, secret, "amqp://admin:xxxxx@127.0.0.1:5672", "give none in the URL")

			through, err := proxyFunc(proxy)
			if err != nil {
				testRefusedRedacted(t, "proxy", err, secret, "http://proxy:xxxxx@proxy.internal:3128", "userinfo")
				return
			}
			req, _ := http.NewRequest(http.MethodGet, "http://rabbit.internal:15672/api/overview", nil)
			u, err := through(req)
			if err != nil {
				t.Fatal(err)
			}
			password, _ := u.User.Password()
			want := strings.ReplaceAll(secret, "%25", "%")
			if u.Host != "proxy.internal:3128" || u.User.Username() != "proxy" || password != want {
				t.Errorf("the proxy %s is host %q, user %q, password %q; want proxy.internal:3128, proxy, %q",
					RedactURL(proxy), u.Host, u.User.Username(), password, want)
			}
		})
	}
}

// testRefusedRedacted fails t unless err refuses a URL naming it as
// redacted, saying why (because), and showing no part of secret.
func testRefusedRedacted(t *testing.T, what string, err error, secret, redacted, because string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s with the password %q: no error, want it refused", what, secret)
	case testShowsSecret(err.Error(), secret):
		t.Errorf("%s: the error shows the password %q: %v", what, secret, err)
	case !strings.Contains(err.Error(), redacted) || !strings.Contains(err.Error(), because):
		t.Errorf("%s: error %q, want one naming %s and saying %q", what, err, redacted, because)
	}
}

// TestParseErrorsInOwnWords checks that no URL url.Parse refuses is
// described in the parser's words, which quote a part of the URL again
// (`invalid port ":Qx7Zk4" after host`), for each of the three URLs: the
// error names the URL once, and says what is wrong in words of its own.
func TestParseErrorsInOwnWords(t *testing.T) {
	t.Parallel()
	tests := map[string]struct{ hostPort, want string }{
		"port not a number":    {"rabbit:Qx7Zk4", "its port is not a number"},
		"bad escape in a host": {"rab%Qx7Zk4", `"%" escape that is not allowed`},
		"bad host character":   {"rab{Qx7Zk4}", "its host holds a character"},
		"no closing bracket":   {"[::1:Qx7Zk4", `no closing "]"`},
		"a space":              {"rab Qx7Zk4", "a space or a control character"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for raw, check := range map[string]func(string) error{
				"http://" + tc.hostPort:   CheckEndpoint,
				"amqp://" + tc.hostPort:   func(raw string) error { return CheckAMQPEndpoint(raw, "http://127.0.0.1:15672") },
				"socks5://" + tc.hostPort: CheckProxy,
			} {
				err := check(raw)
				if err == nil {
					t.Errorf("%q: no error", raw)
					continue
				}
				rest := strings.Replace(err.Error(), strconv.Quote(raw), "", 1)
				if strings.Contains(rest, "Qx7") {
					t.Errorf("%q: the error quotes the parser: %v", raw, err)
				}
				if !strings.Contains(rest, tc.want) {
					t.Errorf("%q: error %q, want one saying %q", raw, err, tc.want)
				}
			}
		})
	}
}

// TestAMQPBesideHTTPS refuses amqp:// beside an https:// management
// endpoint, where the password would travel in clear over AMQP alone.
func TestAMQPBesideHTTPS(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		endpoint, amqpEndpoint string
		refused                bool
	}{
		"amqp beside https":    {"https://rabbit.internal:15671", "amqp://rabbit.internal:5672", true},
		"AMQP, upper case":     {"HTTPS://rabbit.internal:15671", "AMQP://rabbit.internal:5672", true},
		"amqps beside https":   {"https://rabbit.internal:15671", "amqps://rabbit.internal:5671", false},
		"amqp beside http":     {"http://127.0.0.1:15672", "amqp://127.0.0.1:5672", false},
		"default beside https": {"https://rabbit.internal:15671", "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checked := CheckAMQPEndpoint(tc.amqpEndpoint, tc.endpoint)
			_, built := New(Config{Endpoint: tc.endpoint, AMQPEndpoint: tc.amqpEndpoint})
			for what, err := range map[string]error{"CheckAMQPEndpoint": checked, "New": built} {
				if tc.refused != (err != nil) {
					t.Errorf("%s: error %v, want refused = %v", what, err, tc.refused)
				}
				if err != nil && !strings.Contains(err.Error(), "travel in clear") {
					t.Errorf("%s: error %q does not say why", what, err)
				}
			}
		})
	}
}
