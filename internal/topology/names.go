package topology

import (
	"fmt"
	"regexp"
	"strings"
)

// Names gives the object names of the set whose prefix it holds. The suffixes
// are the layout's: nothing else in the package spells them.
type Names string

// Ingest is the topic exchange publishers send delayed messages to.
func (n Names) Ingest() string { return string(n) + ".ingest" }

// Out is the topic exchange messages leave through once their delay is over.
func (n Names) Out() string { return string(n) + ".out" }

// Unroutable is the fanout exchange and the queue of the same name that park
// every message no binding matches.
func (n Names) Unroutable() string { return string(n) + ".unroutable" }

// Level is the TTL queue of level k, holding messages for Resolution·2^k.
func (n Names) Level(k int) string { return fmt.Sprintf("%s.level.%02d", string(n), k) }

// Done is the topic exchange that level k's queue dead-letters into.
func (n Names) Done(k int) string { return n.Level(k) + ".done" }

// Queue is the TTL queue that holds a message whose digit at level k is
// digit, for digit·radix^k ticks: [Names.Level](k) in radix 2 (digit is
// then 1), "<name>.r<radix>.<kk>.<digit>" otherwise ("delay.r16.03.15").
// The radix is in the name so that a set's objects of one radix never
// share a name with another radix's, and the digit is the very word a
// message's key carries at that level.
func (n Names) Queue(radix, k, digit int) string {
	if radix == 2 {
		return n.Level(k)
	}
	return fmt.Sprintf("%s.%s.%02d.%d", string(n), radixWord(radix), k, digit)
}

// LevelDone is the topic exchange that the queues of level k dead-letter
// into: [Names.Done](k) in radix 2, "<name>.r<radix>.<kk>.done" otherwise.
func (n Names) LevelDone(radix, k int) string {
	if radix == 2 {
		return n.Done(k)
	}
	return fmt.Sprintf("%s.%s.%02d.done", string(n), radixWord(radix), k)
}

// longestSuffix is the length of ".level.NN.done", the longest suffix a set
// adds to its name (".r16.NN.done" is shorter).
const longestSuffix = len(".level.00.done")

// MaxSetNameLength is the longest set name whose every object name fits AMQP's 255 bytes.
const MaxSetNameLength = MaxNameLength - longestSuffix

// ObjectNamePattern is a regular expression that matches the names of the
// set's own exchanges and queues, of any radix, and nothing else, not even
// the objects of a set whose name extends this one ("delay" never matches
// "delay.level.ingest" nor "delay.out.ingest" nor "delay.r16.ingest"). It
// suits the management API's use_regex filters.
func (n Names) ObjectNamePattern() string {
	return "^" + regexp.QuoteMeta(string(n)) + `\.(ingest|out|unroutable|level\.[0-9]{2}(\.done)?` +
		`|r4\.[0-9]{2}\.([1-3]|done)|r8\.[0-9]{2}\.([1-7]|done)|r16\.[0-9]{2}\.([1-9]|1[0-5]|done))$`
}

// objectKind tells which role a name plays in the set.
type objectKind int

const (
	kindNone objectKind = iota
	kindIngest
	kindOut
	kindUnroutable
	kindLevel // a TTL queue, of any radix
	kindDone  // a level's done exchange, of any radix
)

// objectName is what a name is in the set: its kind and, for TTL queues and
// done exchanges, the radix and level, and the digit a TTL queue holds.
type objectName struct {
	kind         objectKind
	radix, level int
	digit        int // TTL queues only; 1 in radix 2
}

// parse tells which of the set's objects name is.
func (n Names) parse(name string) objectName {
	switch name {
	case n.Ingest():
		return objectName{kind: kindIngest}
	case n.Out():
		return objectName{kind: kindOut}
	case n.Unroutable():
		return objectName{kind: kindUnroutable}
	}
	rest, ok := strings.CutPrefix(name, string(n)+".")
	if !ok {
		return objectName{}
	}
	words := strings.Split(rest, ".")
	if words[0] == "level" {
		// "level.kk" or "level.kk.done"
		level, ok := twoDigits(words[1:])
		switch {
		case !ok:
			return objectName{}
		case len(words) == 2:
			return objectName{kind: kindLevel, radix: 2, level: level, digit: 1}
		case len(words) == 3 && words[2] == "done":
			return objectName{kind: kindDone, radix: 2, level: level}
		}
		return objectName{}
	}
	// "r<radix>.kk.<digit>" or "r<radix>.kk.done"
	radix := 0
	for _, r := range Radixes {
		if r != 2 && words[0] == radixWord(r) { // radix 2 is spelled "level"
			radix = r
		}
	}
	level, ok := twoDigits(words[1:])
	if radix == 0 || !ok || len(words) != 3 {
		return objectName{}
	}
	if words[2] == "done" {
		return objectName{kind: kindDone, radix: radix, level: level}
	}
	for digit := 1; digit < radix; digit++ {
		if words[2] == digitWords[digit] {
			return objectName{kind: kindLevel, radix: radix, level: level, digit: digit}
		}
	}
	return objectName{}
}

// twoDigits reads the first of words as a level, two decimal digits.
func twoDigits(words []string) (int, bool) {
	if len(words) == 0 || len(words[0]) != 2 {
		return 0, false
	}
	digits := words[0]
	if digits[0] < '0' || digits[0] > '9' || digits[1] < '0' || digits[1] > '9' {
		return 0, false
	}
	return int(digits[0]-'0')*10 + int(digits[1]-'0'), true
}
