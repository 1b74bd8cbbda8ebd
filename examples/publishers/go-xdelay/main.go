// Command go-xdelay publishes one persistent message to a delayed exchange
// (rabbitmq_delayed_exchange) with the x-delay header, as the
// delayed-message-exchange plugin's publishers do, and waits for the
// broker's confirm. It reads the exchange and the message from the
// environment; X_DELAY_TYPE is int (the default), long or string, and an
// empty X_DELAY sends no header:
//
//	RABBITMQ_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/ DELAY_EXCHANGE=retries \
//	DELAY_KEY=orders X_DELAY=5000 DELAY_BODY='order 42' go run ./examples/publishers/go-xdelay
package main

import (
	"context"
	"log"
	"os"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	headers := amqp.Table{}
	if text := os.Getenv("X_DELAY"); text != "" {
		headers["x-delay"] = xDelay(text, os.Getenv("X_DELAY_TYPE"))
	}
	conn, err := amqp.Dial(os.Getenv("RABBITMQ_AMQP_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	confirm, err := ch.PublishWithDeferredConfirmWithContext(ctx, os.Getenv("DELAY_EXCHANGE"), os.Getenv("DELAY_KEY"), false, false,
		amqp.Publishing{Headers: headers, DeliveryMode: amqp.Persistent, Body: []byte(os.Getenv("DELAY_BODY"))})
	if err != nil {
		log.Fatal(err)
	}
	if acked, err := confirm.WaitContext(ctx); err != nil || !acked {
		log.Fatalf("the broker did not confirm the message: %v", err)
	}
}

// xDelay is the header's value: an AMQP int (int32, a long past 32 bits)
// or long (int64), the types the plugin's publishers send, or the text.
func xDelay(text, kind string) any {
	if kind == "string" {
		return text
	}
	ms, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		log.Fatalf("X_DELAY: %v", err)
	}
	if kind == "long" || ms != int64(int32(ms)) {
		return ms
	}
	return int32(ms)
}
