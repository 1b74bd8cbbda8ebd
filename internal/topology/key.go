package topology

import (
	"fmt"
	"strings"
	"time"
)

// Routing keys and binding keys are dot-separated words. A message's routing
// key is "<key>.<b(N−1)>.….<b0>": its delay in ticks written as exactly N
// binary digits, most significant first. The helpers below are the one place
// that writes those words, for message keys and binding keys alike.

// Words of the keys.
const (
	digitZero = "0"
	digitOne  = "1"
	anyWord   = "*" // matches exactly one word
	anyWords  = "#" // matches zero or more words
)

// appendWords appends count copies of word to the dot-separated words in b.
func appendWords(b []byte, word string, count int) []byte {
	for range count {
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, word...)
	}
	return b
}

// appendDigits appends the levels lowest bits of ticks as binary digit
// words, most significant first.
func appendDigits(b []byte, ticks uint64, levels int) []byte {
	for bit := levels - 1; bit >= 0; bit-- {
		digit := digitZero
		if ticks>>bit&1 == 1 {
			digit = digitOne
		}
		b = appendWords(b, digit, 1)
	}
	return b
}

// keyLength is the length of a key followed by levels digit words.
func keyLength(key string, levels int) int {
	if key == "" {
		return 2*levels - 1
	}
	return len(key) + 2*levels
}

// maxKeyLength is the longest key whose routing key with levels digits fits
// AMQP's 255 bytes.
func maxKeyLength(levels int) int {
	return MaxNameLength - 2*levels
}

// EncodeKey returns the routing key that delays a message with the given key
// by delay in a set of levels levels at resolution: the key, then the delay
// rounded up to whole ticks (a message is never early) as levels binary
// digits. The key is taken literally; an empty key gives just the digits.
// Errors are *[FieldError] naming "key", "delay", "levels" or "resolution":
// a negative delay, a delay beyond the set's longest, a routing key over 255
// bytes, or levels and resolution no valid set has.
func EncodeKey(key string, delay time.Duration, levels int, resolution time.Duration) (string, error) {
	if err := checkLevelsAndResolution(levels, resolution); err != nil {
		return "", err
	}
	if delay < 0 {
		return "", &FieldError{Field: "delay", Route: -1, Message: fmt.Sprintf("must not be negative, got %s", delay)}
	}
	ticks := delay / resolution
	if delay%resolution != 0 {
		ticks++
	}
	if ticks>>levels != 0 {
		return "", &FieldError{Field: "delay", Route: -1, Message: fmt.Sprintf(
			"%s is longer than %s, the longest delay of %d levels at resolution %s",
			delay, MaxDelayFor(levels, resolution), levels, resolution)}
	}
	if length := keyLength(key, levels); length > MaxNameLength {
		return "", &FieldError{Field: "key", Route: -1, Message: fmt.Sprintf(
			"must be at most %d bytes with %d levels so that the routing key with its %d delay digits fits AMQP's %d bytes; got %d",
			maxKeyLength(levels), levels, levels, MaxNameLength, len(key))}
	}
	b := make([]byte, 0, keyLength(key, levels))
	b = append(b, key...)
	return string(appendDigits(b, uint64(ticks), levels)), nil
}

// DecodeKey splits a routing key made by [EncodeKey] into the message's key
// and its delay, a whole number of ticks. It refuses a routing key over 255
// bytes, with fewer than levels words, or whose last levels words are not all
// "0" or "1"; errors are *[FieldError] naming "routing_key", "levels" or
// "resolution". A routing key that is just the digits, or an empty word and
// the digits (".0.1"), has the empty key.
func DecodeKey(routingKey string, levels int, resolution time.Duration) (key string, delay time.Duration, err error) {
	if problem := checkLevelsAndResolution(levels, resolution); problem != nil {
		return "", 0, problem
	}
	if len(routingKey) > MaxNameLength {
		return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
			"must be at most %d bytes, got %d", MaxNameLength, len(routingKey))}
	}
	var ticks uint64
	rest, exhausted := routingKey, false
	for bit := range levels {
		if exhausted {
			return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
				"has %d words, fewer than the %d delay digits of %d levels", bit, levels, levels)}
		}
		var word string
		if dot := strings.LastIndexByte(rest, '.'); dot >= 0 {
			rest, word = rest[:dot], rest[dot+1:]
		} else {
			rest, word, exhausted = "", rest, true
		}
		switch word {
		case digitZero:
		case digitOne:
			ticks |= 1 << bit
		default:
			return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
				"word %q, digit %d from the end, must be %q or %q: the last %d words are the delay in binary",
				word, bit+1, digitZero, digitOne, levels)}
		}
	}
	return rest, time.Duration(ticks) * resolution, nil
}
