// Command publisher publishes one message with a delay to a delay queue set:
//
//	go run ./examples/publishers/go -exchange retries.ingest -key orders -delay 10s -levels 12 -resolution 1s
//
// Pass the set's ingest_exchange, levels, radix, resolution and layout (its
// Terraform outputs); the defaults are those of the quick start's set. The
// routing key comes from the provider's Go package:
//
//	go get github.com/delayqueue/terraform-provider-rabbitmq/delaykey
package main

import (
	"context"
	"flag"
	"log"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/delaykey"
)

func main() {
	url := flag.String("url", "amqp://guest:guest@127.0.0.1:5672/", "the broker's AMQP URL")
	exchange := flag.String("exchange", "retries.ingest", "the set's ingest_exchange (in a library's layout, the exchange its publisher sends to)")
	key := flag.String("key", "orders", "the message key a route of the set matches")
	delay := flag.Duration("delay", 10*time.Second, "how long the message waits")
	var format delaykey.Format
	flag.IntVar(&format.Levels, "levels", 12, "the set's levels")
	flag.IntVar(&format.Radix, "radix", 2, "the set's radix")
	flag.DurationVar(&format.Resolution, "resolution", time.Second, "the set's resolution")
	layout := flag.String("layout", "default", "the set's layout: default, nservicebus or celery (which fix levels, radix and resolution)")
	body := flag.String("body", "hello", "the message body")
	flag.Parse()
	if format.Layout = delaykey.Layout(*layout); format.Layout != delaykey.Default {
		format.Levels, format.Radix, format.Resolution = 0, 0, 0
	}

	routingKey, err := format.RoutingKey(*key, *delay)
	if err != nil {
		log.Fatal(err)
	}
	conn, err := amqp.Dial(*url)
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
	confirm, err := ch.PublishWithDeferredConfirmWithContext(ctx, *exchange, routingKey, false, false,
		amqp.Publishing{DeliveryMode: amqp.Persistent, Body: []byte(*body)})
	if err != nil {
		log.Fatal(err)
	}
	if acked, err := confirm.WaitContext(ctx); err != nil || !acked {
		log.Fatalf("the broker did not confirm the message: %v", err)
	}
	log.Printf("published to %s with routing key %s", *exchange, routingKey)
}
