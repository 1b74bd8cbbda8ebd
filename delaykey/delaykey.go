// Package delaykey writes and reads the routing keys that delay a message in
// a delay queue set of terraform-provider-rabbitmq, for publishers written in
// Go. It has no dependencies beyond the standard library.
//
// A set's Terraform outputs give its [Format]: levels, radix, resolution and
// layout. In the default layout a routing key is the message's key, then its
// delay in whole ticks of the resolution, rounded up so that no message is
// early, written as exactly Levels digits of the radix, most significant
// first, each a decimal word:
//
//	Format{Levels: 4, Resolution: time.Second}.RoutingKey("orders", 5*time.Second)             // "orders.0.1.0.1"
//	Format{Levels: 2, Radix: 16, Resolution: time.Second}.RoutingKey("orders", 37*time.Second) // "orders.2.5"
//
// In the NServiceBus and Celery layouts the delay comes first, as 28 bits of
// whole seconds (rounded up by NServiceBus, truncated by Celery, as each
// library counts), then the key, which must not be empty.
//
// The package is a module of its own, released by tags of its own
// (delaykey/v0.1.0, …) apart from the provider's. It requires no other
// module, and its go line (go 1.22) is the lowest its code builds with, so
// `go get` of it changes nothing else in a publisher's go.mod. Each release
// writes the keys of every layout and radix of the provider releases of its
// time; the provider's repository checks its results against the
// provider's own encoder for every layout and radix.
package delaykey

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Layout names the layout of a set's routing keys: the set's layout attribute.
type Layout string

// The layouts a set can have.
const (
	// Default is the provider's own layout; the empty Layout means it too.
	Default Layout = "default"
	// NServiceBus is the delay infrastructure of the NServiceBus RabbitMQ
	// transport (its "v2" delays).
	NServiceBus Layout = "nservicebus"
	// Celery is Celery's native delayed delivery, as kombu declares it.
	Celery Layout = "celery"
)

// Errors wrap one of these, so that a caller can tell a delay the set cannot
// hold from a key or a format it was given wrong.
var (
	// ErrFormat: the format is not that of any set.
	ErrFormat = errors.New("not a delay queue set's format")
	// ErrDelay: the delay is negative or longer than the set holds.
	ErrDelay = errors.New("delay out of range")
	// ErrKey: the message's key cannot be part of a routing key of the set.
	ErrKey = errors.New("unusable key")
	// ErrRoutingKey: the routing key is not one of the set's.
	ErrRoutingKey = errors.New("not a routing key of the set")
)

// Limits of RabbitMQ and of the sets the provider declares.
const (
	maxNameLength = 255             // AMQP's limit for a routing key, in bytes
	maxTTL        = 315_360_000_000 // the broker's largest message TTL (10 years), in ms
	maxLevels     = 32
	libraryBits   = 28 // the libraries' delays: 28 bits of whole seconds
)

// Format is how a set's routing keys write a delay.
type Format struct {
	// Levels is the number of delay digits (the set's levels).
	Levels int
	// Radix is the base of the digits: 2, 4, 8, 16 or 256; 0 means 2.
	Radix int
	// Resolution is the tick: a whole number of milliseconds.
	Resolution time.Duration
	// Layout is the set's layout; empty means [Default]. The libraries'
	// layouts fix Levels (28), Radix (2) and Resolution (1s), which may be
	// left zero.
	Layout Layout
}

// Check reports what makes f the format of no set, as an error wrapping
// [ErrFormat], or nil.
func (f Format) Check() error {
	_, err := f.resolve()
	return err
}

// MaxDelay is the longest delay the format holds: (Radix^Levels − 1) ticks,
// 2^28 − 1 seconds in a library's layout; 0 when [Format.Check] fails.
func (f Format) MaxDelay() time.Duration {
	r, err := f.resolve()
	if err != nil {
		return 0
	}
	return time.Duration(r.maxTicks()) * r.resolution
}

// RoutingKey returns the routing key that delays a message with the given
// key by delay. The key is taken as it is (an empty key gives just the
// digits in the default layout); [Format.CheckKey] says whether a set's
// routes can match it. Errors wrap [ErrFormat], [ErrDelay] (negative, or
// beyond [Format.MaxDelay]) or [ErrKey] (a key that leaves no room for the
// digits within 255 bytes, whatever the delay; an empty key in a library's
// layout).
func (f Format) RoutingKey(key string, delay time.Duration) (string, error) {
	r, err := f.resolve()
	if err != nil {
		return "", err
	}
	if delay < 0 {
		return "", fmt.Errorf("%w: %s is negative", ErrDelay, delay)
	}
	ticks := uint64(delay / r.resolution)
	if delay%r.resolution != 0 && r.roundsUp() {
		ticks++
	}
	if ticks > r.maxTicks() {
		return "", fmt.Errorf("%w: %s is longer than %s, the longest delay of %s", ErrDelay, delay, time.Duration(r.maxTicks())*r.resolution, r)
	}
	if problem := r.keyLengthProblem(key); problem != "" {
		return "", fmt.Errorf("%w: %s", ErrKey, problem)
	}
	digits := r.digits(ticks)
	switch {
	case r.library:
		return digits + "." + key, nil
	case key == "":
		return digits, nil
	}
	return key + "." + digits, nil
}

// Parse splits a routing key of the format into the message's key and its
// delay, a whole number of ticks. Errors wrap [ErrFormat] or
// [ErrRoutingKey]: over 255 bytes, too few words, a digit that is not one of
// the radix in decimal ("0" … "15" in radix 16, no padding), or, in a
// library's layout, no key after the 28 bits. A routing key that is just the
// digits, or an empty word and the digits, has the empty key.
func (f Format) Parse(routingKey string) (key string, delay time.Duration, err error) {
	r, err := f.resolve()
	if err != nil {
		return "", 0, err
	}
	if len(routingKey) > maxNameLength {
		return "", 0, fmt.Errorf("%w: %d bytes, more than AMQP's %d", ErrRoutingKey, len(routingKey), maxNameLength)
	}
	if r.library {
		return r.parseBitsFirst(routingKey)
	}
	return r.parseDigitsLast(routingKey)
}

// CheckKey reports what makes key unusable as the key of the format's routing
// keys, as an error wrapping [ErrKey] (or [ErrFormat]), or nil: a wildcard
// ('#' or '*'), an empty word, a length that leaves no room for the delay
// digits, or, in a library's layout, the empty key.
func (f Format) CheckKey(key string) error {
	r, err := f.resolve()
	if err != nil {
		return err
	}
	var problems []string
	if strings.ContainsAny(key, "#*") {
		problems = append(problems, fmt.Sprintf("%q contains '#' or '*', which would match other messages' keys", key))
	}
	if key != "" && (strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") || strings.Contains(key, "..")) {
		problems = append(problems, fmt.Sprintf("%q has an empty word", key))
	}
	if problem := r.keyLengthProblem(key); problem != "" {
		problems = append(problems, problem)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrKey, strings.Join(problems, "; "))
	}
	return nil
}

// resolved is a format that [Format.Check] accepts, its defaults filled in.
type resolved struct {
	layout     Layout
	library    bool
	levels     int
	radix      int
	resolution time.Duration
}

func (f Format) resolve() (resolved, error) {
	switch f.Layout {
	case "", Default:
		return f.resolveDefault()
	case NServiceBus, Celery:
		r := resolved{layout: f.Layout, library: true, levels: libraryBits, radix: 2, resolution: time.Second}
		switch {
		case f.Levels != 0 && f.Levels != r.levels:
			return resolved{}, fmt.Errorf("%w: levels must be %d (or 0) in the %s layout, got %d", ErrFormat, r.levels, f.Layout, f.Levels)
		case f.Radix != 0 && f.Radix != r.radix:
			return resolved{}, fmt.Errorf("%w: radix must be %d (or 0) in the %s layout, got %d", ErrFormat, r.radix, f.Layout, f.Radix)
		case f.Resolution != 0 && f.Resolution != r.resolution:
			return resolved{}, fmt.Errorf("%w: resolution must be %s (or 0) in the %s layout, got %s", ErrFormat, r.resolution, f.Layout, f.Resolution)
		}
		return r, nil
	}
	return resolved{}, fmt.Errorf("%w: layout must be %q, %q or %q, got %q", ErrFormat, Default, NServiceBus, Celery, f.Layout)
}

func (f Format) resolveDefault() (resolved, error) {
	r := resolved{layout: Default, levels: f.Levels, radix: f.Radix, resolution: f.Resolution}
	if r.radix == 0 {
		r.radix = 2
	}
	switch {
	case r.radix != 2 && r.radix != 4 && r.radix != 8 && r.radix != 16 && r.radix != 256:
		return resolved{}, fmt.Errorf("%w: radix must be 2, 4, 8, 16 or 256, got %d", ErrFormat, r.radix)
	case r.resolution < time.Millisecond || r.resolution%time.Millisecond != 0 || r.resolution.Milliseconds() > maxTTL:
		return resolved{}, fmt.Errorf("%w: resolution must be a whole number of milliseconds from 1ms to 10 years, got %s", ErrFormat, r.resolution)
	case r.levels < 1 || r.levels > maxLevels:
		return resolved{}, fmt.Errorf("%w: levels must be between 1 and %d, got %d", ErrFormat, maxLevels, r.levels)
	}
	// The top queue's TTL, (radix−1)·radix^(levels−1) ticks, must be one the
	// broker accepts.
	ttl := r.resolution.Milliseconds() * int64(r.radix-1)
	for range r.levels - 1 {
		ttl = min(ttl, maxTTL+1) * int64(r.radix) // saturated beyond maxTTL: no overflow
	}
	if ttl > maxTTL {
		return resolved{}, fmt.Errorf("%w: %d levels of radix %d at %s give the top queue a TTL beyond the broker's largest (10 years)",
			ErrFormat, r.levels, r.radix, r.resolution)
	}
	return r, nil
}

// String describes the format in messages: "4 levels of 1s in radix 2".
func (r resolved) String() string {
	if r.library {
		return fmt.Sprintf("the %s layout (%d bits of %s)", r.layout, r.levels, r.resolution)
	}
	return fmt.Sprintf("%d levels of %s in radix %d", r.levels, r.resolution, r.radix)
}

// roundsUp tells whether a delay between two ticks takes the later one:
// always, so that a message is never early, except in Celery's layout,
// whose publishers truncate.
func (r resolved) roundsUp() bool { return r.layout != Celery }

// maxTicks is radix^levels − 1; a checked format keeps it within int64.
func (r resolved) maxTicks() uint64 {
	power := uint64(1)
	for range r.levels {
		power *= uint64(r.radix)
	}
	return power - 1
}

// digitWidth is the length of the longest digit word: "15" in radix 16,
// "255" in radix 256.
func (r resolved) digitWidth() int {
	return len(strconv.Itoa(r.radix - 1))
}

// keyLengthProblem says why key leaves no room for the delay digits, each
// counted at its longest, within a routing key's 255 bytes, or "".
func (r resolved) keyLengthProblem(key string) string {
	if r.library && key == "" {
		return fmt.Sprintf("the key must not be empty in the %s layout: the delivery exchange routes by it", r.layout)
	}
	longest := maxNameLength - (1+r.digitWidth())*r.levels
	if len(key) > longest {
		return fmt.Sprintf("the key must be at most %d bytes with %s, got %d", longest, r, len(key))
	}
	return ""
}

// digits writes ticks as levels digit words, most significant first.
func (r resolved) digits(ticks uint64) string {
	words := make([]string, r.levels)
	for i := r.levels - 1; i >= 0; i-- {
		words[i] = strconv.FormatUint(ticks%uint64(r.radix), 10)
		ticks /= uint64(r.radix)
	}
	return strings.Join(words, ".")
}

// digitValue reads a digit word of the radix: decimal, no padding.
func (r resolved) digitValue(word string) (uint64, bool) {
	v, err := strconv.ParseUint(word, 10, 8)
	if err != nil || v >= uint64(r.radix) || word != strconv.FormatUint(v, 10) {
		return 0, false
	}
	return v, true
}

// parseDigitsLast reads the default layout: the key, then the digits.
func (r resolved) parseDigitsLast(routingKey string) (string, time.Duration, error) {
	var ticks, weight uint64 = 0, 1
	rest, exhausted := routingKey, false
	for position := range r.levels {
		if exhausted {
			return "", 0, fmt.Errorf("%w: %q has %d words, fewer than the %d delay digits of %s", ErrRoutingKey, routingKey, position, r.levels, r)
		}
		var word string
		if dot := strings.LastIndexByte(rest, '.'); dot >= 0 {
			rest, word = rest[:dot], rest[dot+1:]
		} else {
			rest, word, exhausted = "", rest, true
		}
		digit, ok := r.digitValue(word)
		if !ok {
			return "", 0, fmt.Errorf("%w: word %q, digit %d from the end, is not a digit of radix %d in decimal", ErrRoutingKey, word, position+1, r.radix)
		}
		ticks += digit * weight
		weight *= uint64(r.radix)
	}
	return rest, time.Duration(ticks) * r.resolution, nil
}

// parseBitsFirst reads a library's layout: 28 bits, then the key.
func (r resolved) parseBitsFirst(routingKey string) (string, time.Duration, error) {
	var ticks uint64
	rest := routingKey
	for position := range r.levels {
		word, after, found := strings.Cut(rest, ".")
		if !found {
			return "", 0, fmt.Errorf("%w: %q has %d words; in the %s layout a routing key is %d delay bits, then the key", ErrRoutingKey, routingKey, position+1, r.layout, r.levels)
		}
		bit, ok := r.digitValue(word)
		if !ok {
			return "", 0, fmt.Errorf("%w: word %q, bit %d from the start, is not 0 or 1", ErrRoutingKey, word, position+1)
		}
		ticks = ticks<<1 | bit
		rest = after
	}
	if rest == "" {
		return "", 0, fmt.Errorf("%w: %q has no key after its %d delay bits", ErrRoutingKey, routingKey, r.levels)
	}
	return rest, time.Duration(ticks) * r.resolution, nil
}
