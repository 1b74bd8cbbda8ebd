// Command publisher publishes one message with a delay to a delay queue set:
//
//	go run ./examples/publishers/go -exchange retries.ingest -key orders -delay 10s -levels 12 -resolution 1s
//
// Pass the set's ingest_exchange, levels, resolution and radix (its Terraform
// outputs); the defaults are those of the quick start's set (radix 2).
package main

import (
	"context"
	"flag"
	"log"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// delayRoutingKey is key followed by the delay in ticks of resolution, rounded
// up, as exactly levels digits in base radix (2, 4, 8 or 16: the set's radix),
// most significant first, each digit a decimal word:
// delayRoutingKey("orders", 5*time.Second, 4, time.Second, 2) is "orders.0.1.0.1",
// delayRoutingKey("orders", 37*time.Second, 2, time.Second, 16) is "orders.2.5".
// It panics on another radix, or on a delay below zero or beyond
// (radix^levels − 1) ticks.
func delayRoutingKey(key string, delay time.Duration, levels int, resolution time.Duration, radix int) string {
	if radix != 2 && radix != 4 && radix != 8 && radix != 16 {
		log.Panicf("radix %d is not 2, 4, 8 or 16", radix)
	}
	ticks := int64((delay + resolution - 1) / resolution)
	words := make([]string, levels)
	for i := levels - 1; i >= 0; i-- { // the least significant digit first, into the last word
		words[i] = strconv.FormatInt(ticks%int64(radix), 10)
		ticks /= int64(radix)
	}
	if delay < 0 || ticks != 0 {
		log.Panicf("delay %s does not fit %d levels of %s in radix %d", delay, levels, resolution, radix)
	}
	if key != "" {
		words = append([]string{key}, words...)
	}
	return strings.Join(words, ".")
}

func main() {
	url := flag.String("url", "amqp://guest:guest@127.0.0.1:5672/", "the broker's AMQP URL")
	exchange := flag.String("exchange", "retries.ingest", "the set's ingest_exchange")
	key := flag.String("key", "orders", "the message key a route of the set matches")
	delay := flag.Duration("delay", 10*time.Second, "how long the message waits")
	levels := flag.Int("levels", 12, "the set's levels")
	radix := flag.Int("radix", 2, "the set's radix")
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
	routingKey := delayRoutingKey(*key, *delay, *levels, *resolution, *radix)
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
