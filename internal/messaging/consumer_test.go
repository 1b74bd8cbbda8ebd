package messaging

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

// An x-death header as a broker writes it: the most recent death first,
// each naming the exchange the message came through into its queue.
func TestDeathsAndPath(t *testing.T) {
	t.Parallel()
	death := func(queue, exchange string, count int64) amqp.Table {
		return amqp.Table{"queue": queue, "reason": "expired", "exchange": exchange, "count": count,
			"routing-keys": []interface{}{"dp.3.10"}, "time": int64(1795767131)}
	}
	headers := amqp.Table{"x-death": []interface{}{
		death("s.r16.00.10", "s.r16.01.done", 1),
		death("s.r16.01.3", "s.ingest", 2),
	}}
	want := []Death{
		{Queue: "s.r16.00.10", Reason: "expired", Exchange: "s.r16.01.done", Count: 1, RoutingKeys: []string{"dp.3.10"}},
		{Queue: "s.r16.01.3", Reason: "expired", Exchange: "s.ingest", Count: 2, RoutingKeys: []string{"dp.3.10"}},
	}
	got := deaths(headers)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deaths() mismatch (-want +got):\n%s", diff)
	}
	// Oldest first, a queue passed twice twice.
	if diff := cmp.Diff([]string{"s.r16.01.3", "s.r16.01.3", "s.r16.00.10"}, deathPath(got)); diff != "" {
		t.Errorf("deathPath() mismatch (-want +got):\n%s", diff)
	}
	if got := deaths(amqp.Table{}); got != nil || deathPath(got) != nil {
		t.Errorf("no x-death: deaths %v, path %v; want none", got, deathPath(got))
	}
}
