package main

import (
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// attemptHeader counts the failed attempts a message has behind it.
const attemptHeader = "x-attempts"

// retryHeaders copies a delivery's headers for its retry, without x-death and
// the other headers the broker adds when it dead-letters a message: the retry
// passes through the set's level queues again, and the broker drops a message
// whose x-death shows it has already expired from a queue it is expiring from
// again (a dead-letter cycle).
func retryHeaders(headers amqp.Table, attempt int) amqp.Table {
	retry := amqp.Table{}
	for name, value := range headers {
		if name == "x-death" || strings.HasPrefix(name, "x-first-death-") || strings.HasPrefix(name, "x-last-death-") {
			continue
		}
		retry[name] = value
	}
	retry[attemptHeader] = int32(attempt)
	return retry
}

func attemptsOf(headers amqp.Table) int {
	if n, ok := headers[attemptHeader].(int32); ok {
		return int(n)
	}
	return 0
}
