// Command consumer shows retry with exponential backoff through a delay queue
// set: it publishes one message to the work queue, then consumes it, fails
// -failures times and succeeds the next. Each failure publishes the message
// again to the set's ingest exchange with the next wait of -backoff as its
// delay, so the set delivers it back to the work queue when the wait is over.
// It prints every attempt with the wait it asked for and the wait it got, and
// exits non-zero if a retry came back early or the last attempt never came.
//
//	terraform -chdir=examples/scenarios/retry-backoff output -json > outputs.json
//	go run ./examples/scenarios/retry-backoff/consumer -tf-output outputs.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/delaykey"
)

// amqpURL is the broker's AMQP URL: RABBITMQ_AMQP_URL, or the local broker's.
func amqpURL() string {
	if url := os.Getenv("RABBITMQ_AMQP_URL"); url != "" {
		return url
	}
	return "amqp://guest:guest@127.0.0.1:5672/"
}

// set is what the consumer needs of the applied configuration's outputs.
type set struct {
	IngestExchange string
	Levels         int
	Resolution     time.Duration
	Queue          string
}

func main() {
	tfOutput := flag.String("tf-output", "", "the JSON of `terraform output -json` for examples/scenarios/retry-backoff (required)")
	backoff := flag.String("backoff", "1s,10s,100s,500s,500s", "the waits before each retry, comma-separated; the last repeats")
	failures := flag.Int("failures", 4, "how many times processing fails before it succeeds")
	flag.Parse()

	if err := run(*tfOutput, *backoff, *failures); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run(tfOutput, backoffList string, failures int) error {
	s, err := readOutputs(tfOutput)
	if err != nil {
		return err
	}
	var waits []time.Duration
	var total time.Duration
	for _, field := range strings.Split(backoffList, ",") {
		wait, err := time.ParseDuration(strings.TrimSpace(field))
		if err != nil {
			return fmt.Errorf("-backoff: %w", err)
		}
		waits = append(waits, wait)
	}
	for attempt := range failures {
		total += waits[min(attempt, len(waits)-1)]
	}

	conn, err := amqp.DialConfig(amqpURL(), amqp.Config{Dial: amqp.DefaultDial(10 * time.Second)})
	if err != nil {
		return fmt.Errorf("connect to the broker (RABBITMQ_AMQP_URL): %w", err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if err := ch.Confirm(false); err != nil {
		return err
	}
	deliveries, err := ch.Consume(s.Queue, "", false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("consume from %q (declare the queue before terraform apply): %w", s.Queue, err)
	}

	// The schedule and some slack for the broker: every hop adds a few milliseconds.
	ctx, cancel := context.WithTimeout(context.Background(), total+total/2+30*time.Second)
	defer cancel()
	start := time.Now()
	fmt.Printf("publishing order-42 to %s; processing fails %d times; backoff %s\n", s.Queue, failures, backoffList)
	if err := publish(ctx, ch, "", s.Queue, amqp.Table{}); err != nil {
		return err
	}

	var asked time.Duration
	retriedAt := start
	for {
		var d amqp.Delivery
		var open bool
		select {
		case d, open = <-deliveries:
			if !open {
				return errors.New("the channel to the broker closed before order-42 succeeded")
			}
		case <-ctx.Done():
			return fmt.Errorf("order-42 did not come back within %s", time.Since(start).Round(time.Millisecond))
		}
		arrived := time.Now()
		attempt := attemptsOf(d.Headers) + 1
		line := fmt.Sprintf("attempt %d at +%s", attempt, arrived.Sub(start).Round(time.Millisecond))
		if attempt > 1 {
			waited := arrived.Sub(retriedAt)
			line += fmt.Sprintf(": waited %s for a wait of %s (%+dms)", waited.Round(time.Millisecond), asked,
				(waited - asked).Milliseconds())
			if waited < asked {
				return fmt.Errorf("%s: the retry came back early", line)
			}
		}
		if attempt > failures {
			fmt.Println(line + "; succeeds")
			return d.Ack(false)
		}
		asked = waits[min(attempt-1, len(waits)-1)]
		key, err := delaykey.Format{Levels: s.Levels, Resolution: s.Resolution}.RoutingKey(s.Queue, asked)
		if err != nil {
			return err
		}
		fmt.Printf("%s; fails, retry in %s with routing key %s\n", line, asked, key)
		// Publish the retry before acknowledging: a crash in between redelivers
		// the message instead of losing it.
		retriedAt = time.Now()
		if err := publish(ctx, ch, s.IngestExchange, key, retryHeaders(d.Headers, attempt)); err != nil {
			return err
		}
		if err := d.Ack(false); err != nil {
			return err
		}
	}
}

// publish sends a persistent message and waits for the broker's confirm.
func publish(ctx context.Context, ch *amqp.Channel, exchange, routingKey string, headers amqp.Table) error {
	confirm, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, routingKey, true, false, amqp.Publishing{
		DeliveryMode: amqp.Persistent, MessageId: "order-42", Headers: headers,
		ContentType: "text/plain", Body: []byte("order 42"),
	})
	if err != nil {
		return fmt.Errorf("publish to %q with routing key %q: %w", exchange, routingKey, err)
	}
	acked, err := confirm.WaitContext(ctx)
	if err != nil || !acked {
		return errors.Join(fmt.Errorf("the broker did not confirm the publish to %q", exchange), err)
	}
	return nil
}

// readOutputs reads the outputs of examples/scenarios/retry-backoff.
func readOutputs(file string) (set, error) {
	if file == "" {
		return set{}, errors.New("-tf-output is required: the JSON of `terraform output -json`")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return set{}, err
	}
	var outputs struct {
		IngestExchange struct{ Value string } `json:"ingest_exchange"`
		Levels         struct{ Value int }    `json:"levels"`
		Resolution     struct{ Value string } `json:"resolution"`
		Queue          struct{ Value string } `json:"queue"`
	}
	if err := json.Unmarshal(data, &outputs); err != nil {
		return set{}, fmt.Errorf("%s: %w", file, err)
	}
	resolution, err := time.ParseDuration(outputs.Resolution.Value)
	if err != nil {
		return set{}, fmt.Errorf("%s: resolution: %w", file, err)
	}
	return set{IngestExchange: outputs.IngestExchange.Value, Levels: outputs.Levels.Value,
		Resolution: resolution, Queue: outputs.Queue.Value}, nil
}
