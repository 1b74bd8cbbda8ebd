package topology

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// specBase is a valid spec that the cases below change one thing in.
func specBase(change func(*Spec)) Spec {
	s := Spec{Name: "delay", VHost: "/", Levels: 4}
	if change != nil {
		change(&s)
	}
	return s
}

// specWantError is one FieldError a case expects: its field, its route index
// and a fragment of its message.
type specWantError struct {
	Field    string
	Route    int
	Fragment string
}

// specInvalidCases are specs Validate must refuse, with every error it must
// report, in order.
var specInvalidCases = map[string]struct {
	spec Spec
	want []specWantError
}{
	"zero spec": {Spec{}, []specWantError{
		{"name", -1, "must not be empty; use ASCII letters, digits, '.', '_', '-' and ':'"},
		{"vhost", -1, "must not be empty"},
		{"levels", -1, "set exactly one of levels (1 to 32) and max_delay"},
	}},
	"name too long": {specBase(func(s *Spec) { s.Name = strings.Repeat("n", MaxSetNameLength+1) }), []specWantError{
		{"name", -1, "must be at most 241 bytes so that every object name (the longest is \"<name>.level.00.done\") fits AMQP's 255 bytes, got 242"},
	}},
	"name too long for its generation": {specBase(func(s *Spec) { s.Name, s.Generation = strings.Repeat("n", MaxSetNameLength), 10 }), []specWantError{
		{"name", -1, "must be at most 237 bytes for generation 10 of the set's queues, whose longest name (\"<name>.level.00.done.g10\") must fit AMQP's 255 bytes, got 241"},
	}},
	"negative generation": {specBase(func(s *Spec) { s.Generation = -1 }), []specWantError{
		{"generation", -1, "must be from 0 to 999999, got -1"},
	}},
	"generation too high": {specBase(func(s *Spec) { s.Generation = MaxGeneration + 1 }), []specWantError{
		{"generation", -1, "must be from 0 to 999999, got 1000000"},
	}},
	"exchanges of a later generation": {specBase(func(s *Spec) { s.Generation, s.FormatGeneration = 2, 3 }), []specWantError{
		{"generation", -1, "the exchanges' generation must be from 0 to the set's generation 2, got 3"},
	}},
	"name with a space": {specBase(func(s *Spec) { s.Name = "my delay" }), []specWantError{
		{"name", -1, "has the character ' ' at byte 2; only ASCII letters, digits, '.', '_', '-' and ':' are allowed"},
	}},
	"name with a non-ASCII letter": {specBase(func(s *Spec) { s.Name = "délai" }), []specWantError{
		{"name", -1, "has the character 'é' at byte 1; only ASCII letters"},
	}},
	"name with a slash and many bad characters reports once": {specBase(func(s *Spec) { s.Name = "a/b/c#d" }), []specWantError{
		{"name", -1, "has the character '/' at byte 1"},
	}},
	"name reserved by the broker": {specBase(func(s *Spec) { s.Name = "amq.delay" }), []specWantError{
		{"name", -1, "must not start with \"amq.\": the broker reserves those names"},
	}},
	"name starting with a dot": {specBase(func(s *Spec) { s.Name = ".delay" }), []specWantError{
		{"name", -1, "must not start or end with '.' nor contain \"..\""},
	}},
	"name ending with a dot": {specBase(func(s *Spec) { s.Name = "delay." }), []specWantError{
		{"name", -1, "must not start or end with '.'"},
	}},
	"name with an empty word": {specBase(func(s *Spec) { s.Name = "a..b" }), []specWantError{
		{"name", -1, "nor contain \"..\", got \"a..b\""},
	}},
	"empty vhost": {specBase(func(s *Spec) { s.VHost = "" }), []specWantError{
		{"vhost", -1, "must not be empty (any UTF-8 text up to 255 bytes without control characters)"},
	}},
	"vhost too long": {specBase(func(s *Spec) { s.VHost = strings.Repeat("v", 256) }), []specWantError{
		{"vhost", -1, "must be at most 255 bytes, got 256"},
	}},
	"vhost not UTF-8": {specBase(func(s *Spec) { s.VHost = "v\xffh" }), []specWantError{
		{"vhost", -1, "must be valid UTF-8"},
	}},
	"vhost with a control character": {specBase(func(s *Spec) { s.VHost = "a\nb" }), []specWantError{
		{"vhost", -1, "must not contain control characters"},
	}},
	"levels and max_delay both set": {specBase(func(s *Spec) { s.MaxDelay = time.Minute }), []specWantError{
		{"levels", -1, "conflicts with max_delay"},
		{"max_delay", -1, "conflicts with levels"},
	}},
	"levels above 32": {specBase(func(s *Spec) { s.Levels = 33 }), []specWantError{
		{"levels", -1, "must be between 1 and 32, got 33"},
	}},
	"negative levels": {specBase(func(s *Spec) { s.Levels = -1 }), []specWantError{
		{"levels", -1, "must be between 1 and 32, got -1"},
	}},
	"levels whose top TTL exceeds ten years": {specBase(func(s *Spec) { s.Levels = 30 }), []specWantError{
		{"levels", -1, "30 levels at resolution 1s give the top level a TTL of 1000ms·2^29, above the broker's largest message TTL 315360000000ms (10 years); at most 29 levels fit at this resolution"},
	}},
	"32 levels at one second": {specBase(func(s *Spec) { s.Levels = 32 }), []specWantError{
		{"levels", -1, "at most 29 levels fit at this resolution"},
	}},
	"negative max_delay": {specBase(func(s *Spec) { s.Levels, s.MaxDelay = 0, -time.Second }), []specWantError{
		{"max_delay", -1, "must be positive, got -1s"},
	}},
	"max_delay needing 33 levels": {specBase(func(s *Spec) {
		s.Levels, s.MaxDelay, s.Resolution = 0, MaxDelayFor(32, time.Millisecond)+time.Millisecond, time.Millisecond
	}), []specWantError{
		{"max_delay", -1, "needs more levels than fit at resolution 1ms (at most 32, each level's TTL at most 315360000000ms); the largest max_delay at this resolution is 1193h2m47.295s"},
	}},
	"max_delay beyond the ten-year TTL": {specBase(func(s *Spec) { s.Levels, s.MaxDelay = 0, MaxDelayFor(29, time.Second)+1 }), []specWantError{
		{"max_delay", -1, "(at most 29, each level's TTL at most 315360000000ms); the largest max_delay at this resolution is 149130h48m31s"},
	}},
	"largest max_delay": {specBase(func(s *Spec) { s.Levels, s.MaxDelay = 0, math.MaxInt64 }), []specWantError{
		{"max_delay", -1, "the largest max_delay at this resolution is 149130h48m31s"},
	}},
	"negative resolution": {specBase(func(s *Spec) { s.Resolution = -time.Second }), []specWantError{
		{"resolution", -1, "must be at least 1ms, got -1s"},
	}},
	"resolution under a millisecond": {specBase(func(s *Spec) { s.Resolution = 500 * time.Microsecond }), []specWantError{
		{"resolution", -1, "must be at least 1ms, got 500µs"},
	}},
	"resolution not whole milliseconds": {specBase(func(s *Spec) { s.Resolution = 1500 * time.Microsecond }), []specWantError{
		{"resolution", -1, "must be a whole number of milliseconds (message TTLs are integer milliseconds), got 1.5ms"},
	}},
	"resolution beyond the largest TTL": {specBase(func(s *Spec) { s.Levels, s.Resolution = 1, time.Duration(MaxTTL+1)*time.Millisecond }), []specWantError{
		{"resolution", -1, "must be at most the broker's largest message TTL, 315360000000ms (10 years)"},
	}},
	"bad resolution hides the max_delay checks": {specBase(func(s *Spec) { s.Levels, s.MaxDelay, s.Resolution = 0, math.MaxInt64, 1 }), []specWantError{
		{"resolution", -1, "must be at least 1ms, got 1ns"},
	}},
	"unknown queue type": {specBase(func(s *Spec) { s.QueueType = "stream" }), []specWantError{
		{"queue_type", -1, "must be one of \"quorum\", \"classic\", got \"stream\""},
	}},
	"unknown dead-letter strategy": {specBase(func(s *Spec) { s.DeadLetterStrategy = "exactly-once" }), []specWantError{
		{"dead_letter_strategy", -1, "must be one of \"at-least-once\", \"at-most-once\", got \"exactly-once\""},
	}},
	"at-least-once on classic queues": {specBase(func(s *Spec) { s.QueueType, s.DeadLetterStrategy = QueueTypeClassic, AtLeastOnce }), []specWantError{
		{"dead_letter_strategy", -1, "\"at-least-once\" needs queue_type \"quorum\": classic queues can only dead-letter at-most-once"},
	}},
	"unknown leader locator": {specBase(func(s *Spec) { s.QueueLeaderLocator = "min-masters" }), []specWantError{
		{"queue_leader_locator", -1, `must be one of "balanced", "client-local", got "min-masters"`},
	}},
	"nservicebus declares no leader locator": {Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, QueueLeaderLocator: LeaderLocatorBalanced}, []specWantError{
		{"queue_leader_locator", -1, `must be unset in the nservicebus layout: NServiceBus declares its queues without x-queue-leader-locator`},
	}},
	"group size below 1": {specBase(func(s *Spec) { s.QuorumInitialGroupSize = -1 }), []specWantError{
		{"quorum_initial_group_size", -1, "must be at least 1 (the nodes that hold a replica of each quorum queue), got -1"},
	}},
	"group size of classic queues": {specBase(func(s *Spec) { s.QueueType, s.QuorumInitialGroupSize = QueueTypeClassic, 2 }), []specWantError{
		{"quorum_initial_group_size", -1, `applies to quorum queues only: a classic queue lives on one node and has no replicas; leave it unset, or set queue_type = "quorum"; got 2`},
	}},
	"nservicebus declares no group size": {Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, QuorumInitialGroupSize: 3}, []specWantError{
		{"quorum_initial_group_size", -1, "must be unset in the nservicebus layout: NServiceBus declares its queues without x-quorum-initial-group-size, " +
			"and a queue declared with other arguments than the library's fails the library's own declaration; no policy sets it: to keep the " +
			"queues on fewer nodes, set the broker's quorum_queue.initial_cluster_size"},
	}},
	"celery declares no group size": {Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, QuorumInitialGroupSize: 1}, []specWantError{
		{"quorum_initial_group_size", -1, "must be unset in the celery layout: Celery declares its queues without x-quorum-initial-group-size"},
	}},
	"celery unknown leader locator": {Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, QueueLeaderLocator: "random"}, []specWantError{
		{"queue_leader_locator", -1, `must be one of "balanced", "client-local", got "random"`},
	}},
	"empty destination": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "ok"}, {Destination: ""}} }), []specWantError{
		{"route.destination", 1, "must not be empty (a queue or exchange name up to 255 bytes without control characters)"},
	}},
	"destination too long": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: strings.Repeat("d", 256)}} }), []specWantError{
		{"route.destination", 0, "must be at most 255 bytes, got 256"},
	}},
	"destination with a control character": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "q\x00"}} }), []specWantError{
		{"route.destination", 0, "must not contain control characters"},
	}},
	"destination is the set's ingest": {specBase(func(s *Spec) {
		s.Routes = []Route{{Destination: "delay.ingest", DestinationType: DestinationExchange}}
	}), []specWantError{
		{"route.destination", 0, "\"delay.ingest\" is one of the set's own objects: routing delivered messages back into the set would loop"},
	}},
	"destination is a level queue of the set": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "delay.level.02"}} }), []specWantError{
		{"route.destination", 0, "is one of the set's own objects"},
	}},
	"destination is the set's unroutable queue": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "delay.unroutable"}} }), []specWantError{
		{"route.destination", 0, "is one of the set's own objects"},
	}},
	"unknown destination type": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "q", DestinationType: "stream"}} }), []specWantError{
		{"route.destination_type", 0, "must be one of \"queue\", \"exchange\", got \"stream\""},
	}},
	"key with a hash": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "q", Key: "orders.#"}} }), []specWantError{
		{"route.key", 0, "must not contain '#' or '*': the set appends the delay digits to the key, and a wildcard would match the wrong messages"},
	}},
	"key with a star inside a word": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "q", Key: "ord*rs"}} }), []specWantError{
		{"route.key", 0, "must not contain '#' or '*'"},
	}},
	"key with a leading dot": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "q", Key: ".orders"}} }), []specWantError{
		{"route.key", 0, "must not start or end with '.' nor contain an empty word"},
	}},
	"key with a trailing dot": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "q", Key: "orders."}} }), []specWantError{
		{"route.key", 0, "must not start or end with '.'"},
	}},
	"key with an empty word": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "q", Key: "orders..eu"}} }), []specWantError{
		{"route.key", 0, "nor contain an empty word (\"..\"), got \"orders..eu\""},
	}},
	"key too long for four levels": {specBase(func(s *Spec) { s.Routes = []Route{{Destination: "q", Key: strings.Repeat("k", 248)}} }), []specWantError{
		{"route.key", 0, "must be at most 247 bytes with 4 levels: the routing key adds 4 delay digits and must fit AMQP's 255 bytes; got 248"},
	}},
	"key too long for levels derived from max_delay": {specBase(func(s *Spec) {
		s.Levels, s.MaxDelay = 0, 16*time.Second
		s.Routes = []Route{{Destination: "q", Key: strings.Repeat("k", 246)}}
	}), []specWantError{
		{"route.key", 0, "must be at most 245 bytes with 5 levels"},
	}},
	"key too long for levels whose TTL is too long": {specBase(func(s *Spec) {
		s.Levels = 30
		s.Routes = []Route{{Destination: "q", Key: strings.Repeat("k", 196)}}
	}), []specWantError{
		{"levels", -1, "at most 29 levels fit"},
		{"route.key", 0, "must be at most 195 bytes with 30 levels"},
	}},
	"key too long with a bad resolution": {specBase(func(s *Spec) {
		s.Resolution = time.Nanosecond
		s.Routes = []Route{{Destination: "q", Key: strings.Repeat("k", 248)}}
	}), []specWantError{
		{"resolution", -1, "must be at least 1ms"},
		{"route.key", 0, "must be at most 247 bytes with 4 levels"},
	}},
	"key length unchecked when levels are unknown": {specBase(func(s *Spec) {
		s.Levels = 99
		s.Routes = []Route{{Destination: "q", Key: strings.Repeat("k", 250) + ".*"}}
	}), []specWantError{
		{"levels", -1, "must be between 1 and 32"},
		{"route.key", 0, "must not contain '#' or '*'"},
	}},
	"duplicate routes after defaults": {specBase(func(s *Spec) {
		s.Routes = []Route{
			{Destination: "q", Key: "a"},
			{Destination: "q", Key: "b"},
			{Destination: "q", Key: "a", DestinationType: DestinationExchange},
			{Destination: "q", Key: "a", DestinationType: DestinationQueue},
			{Destination: "q", Key: "a"},
		}
	}), []specWantError{
		{"route", 3, "duplicates route[0]: same destination_type \"queue\", destination \"q\" and key \"a\""},
		{"route", 4, "duplicates route[0]"},
	}},
	"unknown layout": {specBase(func(s *Spec) { s.Layout = "masstransit" }), []specWantError{
		{"layout", -1, `must be one of "default", "nservicebus", "celery", got "masstransit"`},
	}},
	"nservicebus fixes levels, max_delay, resolution and radix": {Spec{
		Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, Levels: 12, MaxDelay: time.Hour, Resolution: 100 * time.Millisecond, Radix: 16,
	}, []specWantError{
		{"levels", -1, "is fixed at 28 in the nservicebus layout, one level per bit of a delay in seconds; leave it unset, got 12"},
		{"max_delay", -1, "is fixed at 74565h24m15s (2^28 − 1 seconds) in the nservicebus layout; leave it unset, got 1h0m0s"},
		{"resolution", -1, "is fixed at 1s in the nservicebus layout: NServiceBus counts delays in whole seconds; leave it unset, got 100ms"},
		{"radix", -1, "is fixed at 2 in the nservicebus layout: NServiceBus writes delays in binary; leave it unset, got 16"},
	}},
	"nservicebus queues are quorum only": {Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, QueueType: QueueTypeClassic, DeadLetterStrategy: AtLeastOnce}, []specWantError{
		{"queue_type", -1, `must be "quorum" in the nservicebus layout: NServiceBus declares its delay queues so; got "classic"`},
	}},
	"nservicebus quorum queues dead-letter at least once": {Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, DeadLetterStrategy: AtMostOnce}, []specWantError{
		{"dead_letter_strategy", -1, `must be "at-least-once" in the nservicebus layout: NServiceBus declares its quorum queues with x-dead-letter-strategy at-least-once; got "at-most-once"`},
	}},
	"celery classic queues have no strategy": {Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, QueueType: QueueTypeClassic, DeadLetterStrategy: AtLeastOnce}, []specWantError{
		{"dead_letter_strategy", -1, `"at-least-once" needs queue_type "quorum": Celery declares classic queues without x-dead-letter-strategy, and they dead-letter at most once`},
	}},
	"celery quorum queues dead-letter at least once": {Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtMostOnce}, []specWantError{
		{"dead_letter_strategy", -1, `must be "at-least-once" in the celery layout`},
	}},
	"celery unknown queue type and strategy": {Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, QueueType: "stream", DeadLetterStrategy: "exactly-once"}, []specWantError{
		{"queue_type", -1, `must be one of "quorum", "classic", got "stream"`},
		{"dead_letter_strategy", -1, `must be one of "at-least-once", "at-most-once", got "exactly-once"`},
	}},
	"a library layout has no generations": {Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, Generation: 2, FormatGeneration: 1}, []specWantError{
		{"generation", -1, "must be 0 in the nservicebus layout, got generation 2 with the exchanges of generation 1: its objects have the names NServiceBus gives them"},
	}},
	"a library layout has no exchange generations either": {Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, FormatGeneration: 3}, []specWantError{
		{"generation", -1, "must be 0 in the celery layout, got generation 0 with the exchanges of generation 3"},
	}},
	"library routes": {Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, Routes: []Route{
		{Destination: "nsb.v2.delay-level-05", DestinationType: DestinationExchange, Key: "Sales"},
		{Destination: "nsb.v2.delay-delivery", DestinationType: DestinationExchange, Key: "Sales"},
		{Destination: "Sales", Key: "Sales..eu"},
		{Destination: "Sales", Key: strings.Repeat("k", 200)},
		{Destination: "Sales", DestinationType: "topic", Key: "Sales"},
		{Destination: "Sales", DestinationType: DestinationQueue, Key: "Sales..eu"},
	}}, []specWantError{
		{"route.destination", 0, `"nsb.v2.delay-level-05" is one of the set's own objects`},
		{"route.destination", 1, `"nsb.v2.delay-delivery" is one of the set's own objects`},
		{"route.key", 2, `must not start or end with '.' nor contain an empty word ("..")`},
		{"route.key", 3, "must be at most 199 bytes in the nservicebus layout: a message's routing key is its 28 delay bits, then the key, and must fit AMQP's 255 bytes; got 200"},
		{"route.destination_type", 4, "must be one of"},
		{"route.key", 5, "must not start or end with '.'"},
		{"route", 5, "duplicates route[2]"},
	}},
	"library route keys that start with a hash": {Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, Routes: []Route{
		{Destination: "all", DestinationType: DestinationExchange, Key: "#"},
		{Destination: "tasks", DestinationType: DestinationExchange, Key: "#.tasks"},
		{Destination: "ok", DestinationType: DestinationExchange, Key: "tasks.#"},
	}}, []specWantError{
		{"route.key", 0, `must not start with "#" in the celery layout: the route binds "#.<key>", and a library binds a key that starts with "#" as it is; give what follows it ("x" binds "#.x"), or no key for "#"; got "#"`},
		{"route.key", 1, `must not start with "#" in the celery layout`},
	}},
	"every problem at once": {Spec{
		Name: "amq.x y", VHost: "", Levels: 40, MaxDelay: time.Hour, Resolution: time.Microsecond,
		QueueType: "classic", DeadLetterStrategy: AtLeastOnce,
		Routes: []Route{{Destination: "", DestinationType: "x", Key: "#"}, {Destination: "", DestinationType: "x", Key: "#"}},
	}, []specWantError{
		{"name", -1, "has the character ' '"},
		{"name", -1, "must not start with \"amq.\""},
		{"vhost", -1, "must not be empty"},
		{"levels", -1, "conflicts with max_delay"},
		{"max_delay", -1, "conflicts with levels"},
		{"resolution", -1, "must be at least 1ms"},
		{"dead_letter_strategy", -1, "classic queues can only dead-letter at-most-once"},
		{"route.destination", 0, "must not be empty"},
		{"route.destination_type", 0, "must be one of"},
		{"route.key", 0, "must not contain '#' or '*'"},
		{"route.destination", 1, "must not be empty"},
		{"route.destination_type", 1, "must be one of"},
		{"route.key", 1, "must not contain '#' or '*'"},
		{"route", 1, "duplicates route[0]"},
	}},
}

func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	if len(specInvalidCases) < 25 {
		t.Fatalf("only %d invalid cases", len(specInvalidCases))
	}
	for name, tc := range specInvalidCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := Validate(tc.spec)
			var errs ValidationErrors
			if !errors.As(err, &errs) {
				t.Fatalf("Validate() = %v, want ValidationErrors", err)
			}
			var got []specWantError
			for i, e := range errs {
				fragment := ""
				if i < len(tc.want) {
					fragment = tc.want[i].Fragment
				}
				if !strings.Contains(e.Message, fragment) {
					fragment = e.Message // shows the whole message in the diff
				}
				got = append(got, specWantError{e.Field, e.Route, fragment})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got, got fragments replaced by the whole message when missing):\n%s", diff)
			}
			// Resolve and Plan refuse it with the same errors.
			if _, resolveErr := Resolve(tc.spec); resolveErr == nil || resolveErr.Error() != err.Error() {
				t.Errorf("Resolve() error = %v, want %v", resolveErr, err)
			}
		})
	}
}

func TestFieldErrorMessages(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		err  error
		want string
	}{
		"spec field":       {&FieldError{Field: "levels", Route: -1, Message: "m"}, "levels: m"},
		"route field":      {&FieldError{Field: "route.key", Route: 1, Message: "m"}, "route[1].key: m"},
		"whole route":      {&FieldError{Field: "route", Route: 3, Message: "m"}, "route[3]: m"},
		"route index of 0": {&FieldError{Field: "route.destination", Route: 0, Message: "m"}, "route[0].destination: m"},
		"index ignored off routes": {
			&FieldError{Field: "key", Route: 2, Message: "m"}, "key: m",
		},
		"joined": {
			ValidationErrors{{Field: "name", Route: -1, Message: "a"}, {Field: "route.key", Route: 0, Message: "b"}},
			"name: a; route[0].key: b",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

// specValidCases are valid specs and their canonical forms. Plan tests reuse
// them.
var specValidCases = map[string]struct {
	spec, want Spec
}{
	"levels with every default": {
		Spec{Name: "delay", VHost: "/", Levels: 4},
		Spec{Name: "delay", VHost: "/", Levels: 4, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"max_delay 15s at 1s is 4 levels": {
		Spec{Name: "delay", VHost: "/", MaxDelay: 15 * time.Second},
		Spec{Name: "delay", VHost: "/", Levels: 4, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"max_delay 16s at 1s is 5 levels": {
		Spec{Name: "delay", VHost: "/", MaxDelay: 16 * time.Second},
		Spec{Name: "delay", VHost: "/", Levels: 5, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"max_delay 1ns is 1 level": {
		Spec{Name: "delay", VHost: "/", MaxDelay: 1},
		Spec{Name: "delay", VHost: "/", Levels: 1, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"max_delay one tick and a bit is 2 levels": {
		Spec{Name: "delay", VHost: "/", MaxDelay: 1001 * time.Millisecond},
		Spec{Name: "delay", VHost: "/", Levels: 2, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"largest max_delay at 1s is 29 levels": {
		Spec{Name: "delay", VHost: "/", MaxDelay: MaxDelayFor(29, time.Second)},
		Spec{Name: "delay", VHost: "/", Levels: 29, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"largest max_delay at 1ms is 32 levels": {
		Spec{Name: "delay", VHost: "/", MaxDelay: MaxDelayFor(32, time.Millisecond), Resolution: time.Millisecond},
		Spec{Name: "delay", VHost: "/", Levels: 32, Radix: 2, Resolution: time.Millisecond, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"29 levels at 1s": {
		Spec{Name: "delay", VHost: "/", Levels: 29},
		Spec{Name: "delay", VHost: "/", Levels: 29, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"resolution of ten years, one level": {
		Spec{Name: "delay", VHost: "/", Levels: 1, Resolution: time.Duration(MaxTTL) * time.Millisecond},
		Spec{Name: "delay", VHost: "/", Levels: 1, Radix: 2, Resolution: time.Duration(MaxTTL) * time.Millisecond, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"classic defaults to at-most-once": {
		Spec{Name: "delay", VHost: "/", Levels: 3, QueueType: QueueTypeClassic},
		Spec{Name: "delay", VHost: "/", Levels: 3, Radix: 2, Resolution: time.Second, QueueType: QueueTypeClassic, DeadLetterStrategy: AtMostOnce},
	},
	"quorum at-most-once kept": {
		Spec{Name: "delay", VHost: "/", Levels: 3, DeadLetterStrategy: AtMostOnce, Resolution: 250 * time.Millisecond},
		Spec{Name: "delay", VHost: "/", Levels: 3, Radix: 2, Resolution: 250 * time.Millisecond, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtMostOnce},
	},
	"longest name, every allowed character, unicode vhost": {
		Spec{Name: "Az09._-:" + strings.Repeat("x", MaxSetNameLength-8), VHost: "vh-ü", Levels: 2},
		Spec{Name: "Az09._-:" + strings.Repeat("x", MaxSetNameLength-8), VHost: "vh-ü", Levels: 2, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"routes defaulted and sorted": {
		Spec{Name: "delay", VHost: "/", Levels: 4, Routes: []Route{
			{Destination: "b", Key: "k"},
			{Destination: "a", DestinationType: DestinationQueue, Key: "z"},
			{Destination: "a", Key: "y"},
			{Destination: "a", DestinationType: DestinationExchange},
			{Destination: "delay.level", Key: "orders.1.0"}, // not one of the set's objects
			{Destination: "a", DestinationType: DestinationExchange, Key: strings.Repeat("k", 247)},
		}},
		Spec{Name: "delay", VHost: "/", Levels: 4, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce, Routes: []Route{
			{Destination: "a", DestinationType: DestinationExchange},
			{Destination: "a", DestinationType: DestinationExchange, Key: strings.Repeat("k", 247)},
			{Destination: "a", DestinationType: DestinationQueue, Key: "y"},
			{Destination: "a", DestinationType: DestinationQueue, Key: "z"},
			{Destination: "b", DestinationType: DestinationQueue, Key: "k"},
			{Destination: "delay.level", DestinationType: DestinationQueue, Key: "orders.1.0"},
		}},
	},
	"same key to a queue and an exchange of one name": {
		Spec{Name: "delay", VHost: "/", Levels: 4, Routes: []Route{
			{Destination: "x", DestinationType: DestinationQueue},
			{Destination: "x", DestinationType: DestinationExchange},
		}},
		Spec{Name: "delay", VHost: "/", Levels: 4, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce, Routes: []Route{
			{Destination: "x", DestinationType: DestinationExchange},
			{Destination: "x", DestinationType: DestinationQueue},
		}},
	},
	"empty routes become nil": {
		Spec{Name: "delay", VHost: "/", Levels: 4, Routes: []Route{}},
		Spec{Name: "delay", VHost: "/", Levels: 4, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"default layout spelled out resolves to the empty layout": {
		Spec{Name: "delay", VHost: "/", Levels: 4, Layout: LayoutDefault},
		Spec{Name: "delay", VHost: "/", Levels: 4, Radix: 2, Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"nservicebus fixes everything": {
		Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus},
		specNServiceBusResolved,
	},
	"nservicebus with what it fixes spelled out": {
		Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, Levels: 28, MaxDelay: (1<<28 - 1) * time.Second,
			Resolution: time.Second, Radix: 2, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
		specNServiceBusResolved,
	},
	"celery on quorum queues": {
		Spec{Name: "celery", VHost: "/", Layout: LayoutCelery},
		Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, Levels: 28, Radix: 2, Resolution: time.Second,
			QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce},
	},
	"celery on classic queues dead-letters at most once": {
		Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, QueueType: QueueTypeClassic},
		Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, Levels: 28, Radix: 2, Resolution: time.Second,
			QueueType: QueueTypeClassic, DeadLetterStrategy: AtMostOnce},
	},
	"celery routes: wildcards, the empty key, the longest key, sorted": {
		Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, Routes: []Route{
			{Destination: "tasks", DestinationType: DestinationExchange, Key: "tasks.*.#"},
			{Destination: "all", DestinationType: DestinationExchange},
			{Destination: "long", Key: strings.Repeat("k", 199)},
			{Destination: "delay.level.00", Key: "x"}, // a default layout's object, not this set's
		}},
		Spec{Name: "celery", VHost: "/", Layout: LayoutCelery, Levels: 28, Radix: 2, Resolution: time.Second,
			QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce, Routes: []Route{
				{Destination: "all", DestinationType: DestinationExchange},
				{Destination: "tasks", DestinationType: DestinationExchange, Key: "tasks.*.#"},
				{Destination: "delay.level.00", DestinationType: DestinationQueue, Key: "x"},
				{Destination: "long", DestinationType: DestinationQueue, Key: strings.Repeat("k", 199)},
			}},
	},
}

// specNServiceBusResolved is every NServiceBus spec's canonical form.
var specNServiceBusResolved = Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus, Levels: 28, Radix: 2,
	Resolution: time.Second, QueueType: QueueTypeQuorum, DeadLetterStrategy: AtLeastOnce}

func TestResolve(t *testing.T) {
	t.Parallel()
	for name, tc := range specValidCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := Validate(tc.spec); err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			routesBefore := slices.Clone(tc.spec.Routes)
			got, err := Resolve(tc.spec)
			if err != nil {
				t.Fatalf("Resolve() = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Resolve() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(routesBefore, tc.spec.Routes); diff != "" {
				t.Errorf("Resolve() changed its argument's routes (-before +after):\n%s", diff)
			}
			// The canonical form is valid and its own canonical form.
			again, err := Resolve(got)
			if err != nil {
				t.Fatalf("Resolve(Resolve()) = %v", err)
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("Resolve is not idempotent (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestLevelsFor(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		maxDelay, resolution time.Duration
		want                 int
		wantErr              string // "field: fragment"
	}{
		"15s at 1s":                     {15 * time.Second, time.Second, 4, ""},
		"16s at 1s":                     {16 * time.Second, time.Second, 5, ""},
		"1ns at 1s":                     {1, time.Second, 1, ""},
		"exactly one tick":              {time.Second, time.Second, 1, ""},
		"one tick and a nanosecond":     {time.Second + 1, time.Second, 2, ""},
		"largest of 32 levels at 1ms":   {MaxDelayFor(32, time.Millisecond), time.Millisecond, 32, ""},
		"largest of 29 levels at 1s":    {MaxDelayFor(29, time.Second), time.Second, 29, ""},
		"beyond 32 levels at 1ms":       {MaxDelayFor(32, time.Millisecond) + 1, time.Millisecond, 0, "max_delay: 1193h2m47.295000001s needs more levels than fit at resolution 1ms (at most 32, each level's TTL at most 315360000000ms); the largest max_delay at this resolution is 1193h2m47.295s"},
		"beyond the ten-year TTL at 1s": {MaxDelayFor(29, time.Second) + 1, time.Second, 0, "max_delay: 149130h48m31.000000001s needs more levels than fit at resolution 1s (at most 29,"},
		"largest Duration at 1s":        {math.MaxInt64, time.Second, 0, "max_delay: 2562047h47m16.854775807s needs more levels than fit at resolution 1s (at most 29,"},
		"largest Duration at 3s":        {math.MaxInt64, 3 * time.Second, 0, "the largest max_delay at this resolution is 111848h6m21s"},
		"zero":                          {0, time.Second, 0, "max_delay: must be positive, got 0s"},
		"negative":                      {-1, time.Second, 0, "max_delay: must be positive"},
		"zero resolution":               {time.Second, 0, 0, "resolution: must be at least 1ms, got 0s"},
		"resolution not whole ms":       {time.Second, 1001 * time.Microsecond, 0, "resolution: must be a whole number of milliseconds"},
		"resolution over the TTL limit": {time.Second, time.Duration(math.MaxInt64).Truncate(time.Millisecond), 0, "resolution: must be at most"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := LevelsFor(tc.maxDelay, tc.resolution)
			if tc.wantErr != "" {
				var fieldErr *FieldError
				if !errors.As(err, &fieldErr) || !strings.Contains(err.Error(), tc.wantErr) || fieldErr.Route != -1 {
					t.Fatalf("LevelsFor() error = %#v, want a FieldError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("LevelsFor() = %d, %v, want %d", got, err, tc.want)
			}
			// Smallest: one level fewer does not reach maxDelay.
			if got > 1 && MaxDelayFor(got-1, tc.resolution) >= tc.maxDelay {
				t.Errorf("%d levels already reach %s", got-1, tc.maxDelay)
			}
		})
	}
}

// TestExplicitZero checks that a zero the caller knows was set on purpose is
// refused in the words Validate uses for that field's other invalid values.
func TestExplicitZero(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		field string
		want  string // the whole error, "" for none
	}{
		"levels":     {"levels", "levels: must be between 1 and 32, got 0"},
		"max_delay":  {"max_delay", "max_delay: must be positive, got 0s"},
		"resolution": {"resolution", "resolution: must be at least 1ms, got 0s"},
		"radix":      {"radix", "radix: must be one of 2, 4, 8, 16, 256, got 0"},
		"quorum_initial_group_size": {"quorum_initial_group_size",
			"quorum_initial_group_size: must be at least 1 (the nodes that hold a replica of each quorum queue), got 0"},
		"queue_type": {"queue_type", ""}, // zero is unset, and unset is fine
		"route.key":  {"route.key", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := ExplicitZero(tc.field)
			if tc.want == "" {
				if got != nil {
					t.Fatalf("ExplicitZero(%q) = %v, want nil", tc.field, got)
				}
				return
			}
			if got == nil || got.Error() != tc.want || got.Field != tc.field || got.Route != -1 {
				t.Fatalf("ExplicitZero(%q) = %#v, want %q", tc.field, got, tc.want)
			}
		})
	}
}

func TestMaxDelayFor(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		levels     int
		resolution time.Duration
		want       time.Duration
	}{
		"4 levels at 1s":           {4, time.Second, 15 * time.Second},
		"1 level at 1ms":           {1, time.Millisecond, time.Millisecond},
		"32 levels at 1ms":         {32, time.Millisecond, (1<<32 - 1) * time.Millisecond},
		"33 levels at 1s fits":     {33, time.Second, (1<<33 - 1) * time.Second},
		"34 levels at 1s saturate": {34, time.Second, math.MaxInt64},
		"32 levels at 3s saturate": {32, 3 * time.Second, math.MaxInt64},
		"62 levels at 1ns":         {62, 1, 1<<62 - 1},
		"63 levels saturate":       {63, 1, math.MaxInt64},
		"huge levels saturate":     {math.MaxInt, 1, math.MaxInt64},
		"zero levels":              {0, time.Second, 0},
		"negative levels":          {-3, time.Second, 0},
		"zero resolution":          {4, 0, 0},
		"negative resolution":      {4, -time.Second, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := MaxDelayFor(tc.levels, tc.resolution); got != tc.want {
				t.Errorf("MaxDelayFor(%d, %s) = %s, want %s", tc.levels, tc.resolution, got, tc.want)
			}
		})
	}
}

func TestValidateLevelLimitEveryResolution(t *testing.T) {
	t.Parallel()
	// For resolutions around each power of two, the largest accepted levels
	// has a top TTL within MaxTTL and one more level does not.
	for _, resolution := range []time.Duration{time.Millisecond, 73 * time.Millisecond, time.Second, time.Minute, time.Hour, 24 * time.Hour, 365 * 24 * time.Hour} {
		largest := 0
		for levels := MinLevels; levels <= MaxLevels; levels++ {
			if Validate(Spec{Name: "d", VHost: "/", Levels: levels, Resolution: resolution}) == nil {
				largest = levels
			}
		}
		top := resolution.Milliseconds() << (largest - 1)
		if top > MaxTTL || largest < MaxLevels && top*2 <= MaxTTL {
			t.Errorf("resolution %s: largest levels %d with top TTL %dms", resolution, largest, top)
		}
	}
}

func TestCheckKey(t *testing.T) {
	for key, want := range map[string][]string{
		"":          nil,
		"orders.eu": nil,
		"a.#":       {"must not contain '#' or '*'"},
		"*":         {"must not contain '#' or '*'"},
		".a":        {"must not start or end with '.'"},
		"a..b":      {"empty word"},
		"a.*.":      {"must not contain '#' or '*'", "must not start or end with '.'"},
	} {
		err := CheckKey(key)
		var problems ValidationErrors
		if want == nil {
			if err != nil {
				t.Errorf("CheckKey(%q) = %v, want nil", key, err)
			}
			continue
		}
		if !errors.As(err, &problems) || len(problems) != len(want) {
			t.Errorf("CheckKey(%q) = %v, want %d problems", key, err, len(want))
			continue
		}
		for i, problem := range problems {
			if problem.Field != "key" || !strings.Contains(problem.Message, want[i]) {
				t.Errorf("CheckKey(%q)[%d] = %s: %q, want key: …%s…", key, i, problem.Field, problem.Message, want[i])
			}
		}
	}
}

func TestUnsetLeaderLocator(t *testing.T) {
	t.Parallel()
	quorum := mustResolve(t, Spec{Name: "delay", VHost: "/", Levels: 4})
	with := func(s Spec, edit func(*Spec)) Spec {
		edit(&s)
		return mustResolve(t, s)
	}
	older := quorum // made before the locator existed: none
	client := with(quorum, func(s *Spec) { s.QueueLeaderLocator = LeaderLocatorClientLocal })
	classic := with(quorum, func(s *Spec) { s.QueueType, s.DeadLetterStrategy = QueueTypeClassic, "" })
	tests := map[string]struct {
		desired Spec
		current *Spec
		want    LeaderLocator
	}{
		"new quorum set":                         {quorum, nil, LeaderLocatorBalanced},
		"new classic set":                        {classic, nil, ""},
		"new library set":                        {mustResolve(t, Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus}), nil, ""},
		"older set, unchanged":                   {quorum, &older, ""},
		"older set, more levels: same queues":    {with(quorum, func(s *Spec) { s.Levels = 6 }), &older, ""},
		"older set, new strategy: new queues":    {with(quorum, func(s *Spec) { s.DeadLetterStrategy = AtMostOnce }), &older, LeaderLocatorBalanced},
		"older set, now classic: none":           {classic, &older, ""},
		"client-local kept":                      {quorum, &client, LeaderLocatorClientLocal},
		"client-local, new resolution: balanced": {with(quorum, func(s *Spec) { s.Resolution = time.Millisecond }), &client, LeaderLocatorBalanced},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := UnsetLeaderLocator(tc.desired, tc.current); got != tc.want {
				t.Errorf("UnsetLeaderLocator = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewSet(t *testing.T) {
	t.Parallel()
	quorum := Spec{Name: "delay", VHost: "/", Levels: 4}
	tests := map[string]struct {
		spec    Spec
		want    LeaderLocator
		wantErr bool
	}{
		"quorum, unset: balanced":   {spec: quorum, want: LeaderLocatorBalanced},
		"quorum, client-local kept": {spec: Spec{Name: "delay", VHost: "/", Levels: 4, QueueLeaderLocator: LeaderLocatorClientLocal}, want: LeaderLocatorClientLocal},
		"classic: none":             {spec: Spec{Name: "delay", VHost: "/", Levels: 4, QueueType: QueueTypeClassic}},
		"library: none":             {spec: Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus}},
		"invalid: Resolve's error":  {spec: Spec{Name: "delay", VHost: "/", Levels: -1}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := NewSet(tc.spec)
			_, resolveErr := Resolve(tc.spec)
			if tc.wantErr {
				if err == nil || resolveErr == nil || err.Error() != resolveErr.Error() {
					t.Errorf("NewSet error = %v, want Resolve's %v", err, resolveErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Resolved, and only the leader locator filled in.
			want := mustResolve(t, tc.spec)
			want.QueueLeaderLocator = tc.want
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("NewSet (-want +got):\n%s", diff)
			}
		})
	}
}
