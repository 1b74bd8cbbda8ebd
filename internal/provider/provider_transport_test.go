package provider

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

func TestTransportWarnings(t *testing.T) {
	t.Parallel()
	const inClear, unverified = "RabbitMQ Credentials Sent in Clear", "RabbitMQ TLS Certificate Not Verified"
	const amqpInClear = "RabbitMQ Credentials Sent in Clear over AMQP"
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
		"amqp to another host": {settings: broker.Config{Endpoint: "http://127.0.0.1:15672", AMQPEndpoint: "amqp://rabbit.internal:5672", Password: "p"},
			want: []string{amqpInClear}},
		"amqp to 127.0.0.1":     {settings: broker.Config{Endpoint: "http://127.0.0.1:15672", AMQPEndpoint: "amqp://127.0.0.1:5672", Password: "p"}},
		"amqps to another host": {settings: broker.Config{Endpoint: "http://127.0.0.1:15672", AMQPEndpoint: "amqps://rabbit.internal:5671", Password: "p"}},
		"amqp to another host, counts off": {settings: broker.Config{Endpoint: "http://127.0.0.1:15672",
			AMQPEndpoint: "amqp://rabbit.internal:5672", Password: "p", DisableAMQPCounts: true}},
		"http and amqp to another host": {settings: broker.Config{Endpoint: "http://rabbit.internal:15672", AMQPEndpoint: "amqp://rabbit.internal:5672", Username: "u"},
			want: []string{inClear, amqpInClear}},
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

// TestTransportWarnings_insecureNamesAMQP checks that the insecure
// warning names the AMQP listener too where the provider counts over
// amqps with the management API's TLS settings.
func TestTransportWarnings_insecureNamesAMQP(t *testing.T) {
	t.Parallel()
	const both, managementOnly = "of the management API and of the broker's AMQP listener", "the management API's TLS certificate"
	tests := map[string]struct {
		settings broker.Config
		want     string
	}{
		"https, default AMQP":    {broker.Config{Endpoint: "https://rabbit.internal:15671"}, both},
		"https, amqps":           {broker.Config{Endpoint: "https://rabbit.internal:15671", AMQPEndpoint: "amqps://rabbit.internal:5671"}, both},
		"http, amqps":            {broker.Config{Endpoint: "http://127.0.0.1:15672", AMQPEndpoint: "amqps://rabbit.internal:5671"}, both},
		"https, counts off":      {broker.Config{Endpoint: "https://rabbit.internal:15671", DisableAMQPCounts: true}, managementOnly},
		"https, through a proxy": {broker.Config{Endpoint: "https://rabbit.internal:15671", Proxy: "http://proxy.internal:3128"}, managementOnly},
		"http, default AMQP":     {broker.Config{Endpoint: "http://127.0.0.1:15672"}, managementOnly},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc.settings.Insecure = true
			diags := transportWarnings(tc.settings)
			if len(diags) != 1 || !strings.Contains(diags[0].Detail(), tc.want) {
				t.Errorf("warnings %v, want one whose detail says %q", diags, tc.want)
			}
		})
	}
}
