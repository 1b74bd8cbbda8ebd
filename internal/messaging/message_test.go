package messaging

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMessageEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	published := time.Date(2025, 11, 21, 6, 30, 0, 123456789, time.UTC)
	tests := map[string]Message{
		"no delay":                {ID: "run-1-000", PublishedAt: published, Delay: 0},
		"whole ticks":             {ID: "run-1-001", PublishedAt: published, Delay: 42 * time.Second},
		"sub-millisecond delay":   {ID: "x", PublishedAt: published, Delay: 1500 * time.Microsecond},
		"unicode id":              {ID: "délai-✓", PublishedAt: published, Delay: time.Nanosecond},
		"before the unix epoch":   {ID: "old", PublishedAt: time.Date(1969, 7, 20, 20, 17, 0, 1, time.UTC), Delay: time.Hour},
		"longest delay of 32 lvl": {ID: "max", PublishedAt: published, Delay: (1<<32 - 1) * time.Second},
	}
	for name, message := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := message.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			got, err := DecodeMessage(body)
			if err != nil {
				t.Fatalf("DecodeMessage(%s): %v", body, err)
			}
			// Equal, not ==: the decoded time is in the local zone.
			if diff := cmp.Diff(message, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("round trip through %s (-want +got):\n%s", body, diff)
			}
		})
	}
}

func TestMessageEncodeLayout(t *testing.T) {
	t.Parallel()
	body, err := Message{ID: "m-7", PublishedAt: time.Unix(1700000000, 5), Delay: 3 * time.Second}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"m-7","published_at_unix_ns":1700000000000000005,"delay_ns":3000000000}`
	if diff := cmp.Diff(want, string(body)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestMessageEncodeRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		message Message
		want    string
	}{
		"no id":          {Message{PublishedAt: time.Now()}, "no id"},
		"negative delay": {Message{ID: "a", PublishedAt: time.Now(), Delay: -time.Second}, "negative delay -1s"},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := test.message.Encode()
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Errorf("Encode() = %s, %v; want an error containing %q", body, err, test.want)
			}
		})
	}
}

func TestDecodeMessageRefuses(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		body string
		want string
	}{
		"not json":        {`hello`, "not a delay message"},
		"empty object":    {`{}`, "id and published_at_unix_ns are required"},
		"no publish time": {`{"id":"a","delay_ns":5}`, "id and published_at_unix_ns are required"},
		"no id":           {`{"published_at_unix_ns":1,"delay_ns":5}`, "id and published_at_unix_ns are required"},
		"negative delay":  {`{"id":"a","published_at_unix_ns":1,"delay_ns":-5}`, "negative delay_ns -5"},
		"string delay":    {`{"id":"a","published_at_unix_ns":1,"delay_ns":"5s"}`, "not a delay message"},
		"json array":      {`[1,2]`, "not a delay message"},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeMessage([]byte(test.body))
			if err == nil || !strings.Contains(err.Error(), test.want) {
				t.Errorf("DecodeMessage(%s) = %+v, %v; want an error containing %q", test.body, got, err, test.want)
			}
		})
	}
}

func TestMessageDue(t *testing.T) {
	t.Parallel()
	published := time.Unix(100, 0)
	got := Message{ID: "a", PublishedAt: published, Delay: 1500 * time.Millisecond}.Due()
	if want := time.Unix(101, 500_000_000); !got.Equal(want) {
		t.Errorf("Due() = %v, want %v", got, want)
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"amqp://guest:secret@127.0.0.1:5672/":      "amqp://guest:xxxxx@127.0.0.1:5672/",
		"amqp://127.0.0.1:5673/prod":               "amqp://127.0.0.1:5673/prod",
		"amqps://u:p%40ss@broker.example:5671/%2F": "amqps://u:xxxxx@broker.example:5671/%2F",
		"http://not-amqp":                          "the AMQP URL",
	}
	for url, want := range tests {
		t.Run(url, func(t *testing.T) {
			t.Parallel()
			got := RedactURL(url)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("RedactURL(%q) (-want +got):\n%s", url, diff)
			}
			if strings.Contains(got, "secret") || strings.Contains(got, "p%40ss") || strings.Contains(got, "p@ss") {
				t.Errorf("RedactURL(%q) = %q still shows the password", url, got)
			}
		})
	}
}

// FuzzDecodeMessage checks that DecodeMessage never panics and that whatever
// it accepts encodes back to a body that decodes to the same message.
func FuzzDecodeMessage(f *testing.F) {
	f.Add(`{"id":"m-7","published_at_unix_ns":1700000000000000005,"delay_ns":3000000000}`) // a real body
	f.Add(`{"id":"a","published_at_unix_ns":-1,"delay_ns":0}`)                             // before the epoch
	f.Add(`{"id":"a","published_at_unix_ns":1,"delay_ns":-1}`)                             // refused: negative
	f.Add(`{"id":"","published_at_unix_ns":1}`)                                            // refused: no id
	f.Add(`null`)                                                                          // refused
	f.Fuzz(func(t *testing.T, body string) {
		message, err := DecodeMessage([]byte(body))
		if err != nil {
			return
		}
		if message.ID == "" || message.Delay < 0 {
			t.Fatalf("DecodeMessage(%q) accepted an invalid message %+v", body, message)
		}
		again, err := message.Encode()
		if err != nil {
			t.Fatalf("Encode of accepted %+v: %v", message, err)
		}
		back, err := DecodeMessage(again)
		if err != nil || back.ID != message.ID || !back.PublishedAt.Equal(message.PublishedAt) || back.Delay != message.Delay {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", body, back, err, message)
		}
	})
}
