package broker_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// fakeClient serves handler, a fake management API, until the test ends,
// and returns a client of it made with config, whose endpoint it sets.
func fakeClient(t *testing.T, handler http.Handler, config broker.Config) *broker.Client {
	t.Helper()
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	config.Endpoint = server.URL
	client, err := broker.New(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
