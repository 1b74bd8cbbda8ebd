package topology

import (
	"fmt"
	"regexp"
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

// longestSuffix is the length of ".level.NN.done", the longest suffix a set adds to its name.
const longestSuffix = len(".level.00.done")

// MaxSetNameLength is the longest set name whose every object name fits AMQP's 255 bytes.
const MaxSetNameLength = MaxNameLength - longestSuffix

// ObjectNamePattern is a regular expression that matches the names of the
// set's own exchanges and queues and nothing else, not even the objects of a
// set whose name extends this one ("delay" never matches "delay.level.ingest"
// nor "delay.out.ingest"). It suits the management API's use_regex filters.
func (n Names) ObjectNamePattern() string {
	return "^" + regexp.QuoteMeta(string(n)) + `\.(ingest|out|unroutable|level\.[0-9]{2}(\.done)?)$`
}

// objectKind tells which role a name plays in the set.
type objectKind int

const (
	kindNone objectKind = iota
	kindIngest
	kindOut
	kindUnroutable
	kindLevel
	kindDone
)

// parse tells which of the set's objects name is, and its level for level
// queues and done exchanges.
func (n Names) parse(name string) (kind objectKind, level int) {
	switch name {
	case n.Ingest():
		return kindIngest, 0
	case n.Out():
		return kindOut, 0
	case n.Unroutable():
		return kindUnroutable, 0
	}
	prefix := string(n) + ".level."
	if len(name) < len(prefix)+2 || name[:len(prefix)] != prefix {
		return kindNone, 0
	}
	digits, rest := name[len(prefix):len(prefix)+2], name[len(prefix)+2:]
	if digits[0] < '0' || digits[0] > '9' || digits[1] < '0' || digits[1] > '9' {
		return kindNone, 0
	}
	level = int(digits[0]-'0')*10 + int(digits[1]-'0')
	switch rest {
	case "":
		return kindLevel, level
	case ".done":
		return kindDone, level
	}
	return kindNone, 0
}
