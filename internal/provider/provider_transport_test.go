package provider

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

func TestTransportWarnings(t *testing.T) {
	t.Parallel()
	const inClear, unverified = "RabbitMQ Credentials Sent in Clear", "RabbitMQ TLS Certificate Not Verified"
	tests := map[string]struct {
		settings broker.Config
		want     []string
	}{
		"http to 127.0.0.1":     {settings: broker.Config{Endpoint: "http://127.0.0.1:15672", Username: "u", Password: "p"}},
		"http to 127.1.2.3":     {settings: broker.Config{Endpoint: "http://127.1.2.3:15672", Username: "u", Password: "p"}},
		"http to localhost":     {settings: broker.Config{Endpoint: "http://localhost:15672", Username: "u", Password: "p"}},
		"http to ::1":           {settings: broker.Config{Endpoint: "http://[::1]:15672", Username: "u", Password: "p"}},
		"https to another host": {settings: broker.Config{Endpoint: "https://rabbit.internal:15671", Username: "u", Password: "p"}},
		"http to another host": {settings: broker.Config{Endpoint: "http://rabbit.internal:15672", Username: "u", Password: "p"},
			want: []string{inClear}},
		"http to another address": {settings: broker.Config{Endpoint: "http://10.0.0.7:15672", Password: "p"},
			want: []string{inClear}},
		"http to another host, no credentials": {settings: broker.Config{Endpoint: "http://rabbit.internal:15672"}},
		"insecure": {settings: broker.Config{Endpoint: "https://rabbit.internal:15671", Username: "u", Insecure: true},
			want: []string{unverified}},
		"both": {settings: broker.Config{Endpoint: "http://rabbit.internal:15672", Username: "u", Insecure: true},
			want: []string{inClear, unverified}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			diags := transportWarnings(tc.settings)
			var got []string
			for _, d := range diags {
				got = append(got, d.Summary())
			}
			if diags.HasError() {
				t.Errorf("transportWarnings returned an error: %v", diags)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
