package topology

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"
)

// The default layout, of a set with radix r and D levels: the delay in
// ticks written as D digits in base r. Everything that depends on the radix
// — the names of the TTL queues and done exchanges, their TTLs, the delay
// bindings and the digit words of the keys — is answered here, so that
// plan, keys, diff, infer and the renderers agree. Radix 2 is the binary
// layout of the design; its names and messages say "level" and "2^k".

// defaultLayout is the package's own layout ([LayoutDefault]). Its methods
// live beside what they serve: plan in plan.go, the keys in key.go, the
// checks and resolve in spec.go, infer in infer.go, owner in discover.go.
type defaultLayout struct{}

func (defaultLayout) name() Layout { return LayoutDefault }

func (defaultLayout) checkGeneration(v *specValidator, s Spec) {
	v.generations(s.Name, s.Generation, s.FormatGeneration)
}

func (defaultLayout) declaredByLibrary() bool { return false }

func (defaultLayout) objectNamePattern(name string) string { return Names(name).ObjectNamePattern() }

// stageLabel labels a TTL queue or done exchange of any set.
func (defaultLayout) stageLabel(name string) (string, bool) {
	o, ok := levelObject(name)
	if !ok {
		return "", false
	}
	return o.label(), true
}

// entryExchange is the ingest exchange of the set's key format, whatever
// the delay.
func (l defaultLayout) entryExchange(s Spec, _ time.Duration) (string, error) {
	return l.ends(s).ingest, nil
}

// ends are the ingest and out exchanges of the set's key format, and its
// parking lot.
func (defaultLayout) ends(s Spec) setEnds {
	names := Names(s.Name)
	format := names.Generation(s.FormatGeneration)
	return setEnds{ingest: format.Ingest(), out: format.Out(), unroutable: names.Unroutable()}
}

// fixFormat takes every format as it is: the layout fixes no field, and
// Encode and Decode check the fields against the broker's limits.
func (defaultLayout) fixFormat(f KeyFormat) (KeyFormat, *FieldError) { return f, nil }

// Radixes lists the allowed radixes, the default first. Radix 256 carries
// every delay below 256 ticks through one TTL queue, for 255 queues per
// digit.
var Radixes = []int{2, 4, 8, 16, 256}

// DefaultRadix is the radix of a spec that names none: binary digits.
const DefaultRadix = 2

// maxRadix is the largest radix; its digits are at most three bytes long.
const maxRadix = 256

// digitWords are the routing-key words of the digits, in decimal.
var digitWords = func() (words [maxRadix]string) {
	for v := range words {
		words[v] = strconv.Itoa(v)
	}
	return words
}()

// radixOrDefault reads a zero radix as the default.
func radixOrDefault(radix int) int {
	if radix == 0 {
		return DefaultRadix
	}
	return radix
}

// checkRadix accepts a resolved (non-zero) radix.
func checkRadix(radix int) *FieldError {
	for _, allowed := range Radixes {
		if radix == allowed {
			return nil
		}
	}
	return &FieldError{Field: "radix", Route: -1, Message: fmt.Sprintf(
		"must be one of %s, got %d", radixList(), radix)}
}

// radixList spells the allowed radixes: "2, 4, 8, 16, 256".
func radixList() string {
	var b []byte
	for i, r := range Radixes {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(r), 10)
	}
	return string(b)
}

// radixWord is the word that names the TTL queues and done exchanges of a
// radix other than 2: "r16".
func radixWord(radix int) string {
	return "r" + strconv.Itoa(radix)
}

// digitWidth is the length in bytes of the longest digit word of radix.
func digitWidth(radix int) int {
	return len(digitWords[radix-1])
}

// maxTicks is the largest delay in ticks that levels digits of radix hold,
// radix^levels − 1, saturated at the largest int64.
func maxTicks(levels, radix int) uint64 {
	power := uint64(1)
	for range levels {
		hi, lo := bits.Mul64(power, uint64(radix))
		if hi != 0 || lo > math.MaxInt64 {
			return math.MaxInt64
		}
		power = lo
	}
	return power - 1
}

// maxDelayFor is the longest delay of a set of levels digits of radix at
// resolution, saturated at the largest Duration; 0 when levels or resolution
// is not positive.
func maxDelayFor(levels, radix int, resolution time.Duration) time.Duration {
	if levels < 1 || resolution <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(maxTicks(levels, radix), uint64(resolution))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(lo)
}

// smallestLevels is the fewest levels of radix whose longest delay at
// resolution reaches maxDelay; MaxLevels+1 when none up to MaxLevels does.
func smallestLevels(maxDelay time.Duration, radix int, resolution time.Duration) int {
	levels := MinLevels
	for levels <= MaxLevels && maxDelayFor(levels, radix, resolution) < maxDelay {
		levels++
	}
	return levels
}

// topTTLFactor is the top queue's TTL in ticks, (radix−1)·radix^(levels−1),
// saturated at the largest int64.
func topTTLFactor(levels, radix int) int64 {
	return radixChain{radix: radix}.ttlTicks(stage{levels - 1, radix - 1})
}

// ttlFactorText spells the TTL of the queue of digit at level in ticks as
// the layout writes it: "2^3" in radix 2, "3·4^2" otherwise.
func ttlFactorText(radix, level, digit int) string {
	if radix == 2 {
		return fmt.Sprintf("2^%d", level)
	}
	return fmt.Sprintf("%d·%d^%d", digit, radix, level)
}

// tooManyLevelsForRadix is checkLevels' refusal of a top TTL beyond MaxTTL,
// for a radix other than 2.
func tooManyLevelsForRadix(levels, radix int, resolution time.Duration, limit int) *FieldError {
	return &FieldError{Field: "levels", Route: -1, Message: fmt.Sprintf(
		"%d levels of radix %d at resolution %s give the top queue a TTL of %dms·%s, above the broker's largest message TTL %dms (10 years); at most %d levels fit at this resolution and radix",
		levels, radix, resolution, resolution.Milliseconds(), ttlFactorText(radix, levels-1, radix-1), MaxTTL, limit)}
}

// radixChain answers, for one generation's chain of TTL queues and done
// exchanges in the default layout, the questions whose answer depends on
// the radix: object names, queue TTLs, delay bindings.
type radixChain struct {
	names  Names
	radix  int
	levels int
}

// stage is one TTL queue of the layout: it holds a message whose digit at
// level is digit for digit·radix^level ticks.
type stage struct {
	level, digit int
}

// stages lists the layout's TTL queues by level, then digit, ascending.
func (l radixChain) stages() []stage {
	stages := make([]stage, 0, l.levels*(l.radix-1))
	for k := range l.levels {
		for v := 1; v < l.radix; v++ {
			stages = append(stages, stage{k, v})
		}
	}
	return stages
}

// ttlTicks is the stage's TTL in ticks, digit·radix^level, saturated at the
// largest int64 (a valid set's are within MaxTTL).
func (l radixChain) ttlTicks(s stage) int64 {
	hi, lo := bits.Mul64(maxTicks(s.level, l.radix)+1, uint64(s.digit))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// delayBindings is the number of bindings that carry a message through the
// delay: (radix−1)·D(D+1)/2 to the queues and D+1 to out.
func (l radixChain) delayBindings() int {
	return (l.radix-1)*l.levels*(l.levels+1)/2 + l.levels + 1
}

// appendDelayBindings appends the bindings of an exchange that sees the
// remaining lowest digits of a message's delay: to the queue of (j, v) for
// j = remaining−1 … 0 and v = 1 … radix−1 when digit j is the highest
// nonzero one and is v ("#.0^(remaining−1−j).v.*^j"), and to out when all
// are zero ("#.0^remaining").
func (l radixChain) appendDelayBindings(bindings []Binding, queues [][]string, out, source string, remaining int) []Binding {
	key := make([]byte, 0, 2*remaining+digitWidth(l.radix)) // "#", then one-byte words and one digit
	for j := remaining - 1; j >= 0; j-- {
		for v := 1; v < l.radix; v++ {
			key = appendWords(key[:0], anyWords, 1)
			key = appendWords(key, digitZero, remaining-1-j)
			key = appendWords(key, digitWords[v], 1)
			key = appendWords(key, anyWord, j)
			bindings = append(bindings, Binding{
				Source: source, Destination: queues[j][v], DestinationType: DestinationQueue, RoutingKey: string(key),
			})
		}
	}
	key = appendWords(key[:0], anyWords, 1)
	key = appendWords(key, digitZero, remaining)
	return append(bindings, Binding{
		Source: source, Destination: out, DestinationType: DestinationExchange, RoutingKey: string(key),
	})
}
