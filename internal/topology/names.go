package topology

import (
	"fmt"
	"regexp"
	"strconv"
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

// GenerationNames are the names of one generation of the set's TTL queues
// and done exchanges, and of the ingest and out exchanges a generation of a
// new key format brings. Generation 0 has the names above; generation g ≥ 1
// the same names followed by ".g<g>" ("delay.level.03.g2",
// "delay.r16.03.15.g2", "delay.ingest.g2"): a last word that no suffix of a
// set ends with, so no generation's object is ever another set's object.
// The parking lot has no generation: every generation parks in it.
type GenerationNames struct {
	set    Names
	number int
}

// Generation gives the names of generation number.
func (n Names) Generation(number int) GenerationNames {
	return GenerationNames{set: n, number: number}
}

// Queue is [Names.Queue] in this generation.
func (g GenerationNames) Queue(radix, k, digit int) string {
	return g.suffixed(g.set.Queue(radix, k, digit))
}

// LevelDone is [Names.LevelDone] in this generation.
func (g GenerationNames) LevelDone(radix, k int) string {
	return g.suffixed(g.set.LevelDone(radix, k))
}

// Ingest is [Names.Ingest] in this generation.
func (g GenerationNames) Ingest() string { return g.suffixed(g.set.Ingest()) }

// Out is [Names.Out] in this generation.
func (g GenerationNames) Out() string { return g.suffixed(g.set.Out()) }

func (g GenerationNames) suffixed(name string) string {
	if g.number == 0 {
		return name
	}
	return name + "." + generationWord(g.number)
}

// generationWord is the last word of generation number's names: "g2".
func generationWord(number int) string { return "g" + strconv.Itoa(number) }

// longestSuffix is the length of ".level.NN.done", the longest suffix a set
// of generation 0 adds to its name (".r16.NN.done" is shorter); a later
// generation adds ".g<g>" to it.
const longestSuffix = len(".level.00.done")

// MaxSetNameLength is the longest set name whose every object name fits AMQP's 255 bytes.
const MaxSetNameLength = MaxNameLength - longestSuffix

// ObjectNamePattern is a regular expression that matches the names of the
// set's own exchanges and queues, of any radix and generation, and nothing else, not even
// the objects of a set whose name extends this one ("delay" never matches
// "delay.level.ingest" nor "delay.out.ingest" nor "delay.r16.ingest"). It
// suits the management API's use_regex filters.
//
// It is also the least permission pattern (configure, write and read) that
// a user needs in the set's vhost to manage this set alone, through every
// change: DESIGN.md ("Permissions") and the operating guide take it from here.
func (n Names) ObjectNamePattern() string {
	return "^" + regexp.QuoteMeta(string(n)) + objectSuffixPattern
}

// PrefixObjectNamePattern is a regular expression that matches the names of
// the exchanges and queues of every set whose name starts with prefix, of
// any radix and generation, and nothing else: the permission pattern of a
// user that manages every set of a team ("team-a." for team-a.orders,
// team-a.billing, …). An empty prefix matches the objects of every set.
func PrefixObjectNamePattern(prefix string) string {
	return "^" + regexp.QuoteMeta(prefix) + ".*" + objectSuffixPattern
}

// objectSuffixPattern matches what follows a set's name in its objects'
// names, to the end.
var objectSuffixPattern = `\.(unroutable|(ingest|out|level\.[0-9]{2}(\.done)?` +
	radixObjectPatterns + `)(\.g[1-9][0-9]*)?)$`

// radixObjectPatterns matches the TTL queues and done exchanges of every
// radix but 2 (spelled "level"), without the set's name:
// "|r4\.[0-9]{2}\.([1-3]|done)|…|r16\.[0-9]{2}\.([1-9]|1[0-5]|done)".
var radixObjectPatterns = func() string {
	var b strings.Builder
	for _, radix := range Radixes[1:] {
		fmt.Fprintf(&b, `|%s\.[0-9]{2}\.(%s|done)`, radixWord(radix), nonzeroDigitPattern(radix))
	}
	return b.String()
}()

// nonzeroDigitPattern matches the digit words 1 … radix−1 of a radix up to
// maxRadix: "[1-7]", "[1-9]|1[0-5]", "[1-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5]".
func nonzeroDigitPattern(radix int) string {
	largest := strconv.Itoa(radix - 1)
	var alternatives []string
	for width := 1; width < len(largest); width++ {
		alternatives = append(alternatives, "[1-9]"+anyDigits(width-1))
	}
	return strings.Join(append(alternatives, decimalsUpTo(largest, true)...), "|")
}

// decimalsUpTo lists patterns that together match the numbers written with
// len(largest) decimal digits up to largest; with a leading zero unless
// leading is set.
func decimalsUpTo(largest string, leading bool) []string {
	lowest := byte('0')
	if leading {
		lowest = '1'
	}
	first, rest := largest[0], largest[1:]
	if rest == "" {
		return []string{digitClass(lowest, first)}
	}
	var patterns []string
	if first > lowest {
		patterns = append(patterns, digitClass(lowest, first-1)+anyDigits(len(rest)))
	}
	for _, tail := range decimalsUpTo(rest, false) {
		patterns = append(patterns, string(first)+tail)
	}
	return patterns
}

// digitClass matches one decimal digit from lo to hi.
func digitClass(lo, hi byte) string {
	if lo == hi {
		return string(lo)
	}
	return "[" + string(lo) + "-" + string(hi) + "]"
}

// anyDigits matches n decimal digits.
func anyDigits(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "[0-9]"
	}
	return "[0-9]{" + strconv.Itoa(n) + "}"
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
// done exchanges, the radix and level, and the digit a TTL queue holds;
// for those and the ingest exchange, the generation.
type objectName struct {
	kind         objectKind
	radix, level int
	digit        int // TTL queues only; 1 in radix 2
	generation   int
}

// parse tells which of the set's objects name is.
func (n Names) parse(name string) objectName {
	if rest, number, ok := cutGeneration(name); ok {
		o := n.parseGenerationZero(rest)
		if o.kind != kindNone && o.kind != kindUnroutable {
			o.generation = number
			return o
		}
		return objectName{}
	}
	return n.parseGenerationZero(name)
}

// cutGeneration splits a name ending in ".g<number>", number ≥ 1 written
// without leading zeros, into the rest and number.
func cutGeneration(name string) (rest string, number int, ok bool) {
	dot := strings.LastIndexByte(name, '.')
	word := name[dot+1:]
	if dot < 0 || len(word) < 2 || len(word) > 10 || word[0] != 'g' || word[1] == '0' {
		return "", 0, false
	}
	for _, c := range []byte(word[1:]) {
		if c < '0' || c > '9' {
			return "", 0, false
		}
		number = number*10 + int(c-'0')
	}
	return name[:dot], number, true
}

// parseGenerationZero tells which of generation 0's objects name is.
func (n Names) parseGenerationZero(name string) objectName {
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

// levelObject tells whether name is a TTL queue or done exchange of some
// set, from its name alone (Diff knows no set name), and which.
func levelObject(name string) (objectName, bool) {
	// The set's name ends two to four words before the end.
	end := len(name)
	for range 4 {
		dot := strings.LastIndexByte(name[:end], '.')
		if dot < 0 {
			break
		}
		if o := Names(name[:dot]).parse(name); o.kind == kindLevel || o.kind == kindDone {
			return o, true
		}
		end = dot
	}
	return objectName{}, false
}

// label names a TTL queue or done exchange in a reason: "level 03" in radix
// 2, "level 03 digit 15 of radix 16" for a queue of another radix, "level 03
// of radix 16" for its done exchange, each followed by " of generation 2"
// in a generation other than 0.
func (o objectName) label() string {
	var label string
	switch {
	case o.radix == 2:
		label = fmt.Sprintf("level %02d", o.level)
	case o.kind == kindLevel:
		label = fmt.Sprintf("level %02d digit %d of radix %d", o.level, o.digit, o.radix)
	default:
		label = fmt.Sprintf("level %02d of radix %d", o.level, o.radix)
	}
	if o.generation != 0 {
		label += fmt.Sprintf(" of generation %d", o.generation)
	}
	return label
}
