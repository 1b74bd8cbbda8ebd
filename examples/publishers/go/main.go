// Command publisher publishes one message with a delay to a delay queue set:
//
//	go run ./examples/publishers/go -exchange retries.ingest -key orders -delay 10s -levels 12 -resolution 1s
//
// Pass the set's ingest_exchange, levels and resolution (its Terraform outputs);
// the defaults are those of the quick start's set.
package main

import (
	"context"
	"flag"
	"log"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// delayRoutingKey is key followed by the delay in ticks of resolution, rounded
// up, as exactly levels binary digits, most significant first:
// delayRoutingKey("orders", 5*time.Second, 4, time.Second) is "orders.0.1.0.1".
// It panics on a delay below zero or beyond (2^levels − 1) ticks.
func delayRoutingKey(key string, delay time.Duration, levels int, resolution time.Duration) string {
	ticks := (delay + resolution - 1) / resolution
	if delay < 0 || ticks>>levels != 0 {
		log.Panicf("delay %s does not fit %d levels of %s", delay, levels, resolution)
	}
	words := make([]string, 0, levels+1)
	if key != "" {
		words = append(words, key)
	}
	for bit := levels - 1; bit >= 0; bit-- {
		words = append(words, string('0'+byte(ticks>>bit&1)))
	}
	return strings.Join(words, ".")
}

func main() {
	url := flag.String("url", "amqp://guest:guest@127.0.0.1:5672/", "the broker's AMQP URL")
	exchange := flag.String("exchange", "retries.ingest", "the set's ingest_exchange")
	key := flag.String("key", "orders", "the message key a route of the set matches")
	delay := flag.Duration("delay", 10*time.Second, "how long the message waits")
	levels := flag.Int("levels", 12, "the set's levels")
	resolution := flag.Duration("resolution", time.Second, "the set's resolution")
	body := flag.String("body", "hello", "the message body")
	flag.Parse()

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
	routingKey := delayRoutingKey(*key, *delay, *levels, *resolution)
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
