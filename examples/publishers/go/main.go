// Command publisher publishes one persistent message with a delay to a delay
// queue set, and waits for the broker's confirm. It reads the set's outputs
// and the message from the environment:
//
//	RABBITMQ_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/ DELAY_EXCHANGE=retries.ingest \
//	DELAY_LEVELS=12 DELAY_RESOLUTION_MS=1000 DELAY_RADIX=2 DELAY_KEY=orders DELAY_MS=10000 \
//	DELAY_BODY='order 42' go run ./examples/publishers/go
package main

import (
	"context"
	"log"
	"os"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/delaykey"
)

func main() {
	format := delaykey.Format{
		Levels:     number("DELAY_LEVELS"),
		Radix:      number("DELAY_RADIX"),
		Resolution: time.Duration(number("DELAY_RESOLUTION_MS")) * time.Millisecond,
	}
	routingKey, err := format.RoutingKey(os.Getenv("DELAY_KEY"), time.Duration(number("DELAY_MS"))*time.Millisecond)
	if err != nil {
		log.Fatal(err)
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
	confirm, err := ch.PublishWithDeferredConfirmWithContext(ctx, os.Getenv("DELAY_EXCHANGE"), routingKey, false, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte(os.Getenv("DELAY_BODY"))})
	if err != nil {
		log.Fatal(err)
	}
	if acked, err := confirm.WaitContext(ctx); err != nil || !acked {
		log.Fatalf("the broker did not confirm the message: %v", err)
	}
}

// number is the environment variable name as an integer.
func number(name string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return n
}
