package topology

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// topicMatch reports whether a topic exchange binding with the given pattern
// routes a message with routing key key, as RabbitMQ decides it: both split
// into words on '.', "*" matches exactly one word, "#" zero or more words,
// any other word only itself. The empty string has no words.
func topicMatch(pattern, key string) bool {
	return simMatchWords(simWords(pattern), simWords(key))
}

func simWords(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// simMatchWords is glob matching over words, "#" being the glob star and
// "*" the single-word wildcard: on a mismatch it lets the latest "#" absorb
// one more word and retries from there.
func simMatchWords(pattern, key []string) bool {
	p, k := 0, 0
	lastHash, keyAtHash := -1, 0
	for k < len(key) {
		switch {
		case p < len(pattern) && pattern[p] == "#":
			lastHash, keyAtHash = p, k
			p++
		case p < len(pattern) && (pattern[p] == "*" || pattern[p] == key[k]):
			p, k = p+1, k+1
		case lastHash >= 0:
			keyAtHash++
			p, k = lastHash+1, keyAtHash
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == "#" {
		p++
	}
	return p == len(pattern)
}

func TestTopicMatch(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		pattern, key string
		want         bool
	}{
		"hash matches the empty key":            {"#", "", true},
		"hash matches one word":                 {"#", "a", true},
		"hash matches many words":               {"#", "a.b.c", true},
		"hash matches an empty word":            {"#", ".", true},
		"star does not match the empty key":     {"*", "", false},
		"star matches one word":                 {"*", "a", true},
		"star matches an empty word":            {"*.a", ".a", true},
		"star does not match two words":         {"*", "a.b", false},
		"literal matches itself":                {"a.b", "a.b", true},
		"literal needs every word":              {"a.b", "a", false},
		"literal refuses extra words":           {"a", "a.b", false},
		"literal refuses another word":          {"a.b", "a.c", false},
		"trailing hash matches nothing more":    {"a.#", "a", true},
		"trailing hash matches more":            {"a.#", "a.b.c", true},
		"trailing hash needs the prefix":        {"a.#", "b", false},
		"leading hash matches nothing before":   {"#.a", "a", true},
		"leading hash matches words before":     {"#.a", "x.y.a", true},
		"leading hash needs the suffix":         {"#.a", "a.x", false},
		"hash in the middle matches none":       {"a.#.b", "a.b", true},
		"hash in the middle matches some":       {"a.#.b", "a.x.y.b", true},
		"hash then stars counts from the end":   {"#.1.*.*", "x.1.0.1", true},
		"hash then stars counts exactly":        {"#.1.*.*", "1.0.1.0", false},
		"hash then stars need enough words":     {"#.*.*", "a", false},
		"two hashes":                            {"#.#", "", true},
		"hash star matches at least one word":   {"#.*", "", false},
		"empty pattern matches the empty key":   {"", "", true},
		"empty pattern refuses a word":          {"", "a", false},
		"empty key refuses a literal":           {"a", "", false},
		"delay digits all zero":                 {"#.0.0.0.0", "orders.0.0.0.0", true},
		"delay digits only last words count":    {"#.0.0.0.0", "0.0.0.0.1", false},
		"digit-like key words do not interfere": {"#.1.*.*.*", "a.1.0.0.0.0.0", false},
		"route key with stars":                  {"a.1.0.*.*", "a.1.0.1.1", true},
		"route key with stars refuses more":     {"a.1.0.*.*", "a.1.0.x.1.1", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := topicMatch(tc.pattern, tc.key); got != tc.want {
				t.Errorf("topicMatch(%q, %q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
			}
		})
	}
}

// simStep is one object a message passed through in the simulator.
type simStep struct {
	Kind DestinationType // queue or exchange
	Name string
}

func (s simStep) String() string { return string(s.Kind) + " " + s.Name }

// simDelivery is one copy of a published message that reached a terminal
// destination: a queue without a TTL, or an exchange or queue outside the
// topology. Path lists everything it passed through, destination included;
// Wait is the sum of the TTLs of the queues it waited in.
type simDelivery struct {
	Path        []simStep
	Wait        time.Duration
	Destination simStep
}

// simMaxSteps bounds a message's path, so that a looping topology fails the
// test instead of hanging it.
const simMaxSteps = 1000

// simBroker is a tiny model of a broker running a topology, indexed for
// [simulate].
type simBroker struct {
	exchanges map[string]Exchange
	queues    map[string]Queue
	bySource  map[string][]Binding
	patterns  map[string][]string // binding keys split into words, split once
}

func newSimBroker(top Topology) *simBroker {
	b := &simBroker{
		exchanges: make(map[string]Exchange, len(top.Exchanges)),
		queues:    make(map[string]Queue, len(top.Queues)),
		bySource:  make(map[string][]Binding),
		patterns:  make(map[string][]string),
	}
	for _, e := range top.Exchanges {
		b.exchanges[e.Name] = e
	}
	for _, q := range top.Queues {
		b.queues[q.Name] = q
	}
	for _, binding := range top.Bindings {
		b.bySource[binding.Source] = append(b.bySource[binding.Source], binding)
		b.patterns[binding.RoutingKey] = simWords(binding.RoutingKey)
	}
	return b
}

// simulate publishes a message with routingKey to exchange on broker, and
// returns where every copy of it ends. An exchange routes to every binding
// whose key matches (topic) or to all of them (fanout), each queue once, and
// to its alternate exchange when none matches (and drops the message when it
// has none); a queue with a MessageTTL holds a message that long, then
// dead-letters it to its DeadLetterExchange with the same routing key; a
// queue without one, or any object outside the topology, is terminal. A
// message dead-lettered into a queue it has already been through is dropped,
// as the broker's cycle detection does: it shows as a delivery to queue
// "dropped".
func simulate(t *testing.T, broker *simBroker, exchange, routingKey string) []simDelivery {
	t.Helper()
	return simulateFrom(t, broker, simStep{DestinationExchange, exchange}, routingKey)
}

// simulateFrom is [simulate] of a message that starts at start: published
// to an exchange, or just entered a queue, where it waits its TTL.
func simulateFrom(t *testing.T, broker *simBroker, start simStep, routingKey string) []simDelivery {
	t.Helper()
	var deliveries []simDelivery
	keyWords := simWords(routingKey)
	// route sends the message on from an exchange: to the distinct queues it
	// matches, through exchange-to-exchange bindings, or to the alternate exchange.
	var route func(name string, path []simStep, wait time.Duration)
	var enterQueue func(name string, path []simStep, wait time.Duration)
	route = func(name string, path []simStep, wait time.Duration) {
		path = append(slices.Clip(path), simStep{DestinationExchange, name})
		if len(path) > simMaxSteps {
			t.Fatalf("message %q loops: %v", routingKey, path[:20])
		}
		e, ok := broker.exchanges[name]
		if !ok {
			deliveries = append(deliveries, simDelivery{Path: path, Wait: wait, Destination: simStep{DestinationExchange, name}})
			return
		}
		var matched []Binding
		for _, b := range broker.bySource[name] {
			if e.Type == ExchangeFanout || simMatchWords(broker.patterns[b.RoutingKey], keyWords) {
				matched = append(matched, b)
			}
		}
		if len(matched) == 0 && e.Arguments.AlternateExchange != "" {
			route(e.Arguments.AlternateExchange, path, wait)
			return
		}
		var seenQueues []string
		for _, b := range matched {
			if b.DestinationType == DestinationExchange {
				route(b.Destination, path, wait)
				continue
			}
			if !slices.Contains(seenQueues, b.Destination) { // a queue gets one copy however many bindings match
				seenQueues = append(seenQueues, b.Destination)
				enterQueue(b.Destination, path, wait)
			}
		}
	}
	enterQueue = func(name string, path []simStep, wait time.Duration) {
		step := simStep{DestinationQueue, name}
		if slices.Contains(path, step) {
			deliveries = append(deliveries, simDelivery{Path: path, Wait: wait, Destination: simStep{DestinationQueue, "dropped"}})
			return
		}
		path = append(slices.Clip(path), step)
		q, ok := broker.queues[name]
		if !ok || q.Arguments.MessageTTL == 0 {
			deliveries = append(deliveries, simDelivery{Path: path, Wait: wait, Destination: step})
			return
		}
		route(q.Arguments.DeadLetterExchange, path, wait+time.Duration(q.Arguments.MessageTTL)*time.Millisecond)
	}
	if start.Kind == DestinationQueue {
		enterQueue(start.Name, nil, 0)
	} else {
		route(start.Name, nil, 0)
	}
	return deliveries
}

// simRoutes are the routes of the simulated sets: keyed routes, one whose
// key has digit-like words, a route to an exchange and a catch-all.
var simRoutes = []Route{
	{Destination: "eu-orders", Key: "orders.eu"},
	{Destination: "digits", Key: "a.1.0"},
	{Destination: "audit", DestinationType: DestinationExchange, Key: "orders.eu"},
	{Destination: "everything", Key: ""},
}

// simMessages are message keys and the destinations of the routes they match.
var simMessages = map[string][]simStep{
	"orders.eu":       {{DestinationExchange, "audit"}, {DestinationQueue, "eu-orders"}, {DestinationQueue, "everything"}},
	"a.1.0":           {{DestinationQueue, "digits"}, {DestinationQueue, "everything"}},
	"":                {{DestinationQueue, "everything"}},
	"orders":          {{DestinationQueue, "everything"}},
	"orders.eu.extra": {{DestinationQueue, "everything"}},
	"1.0":             {{DestinationQueue, "everything"}},
}

// simLevels is, for each radix, the most levels the simulator tries: every
// delay of sets up to 4,096 ticks, which keeps the whole test under a few
// seconds.
var simLevels = map[int]int{2: 12, 4: 6, 8: 4, 16: 3, 256: 2}

// simDigits writes ticks as levels digits of radix, least significant first.
func simDigits(ticks uint64, levels, radix int) []int {
	digits := make([]int, levels)
	for k := range digits {
		digits[k] = int(ticks % uint64(radix))
		ticks /= uint64(radix)
	}
	return digits
}

func TestSimulateEveryDelay(t *testing.T) {
	t.Parallel()
	for _, radix := range Radixes {
		for levels := 1; levels <= simLevels[radix]; levels++ {
			t.Run(fmt.Sprintf("r=%d/N=%d", radix, levels), func(t *testing.T) {
				t.Parallel()
				const resolution = time.Millisecond
				spec := Spec{Name: "delay", VHost: "/", Levels: levels, Radix: radix, Resolution: resolution, Routes: simRoutes}
				top, err := Plan(spec)
				if err != nil {
					t.Fatal(err)
				}
				broker, names := newSimBroker(top), Names(spec.Name)
				format := KeyFormat{Levels: levels, Radix: radix, Resolution: resolution}
				for ticks := range maxTicks(levels, radix) + 1 {
					delay := time.Duration(ticks) * resolution
					// The queues of the nonzero digits, largest position first.
					var wantLevels []simStep
					digits := simDigits(ticks, levels, radix)
					for k := levels - 1; k >= 0; k-- {
						if digits[k] != 0 {
							wantLevels = append(wantLevels, simStep{DestinationQueue, names.Queue(radix, k, digits[k])})
						}
					}
					for key, wantDestinations := range simMessages {
						routingKey, err := format.Encode(key, delay)
						if err != nil {
							t.Fatal(err)
						}
						deliveries := simulate(t, broker, names.Ingest(), routingKey)
						var gotDestinations []simStep
						for _, d := range deliveries {
							gotDestinations = append(gotDestinations, d.Destination)
							simCheckDelayPath(t, names, names.Out(), routingKey, d, wantLevels, delay)
							// Every copy is made at out, so the paths only differ in their destinations.
							if first, this := deliveries[0].Path[:len(deliveries[0].Path)-1], d.Path[:len(d.Path)-1]; !slices.Equal(first, this) {
								t.Fatalf("routing key %q: copies took different paths (-first +this):\n%s", routingKey, cmp.Diff(first, this))
							}
						}
						slices.SortFunc(gotDestinations, func(a, b simStep) int { return strings.Compare(a.String(), b.String()) })
						if !slices.Equal(wantDestinations, gotDestinations) {
							t.Fatalf("routing key %q: destinations (-want +got):\n%s", routingKey, cmp.Diff(wantDestinations, gotDestinations))
						}
					}
				}
			})
		}
	}
}

// simCheckDelayPath checks the path of one delivery of a well-formed routing
// key: exactly the TTL queues of the nonzero digits (of any generation),
// largest position first, each once, for exactly the delay (never early),
// then the out exchange exactly once, then the route's destination.
func simCheckDelayPath(t *testing.T, names Names, out, routingKey string, d simDelivery, wantLevels []simStep, delay time.Duration) {
	t.Helper()
	var gotLevels []simStep
	outVisits := 0
	for i, step := range d.Path {
		if step.Kind == DestinationQueue && names.parse(step.Name).kind == kindLevel {
			gotLevels = append(gotLevels, step)
		}
		if step.Kind == DestinationExchange && names.parse(step.Name).kind == kindOut {
			if step.Name != out {
				t.Fatalf("routing key %q: left through %s, want %s: %v", routingKey, step.Name, out, d.Path)
			}
			outVisits++
			if i != len(d.Path)-2 {
				t.Fatalf("routing key %q: out is not the last exchange before the destination: %v", routingKey, d.Path)
			}
		}
	}
	if !slices.Equal(wantLevels, gotLevels) {
		t.Fatalf("routing key %q: level queues visited (-want +got):\n%s\npath %v", routingKey, cmp.Diff(wantLevels, gotLevels), d.Path)
	}
	if outVisits != 1 {
		t.Fatalf("routing key %q: passed out %d times, want once: %v", routingKey, outVisits, d.Path)
	}
	if d.Wait != delay {
		t.Fatalf("routing key %q: waited %s, want %s", routingKey, d.Wait, delay)
	}
}

func TestSimulateMalformedKeysEndUnroutable(t *testing.T) {
	t.Parallel()
	for _, radix := range Radixes {
		for levels := 1; levels <= simLevels[radix]; levels++ {
			t.Run(fmt.Sprintf("r=%d/N=%d", radix, levels), func(t *testing.T) {
				t.Parallel()
				format := KeyFormat{Levels: levels, Radix: radix, Resolution: time.Millisecond}
				spec := Spec{Name: "delay", VHost: "/", Levels: levels, Radix: radix, Resolution: time.Millisecond, Routes: simRoutes}
				top, err := Plan(spec)
				if err != nil {
					t.Fatal(err)
				}
				broker, names := newSimBroker(top), Names(spec.Name)
				// Words that are no digit of this radix: one past the largest
				// digit, the largest digit of radix 16 (of a smaller radix) or
				// two past the largest, padded, empty, wildcards.
				bad := []string{strconv.Itoa(radix), "15", "x", "", "00", "01", "*", "#"}
				if radix >= 16 {
					bad[1] = strconv.Itoa(radix + 1)
				}
				var malformed []string
				for _, ticks := range simSampleTicks(levels, radix) {
					digits := string(appendDigits(nil, ticks, levels, radix))
					words := strings.Split(digits, ".")
					// Too few digits, with and without a key before them.
					short := strings.Join(words[1:], ".")
					malformed = append(malformed, short, simJoin("orders.eu", short), simJoin("x", short))
					// One digit word replaced by a non-digit, in every position.
					for i := range words {
						for _, word := range bad {
							broken := slices.Clone(words)
							broken[i] = word
							malformed = append(malformed, simJoin("orders", strings.Join(broken, ".")))
						}
					}
				}
				malformed = append(malformed, "", "orders", "orders.eu")
				for _, routingKey := range malformed {
					if _, _, err := format.Decode(routingKey); err == nil {
						t.Fatalf("Decode(%q) accepted a key this test calls malformed", routingKey)
					}
					deliveries := simulate(t, broker, names.Ingest(), routingKey)
					if len(deliveries) != 1 || deliveries[0].Destination != (simStep{DestinationQueue, names.Unroutable()}) {
						t.Fatalf("routing key %q with %d levels of radix %d ended in %v, want only queue %s",
							routingKey, levels, radix, deliveries, names.Unroutable())
					}
				}
			})
		}
	}
}

// simSampleTicks is every delay in ticks up to 256 ticks, and beyond that
// 256 delays spread over the range, both ends and one-bit and all-but-one-bit
// delays included (in radix 2; in others whatever those numbers are).
func simSampleTicks(levels, radix int) []uint64 {
	count := maxTicks(levels, radix) + 1
	if count <= 256 {
		ticks := make([]uint64, count)
		for i := range ticks {
			ticks[i] = uint64(i)
		}
		return ticks
	}
	var ticks []uint64
	for i := range uint64(256 - 2*levels) {
		ticks = append(ticks, i*(count/(256-2*uint64(levels)))+i%3)
	}
	for bit := range levels {
		ticks = append(ticks, 1<<bit, count-1-1<<bit)
	}
	return append(ticks, count-1)
}

func simJoin(key, digits string) string {
	if digits == "" {
		return key
	}
	return key + "." + digits
}

func TestSimulateExtraDigitsLoseHighBits(t *testing.T) {
	t.Parallel()
	// DESIGN.md: a key with more digits than N silently loses its high bits.
	top, err := Plan(Spec{Name: "delay", VHost: "/", Levels: 3, Resolution: time.Second, Routes: simRoutes})
	if err != nil {
		t.Fatal(err)
	}
	deliveries := simulate(t, newSimBroker(top), "delay.ingest", "orders.1.0.1.1") // reads as orders.1 with 3 ticks
	if len(deliveries) != 1 || deliveries[0].Wait != 3*time.Second || deliveries[0].Destination.Name != "everything" {
		t.Fatalf("got %+v, want one delivery to everything after 3s", deliveries)
	}
}

func TestSimulateDetectsLoops(t *testing.T) {
	t.Parallel()
	// The simulator itself must see a dead-letter cycle, or the tests above
	// could not notice the planner producing one.
	top := Topology{
		Exchanges: []Exchange{{Name: "x", Type: ExchangeTopic}},
		Queues:    []Queue{{Name: "q", Arguments: QueueArguments{MessageTTL: 5, DeadLetterExchange: "x"}}},
		Bindings:  []Binding{{Source: "x", Destination: "q", DestinationType: DestinationQueue, RoutingKey: "k.#"}},
	}
	broker := newSimBroker(top)
	deliveries := simulate(t, broker, "x", "k")
	want := []simDelivery{{
		Path:        []simStep{{DestinationExchange, "x"}, {DestinationQueue, "q"}, {DestinationExchange, "x"}},
		Wait:        5 * time.Millisecond,
		Destination: simStep{DestinationQueue, "dropped"},
	}}
	if diff := cmp.Diff(want, deliveries); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// An exchange with no match and no alternate exchange drops the message.
	if got := simulate(t, broker, "x", "other"); len(got) != 0 {
		t.Fatalf("unmatched key: %v, want no delivery", got)
	}
}

// TestSimulateHopsArePopcount checks the design's claim of popcount(ticks)
// hops in radix 2, and of one hop per nonzero digit in the others, counted
// on the whole path this time.
func TestSimulateHopsArePopcount(t *testing.T) {
	t.Parallel()
	for _, radix := range Radixes {
		levels := min(simLevels[radix], 10)
		top, err := Plan(Spec{Name: "d", VHost: "/", Levels: levels, Radix: radix, Resolution: time.Millisecond,
			Routes: []Route{{Destination: "sink"}}})
		if err != nil {
			t.Fatal(err)
		}
		broker := newSimBroker(top)
		format := KeyFormat{Levels: levels, Radix: radix, Resolution: time.Millisecond}
		for ticks := range maxTicks(levels, radix) + 1 {
			key, err := format.Encode("", time.Duration(ticks)*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			hops := 0
			for _, digit := range simDigits(ticks, levels, radix) {
				if digit != 0 {
					hops++
				}
			}
			if radix == 2 && hops != bits.OnesCount64(ticks) {
				t.Fatalf("ticks %d: %d nonzero binary digits, popcount %d", ticks, hops, bits.OnesCount64(ticks))
			}
			deliveries := simulate(t, broker, "d.ingest", key)
			// Path: ingest, then (TTL queue, done exchange) per hop, out, sink.
			if len(deliveries) != 1 || len(deliveries[0].Path) != 1+2*hops+2 {
				t.Fatalf("radix %d, ticks %d: %+v", radix, ticks, deliveries)
			}
		}
	}
}

// simLibraryRoutes are the routes of the simulated library sets: two
// destinations of one key, a wildcard key (as a Celery topic queue binds),
// a key with bit-like words, and a catch-all.
var simLibraryRoutes = []Route{
	{Destination: "sales", Key: "Sales"},
	{Destination: "audit", DestinationType: DestinationExchange, Key: "Sales"},
	{Destination: "tasks", Key: "tasks.#"},
	{Destination: "digits", Key: "a.1.0"},
	{Destination: "everything"},
}

// simLibraryMessages are message keys and the destinations of the routes
// they match: the delivery exchange matches the end of the routing key.
var simLibraryMessages = map[string][]simStep{
	"Sales":     {{DestinationExchange, "audit"}, {DestinationQueue, "everything"}, {DestinationQueue, "sales"}},
	"eu.Sales":  {{DestinationExchange, "audit"}, {DestinationQueue, "everything"}, {DestinationQueue, "sales"}},
	"Sales.eu":  {{DestinationQueue, "everything"}},
	"tasks.add": {{DestinationQueue, "everything"}, {DestinationQueue, "tasks"}},
	"a.1.0":     {{DestinationQueue, "digits"}, {DestinationQueue, "everything"}},
	"1.0":       {{DestinationQueue, "everything"}},
}

// simLibraryLayouts are the libraries' layouts the simulator runs.
var simLibraryLayouts = map[string]Spec{
	"nservicebus":    {Name: "nsb", VHost: "/", Layout: LayoutNServiceBus},
	"celery":         {Name: "celery", VHost: "/", Layout: LayoutCelery},
	"celery classic": {Name: "celery", VHost: "/", Layout: LayoutCelery, QueueType: QueueTypeClassic},
}

// simLibraryTicks are the delays in seconds tried in a library's layout:
// every delay up to 2^8 − 1, and a sample spanning all 28 bits.
func simLibraryTicks() []uint64 {
	ticks := make([]uint64, 0, 512)
	for i := range uint64(1 << 8) {
		ticks = append(ticks, i)
	}
	return append(ticks, simSampleTicks(libraryLevels, 2)...)
}

// TestSimulateLibraryLayouts publishes every delay the way each library
// does (its entry exchange, its key format) and checks that every copy
// reaches exactly the routes' destinations after exactly its delay, never
// early, through the queues of its set bits from the highest down, each
// once (popcount hops), every level exchange from the entry down to 0 once
// each, and the delivery exchange last.
func TestSimulateLibraryLayouts(t *testing.T) {
	t.Parallel()
	for name, spec := range simLibraryLayouts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec.Routes = simLibraryRoutes
			spec = mustResolve(t, spec)
			lib := libraryNamed(spec.Layout)
			broker, format := newSimBroker(mustPlan(t, spec)), spec.KeyFormat()
			for _, ticks := range simLibraryTicks() {
				delay := time.Duration(ticks) * time.Second
				entry, err := spec.EntryExchange(delay)
				if err != nil {
					t.Fatal(err)
				}
				entryLevel, _ := lib.parseLevel(entry)
				if highest := bits.Len64(ticks) - 1; lib.entryAtHighestBit && entryLevel != max(highest, 0) || !lib.entryAtHighestBit && entryLevel != 27 {
					t.Fatalf("%ds: entry %s", ticks, entry)
				}
				var wantExchanges, wantQueues []simStep
				for k := entryLevel; k >= 0; k-- {
					wantExchanges = append(wantExchanges, simStep{DestinationExchange, lib.level(k)})
					if ticks>>k&1 == 1 {
						wantQueues = append(wantQueues, simStep{DestinationQueue, lib.level(k)})
					}
				}
				wantExchanges = append(wantExchanges, simStep{DestinationExchange, lib.delivery})
				if len(wantQueues) != bits.OnesCount64(ticks) {
					t.Fatalf("%ds: %d queues expected, popcount %d", ticks, len(wantQueues), bits.OnesCount64(ticks))
				}
				for key, wantDestinations := range simLibraryMessages {
					routingKey, err := format.Encode(key, delay)
					if err != nil {
						t.Fatal(err)
					}
					var gotDestinations []simStep
					for _, d := range simulate(t, broker, entry, routingKey) {
						gotDestinations = append(gotDestinations, d.Destination)
						var gotExchanges, gotQueues []simStep
						for _, step := range d.Path[:len(d.Path)-1] {
							if step.Kind == DestinationQueue {
								gotQueues = append(gotQueues, step)
							} else {
								gotExchanges = append(gotExchanges, step)
							}
						}
						if !slices.Equal(wantQueues, gotQueues) || !slices.Equal(wantExchanges, gotExchanges) {
							t.Fatalf("routing key %q from %s: path %v, want the exchanges %v and the queues %v", routingKey, entry, d.Path, wantExchanges, wantQueues)
						}
						if d.Wait != delay {
							t.Fatalf("routing key %q: waited %s, want %s", routingKey, d.Wait, delay)
						}
					}
					slices.SortFunc(gotDestinations, func(a, b simStep) int { return strings.Compare(a.String(), b.String()) })
					if !slices.Equal(wantDestinations, gotDestinations) {
						t.Fatalf("routing key %q: destinations (-want +got):\n%s", routingKey, cmp.Diff(wantDestinations, gotDestinations))
					}
				}
			}
		})
	}
}

// TestSimulateLibraryMalformedKeys checks that a routing key Decode
// refuses never reaches a destination: a bit that is no "0" or "1", too
// few bits, no key or an empty one. Nothing parks it in these layouts: it
// is dropped. A Celery publisher always enters at level 27; an NServiceBus
// publisher enters at its delay's highest bit, and a level only reads its
// own bit, so a key is tried from every level that reads its malformed
// word (TestSimulateNServiceBusEntryVouchesForHigherBits shows the rest).
func TestSimulateLibraryMalformedKeys(t *testing.T) {
	t.Parallel()
	for name, spec := range simLibraryLayouts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec.Routes = []Route{{Destination: "sales", Key: "Sales"}, {Destination: "audit", DestinationType: DestinationExchange, Key: "Sales"}}
			spec = mustResolve(t, spec)
			lib := libraryNamed(spec.Layout)
			broker, format := newSimBroker(mustPlan(t, spec)), spec.KeyFormat()
			type malformed struct {
				routingKey string
				readFrom   int // the lowest entry level that reads the malformed word
			}
			var keys []malformed
			for _, ticks := range []uint64{0, 1, 2, 5, 13, 255, 256, 1 << 27, 1<<28 - 1, 12_345_678} {
				words := strings.Split(string(appendDigits(nil, ticks, libraryLevels, 2)), ".")
				bitsOnly := strings.Join(words, ".")
				keys = append(keys,
					malformed{strings.Join(words[1:], ".") + ".Sales", 0}, // 27 bits: level 0 reads "Sales"
					malformed{bitsOnly, 0},
					malformed{bitsOnly + ".", 0},
				)
				for position := range words {
					for _, bad := range []string{"2", "x", "", "01", "*", "#"} {
						broken := slices.Clone(words)
						broken[position] = bad
						keys = append(keys, malformed{strings.Join(broken, ".") + ".Sales", libraryLevels - 1 - position})
					}
				}
			}
			for _, m := range keys {
				if _, _, err := format.Decode(m.routingKey); err == nil {
					t.Fatalf("Decode(%q) accepted a key this test calls malformed", m.routingKey)
				}
				entries := []int{libraryLevels - 1}
				if lib.entryAtHighestBit {
					entries = nil
					for level := m.readFrom; level < libraryLevels; level++ {
						entries = append(entries, level)
					}
				}
				for _, level := range entries {
					if deliveries := simulate(t, broker, lib.level(level), m.routingKey); len(deliveries) != 0 {
						t.Fatalf("routing key %q from %s ended in %v, want nowhere", m.routingKey, lib.level(level), deliveries)
					}
				}
			}
		})
	}
}

// TestSimulateNServiceBusEntryVouchesForHigherBits documents what the
// NServiceBus layout leaves to its publisher: a message entering at level
// k is never asked for the bits above k, so whatever words stand there
// pass unread.
func TestSimulateNServiceBusEntryVouchesForHigherBits(t *testing.T) {
	t.Parallel()
	spec := Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, Routes: []Route{{Destination: "sales", Key: "Sales"}}}
	broker := newSimBroker(mustPlan(t, spec))
	routingKey := strings.Repeat("x.", 24) + "1.0.1.1.Sales" // 11s, with words above bit 3 that are no bits
	deliveries := simulate(t, broker, "nsb.v2.delay-level-03", routingKey)
	if len(deliveries) != 1 || deliveries[0].Wait != 11*time.Second || deliveries[0].Destination.Name != "sales" {
		t.Fatalf("got %+v, want one delivery to sales after 11s", deliveries)
	}
	if got := simulate(t, broker, "nsb.v2.delay-level-27", routingKey); len(got) != 0 {
		t.Fatalf("from level 27: %+v, want nowhere", got)
	}
}
