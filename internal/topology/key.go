package topology

import (
	"fmt"
	"strings"
	"time"
)

// Routing keys and binding keys are dot-separated words. A message's routing
// key is "<key>.<d(N−1)>.….<d0>": its delay in ticks written as exactly N
// digits of the set's radix (binary by default), most significant first,
// each digit a decimal word. The helpers below are the one place
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

// appendDigits appends the levels lowest digits of ticks in radix as digit
// words, most significant first. The radix and levels are a valid set's, so
// radix^(levels−1) fits a uint64.
func appendDigits(b []byte, ticks uint64, levels, radix int) []byte {
	power := maxTicks(levels-1, radix) + 1 // radix^(levels−1)
	for range levels {
		b = appendWords(b, digitWords[ticks/power%uint64(radix)], 1)
		power /= uint64(radix)
	}
	return b
}

// keyLength is the length of a key followed by levels digit words of radix,
// each as long as the longest digit, so that whether a key fits does not
// depend on the delay.
func keyLength(key string, levels, radix int) int {
	if key == "" {
		return (1+digitWidth(radix))*levels - 1
	}
	return len(key) + (1+digitWidth(radix))*levels
}

// maxKeyLength is the longest key whose routing key with levels digits of
// radix fits AMQP's 255 bytes, whatever the delay.
func maxKeyLength(levels, radix int) int {
	return MaxNameLength - (1+digitWidth(radix))*levels
}

// KeyFormat is how the routing keys of a set write a delay: Levels digits
// in base Radix (2 when zero), each tick Resolution long. A resolved
// [Spec]'s is [Spec.KeyFormat].
//
// In a library's layout (Layout [LayoutNServiceBus] or [LayoutCelery])
// the delay comes first, as 28 bits of a second each, then the key; its
// Levels, Radix and Resolution are fixed, and may be left zero.
type KeyFormat struct {
	Levels     int
	Radix      int
	Resolution time.Duration
	// Layout is the set's layout; empty (or [LayoutDefault]) for the
	// default one.
	Layout Layout
}

// KeyFormat is the key format of s, which must be resolved ([Resolve]).
func (s Spec) KeyFormat() KeyFormat {
	return KeyFormat{Levels: s.Levels, Radix: s.Radix, Resolution: s.Resolution, Layout: s.Layout}
}

// layout returns the format's layout and the format with the fields the
// layout fixes spelled out, or the problem with a layout no set has or
// with a field that differs from what the layout fixes.
func (f KeyFormat) layout() (setLayout, KeyFormat, *FieldError) {
	l, err := layoutNamed(f.Layout)
	if err != nil {
		return nil, f, err
	}
	f, err = l.fixFormat(f)
	return l, f, err
}

// check accepts the format of a valid set and returns its radix.
func (f KeyFormat) check() (int, *FieldError) {
	radix := radixOrDefault(f.Radix)
	if err := checkRadix(radix); err != nil {
		return 0, err
	}
	return radix, checkLevelsAndResolution(f.Levels, radix, f.Resolution)
}

// MaxDelay is the longest delay the format holds, (Radix^Levels − 1)·Resolution,
// saturated at the largest Duration; 0 when Levels or Resolution is not
// positive. A library's layout holds 2^28 − 1 seconds; a format it refuses
// holds nothing.
func (f KeyFormat) MaxDelay() time.Duration {
	_, f, err := f.layout()
	if err != nil {
		return 0
	}
	return maxDelayFor(f.Levels, radixOrDefault(f.Radix), f.Resolution)
}

// EncodeKey returns the routing key that delays a message with the given key
// by delay in a set of levels levels at resolution, in radix 2: see
// [KeyFormat.Encode].
func EncodeKey(key string, delay time.Duration, levels int, resolution time.Duration) (string, error) {
	return KeyFormat{Levels: levels, Resolution: resolution}.Encode(key, delay)
}

// Encode returns the routing key that delays a message with the given key by
// delay: the key, then the delay rounded up to whole ticks (a message is
// never early) as Levels digits in base Radix, each a decimal word. Errors
// are *[FieldError] naming "key", "delay", "levels", "radix", "resolution"
// or "layout". In a library's layout the key is the delay in whole seconds
// as 28 bits, most significant first, rounded as that library rounds it,
// then the key, which must not be empty: "0.….1.0.1.Sales" for 5s.
func (f KeyFormat) Encode(key string, delay time.Duration) (string, error) {
	l, f, err := f.layout()
	if err != nil {
		return "", err
	}
	return l.encodeKey(f, key, delay)
}

// encodeKey is Encode in the default layout: the key, then the delay's
// digits.
func (defaultLayout) encodeKey(f KeyFormat, key string, delay time.Duration) (string, error) {
	radix, err := f.check()
	if err != nil {
		return "", err
	}
	levels, resolution := f.Levels, f.Resolution
	if delay < 0 {
		return "", &FieldError{Field: "delay", Route: -1, Message: fmt.Sprintf("must not be negative, got %s", delay)}
	}
	ticks := delay / resolution
	if delay%resolution != 0 {
		ticks++
	}
	if uint64(ticks) > maxTicks(levels, radix) {
		return "", &FieldError{Field: "delay", Route: -1, Message: fmt.Sprintf(
			"%s is longer than %s, the longest delay of %d levels at resolution %s%s",
			delay, f.MaxDelay(), levels, resolution, inRadix(radix))}
	}
	if problem := keyLengthProblem(key, levels, radix); problem != "" {
		return "", &FieldError{Field: "key", Route: -1, Message: problem}
	}
	b := make([]byte, 0, keyLength(key, levels, radix))
	b = append(b, key...)
	return string(appendDigits(b, uint64(ticks), levels, radix)), nil
}

// keyProblem is a key that leaves no room for the digits in the default
// layout, once the format's radix and levels are known.
func (defaultLayout) keyProblem(f KeyFormat, key string) string {
	radix := radixOrDefault(f.Radix)
	if checkRadix(radix) != nil || f.Levels < MinLevels {
		return ""
	}
	return keyLengthProblem(key, f.Levels, radix)
}

// keyLengthProblem says why key leaves no room for levels digits of radix
// in a routing key, or "" when it fits.
func keyLengthProblem(key string, levels, radix int) string {
	if keyLength(key, levels, radix) <= MaxNameLength {
		return ""
	}
	return fmt.Sprintf(
		"must be at most %d bytes with %d levels%s so that the routing key with its %d delay digits fits AMQP's %d bytes; got %d",
		maxKeyLength(levels, radix), levels, inRadix(radix), levels, MaxNameLength, len(key))
}

// inRadix names a radix other than 2 in a message: " in radix 16".
func inRadix(radix int) string {
	if radix == 2 {
		return ""
	}
	return fmt.Sprintf(" in radix %d", radix)
}

// CheckKey reports what makes key unusable as the key of a routing key in
// this format: [CheckKey]'s problems, and a length that leaves no room for
// the delay digits (each counted at its longest). Errors are
// [ValidationErrors] about "key".
//
// In a library's layout the key must also not be empty: it is what the
// delivery exchange routes by.
func (f KeyFormat) CheckKey(key string) error {
	var errs ValidationErrors
	for _, problem := range keyProblems(key) {
		errs = append(errs, &FieldError{Field: "key", Route: -1, Message: problem})
	}
	// The format's own problems are Encode's to report: an unknown layout
	// checks the key as the default one, a field the layout fixes as unset.
	l, _ := layoutNamed(f.Layout)
	if problem := l.keyProblem(f, key); problem != "" {
		errs = append(errs, &FieldError{Field: "key", Route: -1, Message: problem})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// DecodeKey splits a routing key of a set of levels levels at resolution in
// radix 2 into the message's key and its delay: see [KeyFormat.Decode].
func DecodeKey(routingKey string, levels int, resolution time.Duration) (key string, delay time.Duration, err error) {
	return KeyFormat{Levels: levels, Resolution: resolution}.Decode(routingKey)
}

// Decode splits a routing key made by [KeyFormat.Encode] into the message's
// key and its delay, a whole number of ticks. It refuses a routing key over
// 255 bytes, with fewer than Levels words, or whose last Levels words are
// not all digits of the radix in decimal ("0" … "15" in radix 16, no
// padding); errors are *[FieldError] naming "routing_key", "levels",
// "radix", "resolution" or "layout". A routing key that is just the digits,
// or an empty word and the digits (".0.1"), has the empty key.
//
// In a library's layout the first 28 words must be bits ("0" or "1"), and
// a non-empty key must follow them.
func (f KeyFormat) Decode(routingKey string) (key string, delay time.Duration, err error) {
	l, f, problem := f.layout()
	if problem != nil {
		return "", 0, problem
	}
	return l.decodeKey(f, routingKey)
}

// decodeKey is Decode in the default layout: the key, then the delay's
// digits.
func (defaultLayout) decodeKey(f KeyFormat, routingKey string) (key string, delay time.Duration, err error) {
	radix, problem := f.check()
	if problem != nil {
		return "", 0, problem
	}
	levels := f.Levels
	if len(routingKey) > MaxNameLength {
		return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
			"must be at most %d bytes, got %d", MaxNameLength, len(routingKey))}
	}
	var ticks, weight uint64 = 0, 1
	rest, exhausted := routingKey, false
	for position := range levels {
		if exhausted {
			return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: fmt.Sprintf(
				"has %d words, fewer than the %d delay digits of %d levels", position, levels, levels)}
		}
		var word string
		if dot := strings.LastIndexByte(rest, '.'); dot >= 0 {
			rest, word = rest[:dot], rest[dot+1:]
		} else {
			rest, word, exhausted = "", rest, true
		}
		digit, ok := digitValue(word, radix)
		if !ok {
			return "", 0, &FieldError{Field: "routing_key", Route: -1, Message: digitProblem(word, position, levels, radix)}
		}
		ticks += uint64(digit) * weight
		weight *= uint64(radix) // within uint64: at most 16^levels for a valid set's levels
	}
	return rest, time.Duration(ticks) * f.Resolution, nil
}

// digitValue reads a digit word of radix.
func digitValue(word string, radix int) (int, bool) {
	for v := range radix {
		if word == digitWords[v] {
			return v, true
		}
	}
	return 0, false
}

// digitProblem says why word is not the digit at position (from the end).
func digitProblem(word string, position, levels, radix int) string {
	if radix == 2 {
		return fmt.Sprintf("word %q, digit %d from the end, must be %q or %q: the last %d words are the delay in binary",
			word, position+1, digitZero, digitOne, levels)
	}
	return fmt.Sprintf("word %q, digit %d from the end, must be one of %q … %q: the last %d words are the delay in radix %d, each digit in decimal",
		word, position+1, digitZero, digitWords[radix-1], levels, radix)
}
