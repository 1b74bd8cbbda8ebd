package topology

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// libraryNamed is the library whose layout l is, nil for another.
func libraryNamed(l Layout) *library {
	layout, _ := layoutNamed(l)
	lib, _ := layout.(*library)
	return lib
}

// libraryDeclaration replays what a library declares at start-up, written
// the way its own code walks the levels rather than through the planner:
// from level 27 down, each level's exchange, then its queue and the
// queue's binding, the key growing by a leading "*." per level; then the
// exchange-to-exchange bindings from 27 down to 1, the key restarting at
// "0.#"; then the delivery exchange and level 0's binding to it. Routes are
// what each destination binds: "#.<key>" from the delivery exchange.
func libraryDeclaration(levelName func(int) string, delivery string, queueType QueueType, routes []Route) Topology {
	top := Topology{VHost: "/"}
	key := "1.#"
	for level := 27; level >= 0; level-- {
		top.Exchanges = append(top.Exchanges, Exchange{Name: levelName(level), Type: ExchangeTopic})
		deadLetter := delivery
		if level > 0 {
			deadLetter = levelName(level - 1)
		}
		args := QueueArguments{QueueType: queueType, Overflow: "reject-publish", MessageTTL: (int64(1) << level) * 1000, DeadLetterExchange: deadLetter}
		if queueType == QueueTypeQuorum {
			args.DeadLetterStrategy = "at-least-once"
		}
		top.Queues = append(top.Queues, Queue{Name: levelName(level), Arguments: args})
		top.Bindings = append(top.Bindings, Binding{Source: levelName(level), Destination: levelName(level), DestinationType: DestinationQueue, RoutingKey: key})
		key = "*." + key
	}
	key = "0.#"
	for level := 27; level >= 1; level-- {
		top.Bindings = append(top.Bindings, Binding{Source: levelName(level), Destination: levelName(level - 1), DestinationType: DestinationExchange, RoutingKey: key})
		key = "*." + key
	}
	top.Exchanges = append(top.Exchanges, Exchange{Name: delivery, Type: ExchangeTopic})
	top.Bindings = append(top.Bindings, Binding{Source: levelName(0), Destination: delivery, DestinationType: DestinationExchange, RoutingKey: key})
	for _, r := range routes {
		bindingKey := "#"
		if r.Key != "" {
			bindingKey = "#." + r.Key
		}
		top.Bindings = append(top.Bindings, Binding{Source: delivery, Destination: r.Destination, DestinationType: r.DestinationType, RoutingKey: bindingKey})
	}
	return top
}

func nserviceBusDeclaration(routes []Route) Topology {
	return libraryDeclaration(func(level int) string { return fmt.Sprintf("nsb.v2.delay-level-%02d", level) }, "nsb.v2.delay-delivery", QueueTypeQuorum, routes)
}

func celeryDeclaration(queueType QueueType, routes []Route) Topology {
	return libraryDeclaration(func(level int) string { return fmt.Sprintf("celery_delayed_%d", level) }, "celery_delayed_delivery", queueType, routes)
}

// libraryCases are the libraries' layouts with what each declares.
var libraryCases = map[string]struct {
	spec     Spec
	declared Topology
}{
	"nservicebus":    {planSpecNServiceBus, nserviceBusDeclaration(planSpecNServiceBus.Routes)},
	"celery":         {planSpecCelery, celeryDeclaration(QueueTypeQuorum, planSpecCelery.Routes)},
	"celery classic": {planSpecCeleryClassic, celeryDeclaration(QueueTypeClassic, planSpecCelery.Routes)},
}

func TestPlanIsWhatTheLibrariesDeclare(t *testing.T) {
	t.Parallel()
	for name, tc := range libraryCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			planned := mustPlan(t, tc.spec)
			if d := cmp.Diff(topologySet(tc.declared), topologySet(planned)); d != "" {
				t.Fatalf("plan (-declared +planned):\n%s", d)
			}
			if len(planned.Exchanges) != 29 || len(planned.Queues) != 28 || len(planned.Bindings) != 56+len(tc.spec.Routes) {
				t.Errorf("%d exchanges, %d queues, %d bindings", len(planned.Exchanges), len(planned.Queues), len(planned.Bindings))
			}
			if changes := Diff(planned, tc.declared); len(changes) != 0 {
				t.Errorf("Diff against the declaration: %v", changeLines(changes))
			}
		})
	}
}

func TestLibraryKeys(t *testing.T) {
	t.Parallel()
	zeros := func(n int) string { return strings.Repeat("0.", n) }
	tests := map[string]struct {
		layout       Layout
		key          string
		delay        time.Duration
		want, entry  string
		decodedDelay time.Duration
	}{
		// NServiceBus's own test cases (When_calculating_a_routing_key).
		"nservicebus 10s": {LayoutNServiceBus, "some-address", 10 * time.Second,
			zeros(24) + "1.0.1.0.some-address", "nsb.v2.delay-level-03", 10 * time.Second},
		"nservicebus 0s enters level 00": {LayoutNServiceBus, "some-address", 0,
			zeros(28) + "some-address", "nsb.v2.delay-level-00", 0},
		"nservicebus 28s": {LayoutNServiceBus, "short-delay", 28 * time.Second,
			zeros(23) + "1.1.1.0.0.short-delay", "nsb.v2.delay-level-04", 28 * time.Second},
		"nservicebus longest": {LayoutNServiceBus, "some-address", (1<<28 - 1) * time.Second,
			strings.Repeat("1.", 28) + "some-address", "nsb.v2.delay-level-27", (1<<28 - 1) * time.Second},
		"nservicebus rounds 1.2s up to 2s": {LayoutNServiceBus, "Sales", 1200 * time.Millisecond,
			zeros(26) + "1.0.Sales", "nsb.v2.delay-level-01", 2 * time.Second},
		"nservicebus rounds 1ns up to 1s": {LayoutNServiceBus, "Sales", 1,
			zeros(27) + "1.Sales", "nsb.v2.delay-level-00", time.Second},
		"nservicebus rounds up to the longest": {LayoutNServiceBus, "Sales", (1<<28-1)*time.Second - time.Millisecond,
			strings.Repeat("1.", 28) + "Sales", "nsb.v2.delay-level-27", (1<<28 - 1) * time.Second},
		// Celery writes int(countdown) in 28 binary digits (kombu's calculate_routing_key).
		"celery 5s": {LayoutCelery, "celery", 5 * time.Second,
			zeros(25) + "1.0.1.celery", "celery_delayed_27", 5 * time.Second},
		"celery truncates 1.9s to 1s": {LayoutCelery, "celery", 1900 * time.Millisecond,
			zeros(27) + "1.celery", "celery_delayed_27", time.Second},
		"celery truncates 0.5s to none": {LayoutCelery, "celery", 500 * time.Millisecond,
			zeros(28) + "celery", "celery_delayed_27", 0},
		"celery one hour, a key of many words": {LayoutCelery, "tasks.add.1.0", time.Hour,
			zeros(16) + "1.1.1.0.0.0.0.1.0.0.0.0.tasks.add.1.0", "celery_delayed_27", time.Hour},
		"celery truncates just past the longest": {LayoutCelery, "celery", (1<<28-1)*time.Second + 999*time.Millisecond,
			strings.Repeat("1.", 28) + "celery", "celery_delayed_27", (1<<28 - 1) * time.Second},
		"the longest key": {LayoutCelery, strings.Repeat("k", 199), 3 * time.Second,
			zeros(26) + "1.1." + strings.Repeat("k", 199), "celery_delayed_27", 3 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			format := KeyFormat{Layout: tc.layout}
			got, err := format.Encode(tc.key, tc.delay)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Encode = %q, want %q", got, tc.want)
			}
			spec := mustResolve(t, Spec{Name: "x", VHost: "/", Layout: tc.layout})
			if fromSpec, err := spec.KeyFormat().Encode(tc.key, tc.delay); err != nil || fromSpec != got {
				t.Errorf("the resolved spec's format encodes %q, %v", fromSpec, err)
			}
			if entry, err := spec.EntryExchange(tc.delay); err != nil || entry != tc.entry {
				t.Errorf("EntryExchange = %q, %v, want %q", entry, err, tc.entry)
			}
			key, delay, err := format.Decode(got)
			if err != nil || key != tc.key || delay != tc.decodedDelay {
				t.Errorf("Decode = %q, %s, %v; want %q, %s", key, delay, err, tc.key, tc.decodedDelay)
			}
			if err := format.CheckKey(tc.key); err != nil {
				t.Errorf("CheckKey: %v", err)
			}
		})
	}
}

func TestLibraryKeysRefuse(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		format      KeyFormat
		key         string
		delay       time.Duration
		field, want string
	}{
		"negative delay": {KeyFormat{Layout: LayoutNServiceBus}, "Sales", -time.Second,
			"delay", "must not be negative, got -1s"},
		"nservicebus rounds past the longest": {KeyFormat{Layout: LayoutNServiceBus}, "Sales", (1<<28-1)*time.Second + time.Millisecond,
			"delay", "74565h24m15.001s is longer than 74565h24m15s, the longest delay of the nservicebus layout (28 bits of 1s)"},
		"celery past the longest": {KeyFormat{Layout: LayoutCelery}, "celery", 1 << 28 * time.Second,
			"delay", "is longer than 74565h24m15s, the longest delay of the celery layout"},
		"empty key": {KeyFormat{Layout: LayoutCelery}, "", time.Second,
			"key", "must not be empty in the celery layout: the delivery exchange routes a message by the key after its delay bits"},
		"key too long": {KeyFormat{Layout: LayoutNServiceBus}, strings.Repeat("k", 200), time.Second,
			"key", "must be at most 199 bytes in the nservicebus layout"},
		"other levels": {KeyFormat{Layout: LayoutCelery, Levels: 12}, "celery", time.Second,
			"levels", "must be 28 (or unset) in the celery layout, got 12"},
		"other radix": {KeyFormat{Layout: LayoutCelery, Levels: 28, Radix: 4}, "celery", time.Second,
			"radix", "must be 2 (or unset) in the celery layout, got 4"},
		"other resolution": {KeyFormat{Layout: LayoutNServiceBus, Radix: 2, Resolution: time.Millisecond}, "Sales", time.Second,
			"resolution", "must be 1s (or unset) in the nservicebus layout, got 1ms"},
		"unknown layout": {KeyFormat{Layout: "rebus", Levels: 4, Resolution: time.Second}, "x", time.Second,
			"layout", `must be one of "default", "nservicebus", "celery", got "rebus"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.format.Encode(tc.key, tc.delay)
			var problem *FieldError
			if !errors.As(err, &problem) || problem.Field != tc.field || !strings.Contains(problem.Message, tc.want) {
				t.Fatalf("Encode error = %v, want %s: …%s…", err, tc.field, tc.want)
			}
			if tc.field == "levels" || tc.field == "radix" || tc.field == "resolution" || tc.field == "layout" {
				if _, _, err := tc.format.Decode("0.x"); !errors.As(err, &problem) || problem.Field != tc.field {
					t.Errorf("Decode error = %v, want one about %s", err, tc.field)
				}
				if got := tc.format.MaxDelay(); got != 0 {
					t.Errorf("MaxDelay = %s, want 0 for a format no set has", got)
				}
			}
		})
	}
	spec := mustResolve(t, Spec{Name: "x", VHost: "/", Layout: LayoutNServiceBus})
	if _, err := spec.EntryExchange(-time.Second); err == nil {
		t.Error("EntryExchange accepted a negative delay")
	}
}

func TestLibraryDecodeRefuses(t *testing.T) {
	t.Parallel()
	bits := strings.Repeat("0.", 27) + "1"
	tests := map[string]struct {
		routingKey, want string
	}{
		"no key":       {bits, "has 28 words; in the nservicebus layout a routing key is 28 delay bits, then the key"},
		"too few bits": {"1.0.Sales", "has 3 words; in the nservicebus layout a routing key is 28 delay bits, then the key"},
		"empty":        {"", "has 1 words"},
		"empty key":    {bits + ".", "has an empty key after its 28 delay bits: the delivery exchange of the nservicebus layout routes by it"},
		"a word that is no bit": {strings.Repeat("0.", 5) + "2." + strings.Repeat("0.", 22) + "Sales",
			`word "2", bit 6 from the start, must be "0" or "1": in the nservicebus layout the first 28 words are the delay in binary`},
		"a padded bit": {"01." + bits + ".Sales", `word "01", bit 1 from the start`},
		"a wildcard":   {"*." + bits + ".Sales", `word "*", bit 1 from the start`},
		"too long":     {bits + "." + strings.Repeat("k", 200), "must be at most 255 bytes, got 256"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := KeyFormat{Layout: LayoutNServiceBus}.Decode(tc.routingKey)
			var problem *FieldError
			if !errors.As(err, &problem) || problem.Field != "routing_key" || !strings.Contains(problem.Message, tc.want) {
				t.Fatalf("Decode(%q) error = %v, want …%s…", tc.routingKey, err, tc.want)
			}
		})
	}
}

func TestLibraryCheckKey(t *testing.T) {
	t.Parallel()
	format := KeyFormat{Layout: LayoutCelery}
	for key, want := range map[string][]string{
		"":                              {"must not be empty in the celery layout"},
		"tasks.*":                       {"must not contain '#' or '*'"},
		"tasks..add":                    {"must not start or end with '.'"},
		strings.Repeat("k", 200):        {"must be at most 199 bytes in the celery layout"},
		"#." + strings.Repeat("k", 200): {"must not contain '#' or '*'", "must be at most 199 bytes"},
	} {
		var errs ValidationErrors
		if !errors.As(format.CheckKey(key), &errs) || len(errs) != len(want) {
			t.Errorf("CheckKey(%q) = %v, want %d problems", key, errs, len(want))
			continue
		}
		for i, fragment := range want {
			if !strings.Contains(errs[i].Message, fragment) {
				t.Errorf("CheckKey(%q) problem %d = %q, want …%s…", key, i, errs[i].Message, fragment)
			}
		}
	}
}

func TestLibraryMaxDelay(t *testing.T) {
	t.Parallel()
	for _, l := range []Layout{LayoutNServiceBus, LayoutCelery} {
		if got, want := (KeyFormat{Layout: l}).MaxDelay(), (1<<28-1)*time.Second; got != want {
			t.Errorf("%s: MaxDelay = %s, want %s", l, got, want)
		}
		if got := mustResolve(t, Spec{Name: "x", VHost: "/", Layout: l}).KeyFormat().MaxDelay(); got != (1<<28-1)*time.Second {
			t.Errorf("%s: the resolved spec's MaxDelay = %s", l, got)
		}
	}
	if got := (KeyFormat{Layout: LayoutDefault, Levels: 4, Resolution: time.Second}).MaxDelay(); got != 15*time.Second {
		t.Errorf("the default layout spelled out: MaxDelay = %s", got)
	}
}

func TestEntryExchangeOfTheDefaultLayout(t *testing.T) {
	t.Parallel()
	spec := mustResolve(t, Spec{Name: "delay", VHost: "/", Levels: 4, Generation: 3, FormatGeneration: 2})
	if got, err := spec.EntryExchange(time.Hour); err != nil || got != "delay.ingest.g2" {
		t.Errorf("EntryExchange = %q, %v; want the ingest of the key format's generation, whatever the delay", got, err)
	}
}

func TestLayoutObjectNamePattern(t *testing.T) {
	t.Parallel()
	for name, tc := range libraryCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkPatternMatchesPlan(t, regexp.MustCompile(tc.spec.Layout.ObjectNamePattern("ignored")), mustPlan(t, tc.spec))
		})
	}
	nearMisses := []string{
		"celery_delayed_28", "celery_delayed_05", "celery_delayed_", "xcelery_delayed_1", "celery_delayed_1x", "celery_delayed_deliveryx",
		"nsb.v2.delay-level-5", "nsb.v2.delay-level-28", "nsb.delay-level-05", "nsb.v2.delay-level-005", "nsbxv2.delay-level-05", "nsb.delay-delivery",
		"Sales", "celery",
	}
	for _, l := range []Layout{LayoutNServiceBus, LayoutCelery} {
		pattern := regexp.MustCompile(l.ObjectNamePattern("celery_delayed"))
		for _, name := range nearMisses {
			if pattern.MatchString(name) {
				t.Errorf("%s pattern %s matches %q", l, pattern, name)
			}
			if lib := libraryNamed(l); lib.owns(name) {
				t.Errorf("%s owns %q", l, name)
			}
		}
	}
	for _, l := range []Layout{"", LayoutDefault} {
		if got, want := l.ObjectNamePattern("delay"), Names("delay").ObjectNamePattern(); got != want {
			t.Errorf("%q: pattern %s, want the default layout's %s", l, got, want)
		}
	}
}

func TestLayoutOrDefault(t *testing.T) {
	t.Parallel()
	for l, want := range map[Layout]Layout{"": LayoutDefault, LayoutDefault: LayoutDefault, LayoutCelery: LayoutCelery} {
		if got := l.OrDefault(); got != want {
			t.Errorf("%q.OrDefault() = %q, want %q", l, got, want)
		}
	}
}

func TestLayoutDeclaredByLibrary(t *testing.T) {
	t.Parallel()
	for l, want := range map[Layout]bool{"": false, LayoutDefault: false, LayoutNServiceBus: true, LayoutCelery: true, "bogus": false} {
		if got := l.DeclaredByLibrary(); got != want {
			t.Errorf("%q.DeclaredByLibrary() = %t, want %t", l, got, want)
		}
	}
}

func TestNextGenerationOfLibraryLayouts(t *testing.T) {
	t.Parallel()
	celery := mustResolve(t, Spec{Name: "x", VHost: "/", Layout: LayoutCelery})
	classic := celery
	classic.QueueType, classic.DeadLetterStrategy = QueueTypeClassic, ""
	got, err := NextGeneration(classic, celery, nil)
	if err != nil || got.Generation != 0 || got.FormatGeneration != 0 || got.QueueType != QueueTypeClassic {
		t.Errorf("NextGeneration = %+v, %v; want the classic spec in generation 0", got, err)
	}
	defaultLayout := mustResolve(t, Spec{Name: "x", VHost: "/", Levels: 28})
	for name, tc := range map[string]struct{ desired, actual Spec }{
		"default to celery":     {celery, defaultLayout},
		"celery to default":     {defaultLayout, celery},
		"celery to nservicebus": {Spec{Name: "x", VHost: "/", Layout: LayoutNServiceBus}, celery},
	} {
		_, err := NextGeneration(tc.desired, tc.actual, nil)
		var problem *FieldError
		if !errors.As(err, &problem) || problem.Field != "layout" || !strings.Contains(problem.Message, "in place: the layouts' objects have other names, so the set must be replaced") {
			t.Errorf("%s: NextGeneration error = %v, want a layout error", name, err)
		}
	}
	if _, err := NextGeneration(Spec{Name: "x", VHost: "/", Layout: "rebus"}, celery, nil); err == nil {
		t.Error("NextGeneration accepted an unknown layout")
	}
}

func TestPlanGenerationsOfLibraryLayouts(t *testing.T) {
	t.Parallel()
	spec := Spec{Name: "x", VHost: "/", Layout: LayoutCelery}
	top, err := PlanGenerations(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(mustPlan(t, spec), top); d != "" {
		t.Errorf("PlanGenerations without draining generations (-Plan +got):\n%s", d)
	}
	if _, err := PlanGenerations(spec, []Generation{{Number: 0, Levels: 4}}); err == nil || !strings.Contains(err.Error(), "is not older than the current generation 0") {
		t.Errorf("PlanGenerations with a draining generation: %v", err)
	}
}

func TestInferLibraryLayouts(t *testing.T) {
	t.Parallel()
	for name, tc := range libraryCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := mustResolve(t, tc.spec)
			// Told by the objects' names, whatever the set's name; or named.
			got, err := Infer(tc.spec.Name, tc.declared)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("Infer (-want +got):\n%s", d)
			}
			named, draining, err := InferLayout(tc.spec.Name, tc.spec.Layout, tc.declared)
			if err != nil || draining != nil {
				t.Fatalf("InferLayout: %v, draining %v", err, draining)
			}
			if d := cmp.Diff(want, named); d != "" {
				t.Fatalf("InferLayout (-want +got):\n%s", d)
			}
			if changes := Diff(mustPlan(t, got), tc.declared); len(changes) != 0 {
				t.Errorf("the declaration does not plan clean: %v", changeLines(changes))
			}
		})
	}
}

// TestInferLibraryDrift checks library topologies that differ from what
// the library declares: Infer still explains them, and the Diff against
// the inferred plan, with the library's own delivery bindings kept as an
// update keeps them, names each difference and restores the declaration,
// those bindings left as they are.
func TestInferLibraryDrift(t *testing.T) {
	t.Parallel()
	routes := []Route{{Destination: "Sales", DestinationType: DestinationExchange, Key: "Sales"}}
	nsb := nserviceBusDeclaration(routes)
	celery := celeryDeclaration(QueueTypeQuorum, []Route{{Destination: "celery", DestinationType: DestinationExchange, Key: "celery"}})
	tests := map[string]struct {
		declared Topology
		edit     func(*Topology)
		want     []string // fragments of the changes' lines, in order
	}{
		"a TTL changed by hand": {celery, func(t *Topology) {
			queueNamed(t, "celery_delayed_3").Arguments.MessageTTL = 9000
		}, []string{
			"delete_queue celery_delayed_3: x-message-ttl 9000 → 8000: queue arguments cannot change in place",
			"create_queue celery_delayed_3: re-created with x-message-ttl 8000",
			`create_binding celery_delayed_3 → queue celery_delayed_3 "*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.1.#": re-creating celery_delayed_3 dropped this binding`,
		}},
		"nservicebus v1's lazy classic queue under a v2 name": {nsb, func(t *Topology) {
			q := queueNamed(t, "nsb.v2.delay-level-05")
			q.Arguments = QueueArguments{MessageTTL: 32000, DeadLetterExchange: "nsb.v2.delay-level-04", Other: map[string]string{"x-queue-mode": `"lazy"`}}
		}, []string{
			"delete_queue nsb.v2.delay-level-05: x-queue-type (none) → quorum, x-dead-letter-strategy (none) → at-least-once, x-overflow (none) → reject-publish, x-queue-mode \"lazy\" → (none)",
			"create_queue nsb.v2.delay-level-05: re-created with",
			"create_binding nsb.v2.delay-level-05 → queue nsb.v2.delay-level-05",
		}},
		"a missing level and exchange-to-exchange binding": {nsb, func(t *Topology) {
			t.Queues = slicesDeleteNamed(t.Queues, "nsb.v2.delay-level-07") // and its binding with it
			t.Bindings = slicesDeleteBinding(t.Bindings, "nsb.v2.delay-level-07", "nsb.v2.delay-level-07")
			t.Bindings = slicesDeleteBinding(t.Bindings, "nsb.v2.delay-level-07", "nsb.v2.delay-level-06")
		}, []string{
			"create_queue nsb.v2.delay-level-07: nservicebus level 07 is missing",
			"create_binding nsb.v2.delay-level-07 → queue nsb.v2.delay-level-07",
			`create_binding nsb.v2.delay-level-07 → exchange nsb.v2.delay-level-06 "*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.0.#": the binding is missing`,
		}},
		"a missing delivery exchange, and so the routes": {celeryDeclaration(QueueTypeQuorum, nil), func(t *Topology) {
			t.Exchanges = t.Exchanges[:len(t.Exchanges)-1]
			t.Bindings = slicesDeleteBinding(t.Bindings, "celery_delayed_0", "celery_delayed_delivery")
		}, []string{
			"create_exchange celery_delayed_delivery: the celery delivery exchange is missing",
			"create_binding celery_delayed_0 → exchange celery_delayed_delivery",
		}},
		"a delivery binding that is no route stays, one back into the set and a level's foreign one go": {celery, func(t *Topology) {
			t.Bindings = append(t.Bindings,
				Binding{Source: "celery_delayed_delivery", Destination: "celery", DestinationType: DestinationExchange, RoutingKey: "celery"},
				Binding{Source: "celery_delayed_delivery", Destination: "celery_delayed_4", DestinationType: DestinationQueue, RoutingKey: "#.x"},
				Binding{Source: "celery_delayed_4", Destination: "elsewhere", DestinationType: DestinationQueue, RoutingKey: "#"},
			)
		}, []string{
			`delete_binding celery_delayed_delivery → queue celery_delayed_4 "#.x": the set has no such binding`,
			`delete_binding celery_delayed_4 → queue elsewhere "#": the set has no such binding`,
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			actual := editTopology(tc.declared, tc.edit)
			spec, err := Infer("system", actual)
			if err != nil {
				t.Fatal(err)
			}
			// As an update diffs: the library's own delivery bindings kept.
			desired := KeepLibraryBindings(spec, mustPlan(t, spec), actual)
			changes := Diff(desired, actual)
			lines := changeLines(changes)
			if len(lines) != len(tc.want) {
				t.Fatalf("changes:\n%s", strings.Join(lines, "\n"))
			}
			for i, fragment := range tc.want {
				if !strings.Contains(lines[i], fragment) {
					t.Errorf("change %d = %s\nwant …%s…", i, lines[i], fragment)
				}
			}
			repaired, err := applyChanges(actual, changes)
			if err != nil {
				t.Fatal(err)
			}
			want := editTopology(tc.declared, func(t *Topology) { t.Bindings = append(t.Bindings, LibraryBindings(spec, tc.declared, actual)...) })
			if d := cmp.Diff(topologySet(want), topologySet(repaired)); d != "" {
				t.Errorf("the Diff does not restore the declaration with the library's bindings (-want +got):\n%s", d)
			}
		})
	}
}

func slicesDeleteNamed(queues []Queue, name string) []Queue {
	var kept []Queue
	for _, q := range queues {
		if q.Name != name {
			kept = append(kept, q)
		}
	}
	return kept
}

func slicesDeleteBinding(bindings []Binding, source, destination string) []Binding {
	var kept []Binding
	for _, b := range bindings {
		if b.Source != source || b.Destination != destination {
			kept = append(kept, b)
		}
	}
	return kept
}

// The bindings of TestLibraryBindings: a route's, those a library makes
// for destinations without a route, and some that are no library's.
var (
	salesRoute      = Binding{Source: "nsb.v2.delay-delivery", Destination: "Sales", DestinationType: DestinationExchange, RoutingKey: "#.Sales"}
	billingBySender = Binding{Source: "nsb.v2.delay-delivery", Destination: "Billing", DestinationType: DestinationExchange, RoutingKey: "#.Billing"}
	// The direct routing topology binds the endpoint's queue; the read
	// may leave the destination type unset.
	shippingBySender = Binding{Source: "nsb.v2.delay-delivery", Destination: "Shipping", RoutingKey: "#.Shipping"}
	backIntoTheSet   = Binding{Source: "nsb.v2.delay-delivery", Destination: "nsb.v2.delay-level-03", DestinationType: DestinationExchange, RoutingKey: "#.x"}
	fromALevel       = Binding{Source: "nsb.v2.delay-level-03", Destination: "Billing", DestinationType: DestinationExchange, RoutingKey: "#"}
	tasksByWorker    = Binding{Source: "celery_delayed_delivery", Destination: "tasks", DestinationType: DestinationExchange, RoutingKey: "#.tasks.#"}
	// kombu binds a routing key that starts with "#" as it is.
	hashKeyByWorker = Binding{Source: "celery_delayed_delivery", Destination: "hashed", DestinationType: DestinationExchange, RoutingKey: "#hashed"}
	defaultOutFor   = Binding{Source: "delay.out", Destination: "Billing", DestinationType: DestinationQueue, RoutingKey: "#.*.*"}
)

// TestLibraryBindings checks which bindings a set leaves to its library:
// those from the delivery exchange of a library's layout to a destination
// outside the layout that the plan does not list, once each, their
// destination type spelled out; never a route's, one back into the set,
// one from another exchange, or any in the default layout.
func TestLibraryBindings(t *testing.T) {
	t.Parallel()
	nsbSpec := Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus,
		Routes: []Route{{Destination: "Sales", DestinationType: DestinationExchange, Key: "Sales"}}}
	nsb := mustPlan(t, nsbSpec)
	celerySpec := Spec{Name: "celery", VHost: "/", Layout: LayoutCelery}
	celery := mustPlan(t, celerySpec)
	defaultSpec := Spec{Name: "delay", VHost: "/", Levels: 2}
	with := func(planned Topology, extra ...Binding) Topology {
		return editTopology(planned, func(t *Topology) { t.Bindings = append(t.Bindings, extra...) })
	}
	canonicalShipping := shippingBySender
	canonicalShipping.DestinationType = DestinationQueue
	tests := map[string]struct {
		spec            Spec
		desired, actual Topology
		want            []Binding
	}{
		"as planned":                            {nsbSpec, nsb, nsb, nil},
		"a sender's binding without a route":    {nsbSpec, nsb, with(nsb, billingBySender), []Binding{billingBySender}},
		"to a queue, read twice, once":          {nsbSpec, nsb, with(nsb, shippingBySender, shippingBySender), []Binding{canonicalShipping}},
		"the binding of a removed route":        {nsbSpec, mustPlan(t, Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus}), nsb, []Binding{salesRoute}},
		"back into the set is drift":            {nsbSpec, nsb, with(nsb, backIntoTheSet), nil},
		"from a level exchange is drift":        {nsbSpec, nsb, with(nsb, fromALevel), nil},
		"a worker's, whatever its key":          {celerySpec, celery, with(celery, tasksByWorker, hashKeyByWorker), []Binding{tasksByWorker, hashKeyByWorker}},
		"another layout's delivery exchange":    {celerySpec, celery, with(celery, billingBySender), nil},
		"destroy: every delivery binding":       {nsbSpec, Topology{}, with(nsb, billingBySender, backIntoTheSet), []Binding{salesRoute, billingBySender}},
		"the default layout's out is the set's": {defaultSpec, mustPlan(t, defaultSpec), with(mustPlan(t, defaultSpec), defaultOutFor), nil},
		"the default layout, spelled out":       {Spec{Name: "delay", Layout: LayoutDefault}, Topology{}, with(mustPlan(t, defaultSpec), defaultOutFor), nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := LibraryBindings(tc.spec, tc.desired, tc.actual)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("LibraryBindings (-want +got):\n%s", d)
			}
			// The two views agree: kept in desired, left out of actual.
			kept := KeepLibraryBindings(tc.spec, tc.desired, tc.actual)
			if d := cmp.Diff(append(slices.Clone(tc.desired.Bindings), tc.want...), kept.Bindings); d != "" {
				t.Errorf("KeepLibraryBindings' bindings (-want +got):\n%s", d)
			}
			shown := WithoutLibraryBindings(tc.spec, tc.desired, tc.actual)
			for _, b := range shown.Bindings {
				if slices.Contains(tc.want, b.Canonical()) {
					t.Errorf("WithoutLibraryBindings keeps %s", b)
				}
			}
			if got, want := len(shown.Bindings), len(tc.actual.Bindings)-countIn(tc.actual.Bindings, tc.want); got != want {
				t.Errorf("WithoutLibraryBindings keeps %d bindings, want %d", got, want)
			}
		})
	}
}

// countIn counts the bindings of bindings that are among of.
func countIn(bindings, of []Binding) int {
	n := 0
	for _, b := range bindings {
		if slices.Contains(of, b.Canonical()) {
			n++
		}
	}
	return n
}

// TestLibraryBindingsSurviveTheSetsChanges plays on a library's declaration
// with bindings its library made for destinations without a route what the
// resource diffs: an update that removes a route and repairs a drifted
// level and a foreign binding, one that replaces the delivery exchange,
// and a destroy. None deletes a library's binding on its own: an update
// leaves them, or re-creates them after the exchange it replaced, and a
// destroy leaves them to go with the delivery exchange, last.
func TestLibraryBindingsSurviveTheSetsChanges(t *testing.T) {
	t.Parallel()
	spec := Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus,
		Routes: []Route{{Destination: "Sales", DestinationType: DestinationExchange, Key: "Sales"}}}
	library := []Binding{billingBySender, shippingBySender}
	declared := editTopology(nserviceBusDeclaration(spec.Routes), func(t *Topology) { t.Bindings = append(t.Bindings, library...) })
	withoutRoutes := Spec{Name: "nsb", VHost: "/", Layout: LayoutNServiceBus}
	tests := map[string]struct {
		spec   Spec
		edit   func(*Topology)
		update bool // an update; a destroy otherwise
		want   []string
	}{
		"a removed route and drift repaired": {withoutRoutes, func(t *Topology) {
			queueNamed(t, "nsb.v2.delay-level-03").Arguments.MessageTTL = 9000
			t.Bindings = append(t.Bindings, fromALevel, backIntoTheSet)
		}, true, []string{
			`delete_binding nsb.v2.delay-level-03 → exchange Billing "#": the set has no such binding`,
			`delete_binding nsb.v2.delay-delivery → exchange nsb.v2.delay-level-03 "#.x": the set has no such binding`,
			"delete_queue nsb.v2.delay-level-03: x-message-ttl 9000 → 8000",
			"create_queue nsb.v2.delay-level-03: re-created with x-message-ttl 8000",
			"create_binding nsb.v2.delay-level-03 → queue nsb.v2.delay-level-03",
		}},
		"the delivery exchange replaced": {spec, func(t *Topology) {
			t.Exchanges[len(t.Exchanges)-1].Type = ExchangeFanout
		}, true, []string{
			"delete_exchange nsb.v2.delay-delivery: type fanout → topic: exchange type cannot change in place",
			"create_exchange nsb.v2.delay-delivery: re-created with type topic",
			`create_binding nsb.v2.delay-level-00 → exchange nsb.v2.delay-delivery "*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.0.#": re-creating nsb.v2.delay-delivery dropped this binding`,
			`create_binding nsb.v2.delay-delivery → exchange Sales "#.Sales": re-creating nsb.v2.delay-delivery dropped this binding`,
			`create_binding nsb.v2.delay-delivery → exchange Billing "#.Billing": re-creating nsb.v2.delay-delivery dropped this binding`,
			`create_binding nsb.v2.delay-delivery → queue Shipping "#.Shipping": re-creating nsb.v2.delay-delivery dropped this binding`,
		}},
		"destroy": {spec, func(*Topology) {}, false, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			actual := editTopology(declared, tc.edit)
			var desired Topology
			var changes []Change
			if tc.update {
				desired = KeepLibraryBindings(tc.spec, mustPlan(t, tc.spec), actual)
				changes = Diff(desired, actual)
				lines := changeLines(changes)
				if len(lines) != len(tc.want) {
					t.Fatalf("changes:\n%s", strings.Join(lines, "\n"))
				}
				for i, fragment := range tc.want {
					if !strings.Contains(lines[i], fragment) {
						t.Errorf("change %d = %s\nwant …%s…", i, lines[i], fragment)
					}
				}
			} else {
				desired = Topology{VHost: "/"}
				changes = Diff(desired, WithoutLibraryBindings(tc.spec, desired, actual))
				var bindingDeletions int
				for i, c := range changes {
					if c.Kind == DeleteBinding && c.Binding.Source == "nsb.v2.delay-delivery" {
						t.Errorf("change %d deletes the delivery binding %s on its own", i, c.Binding)
					}
					if c.Kind == DeleteBinding {
						bindingDeletions++
					}
				}
				if bindingDeletions != 56 { // the levels' bindings, each on its own
					t.Errorf("%d binding deletions, want the levels' 56", bindingDeletions)
				}
			}
			for i, c := range changes {
				if c.Kind == DeleteBinding && slices.ContainsFunc(library, func(b Binding) bool { return b.Canonical() == c.Binding.Canonical() }) {
					t.Errorf("change %d deletes the library's binding %s", i, c.Binding)
				}
			}
			after, err := applyChanges(actual, changes)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(topologySet(desired), topologySet(after)); d != "" {
				t.Errorf("after the changes (-want +got):\n%s", d)
			}
		})
	}
}

func TestInferLibraryPartsAndRoutes(t *testing.T) {
	t.Parallel()
	celery := celeryDeclaration(QueueTypeClassic, nil)
	tests := map[string]struct {
		actual Topology
		want   Spec
	}{
		"only the delivery exchange: the defaults": {
			Topology{VHost: "/", Exchanges: []Exchange{{Name: "celery_delayed_delivery", Type: ExchangeTopic}}},
			Spec{Name: "system", VHost: "/", Layout: LayoutCelery},
		},
		"classic level queues, some repeated": {
			editTopology(celery, func(t *Topology) { t.Queues = append(t.Queues, t.Queues[0]) }),
			Spec{Name: "system", VHost: "/", Layout: LayoutCelery, QueueType: QueueTypeClassic},
		},
		"nservicebus classic queues are drift, not its queue type": {
			Topology{VHost: "/", Queues: []Queue{{Name: "nsb.v2.delay-level-00", Arguments: QueueArguments{MessageTTL: 1000}}}},
			Spec{Name: "system", VHost: "/", Layout: LayoutNServiceBus},
		},
		"routes: every key form, repeats once, refused ones left out": {
			Topology{VHost: "prod", Exchanges: []Exchange{{Name: "nsb.v2.delay-delivery", Type: ExchangeTopic}}, Bindings: []Binding{
				{Source: "nsb.v2.delay-delivery", Destination: "Sales", DestinationType: DestinationExchange, RoutingKey: "#.Sales"},
				{Source: "nsb.v2.delay-delivery", Destination: "Sales", DestinationType: DestinationExchange, RoutingKey: "#.Sales"},
				{Source: "nsb.v2.delay-delivery", Destination: "Audit", RoutingKey: "#"},
				{Source: "nsb.v2.delay-delivery", Destination: "Billing", DestinationType: DestinationQueue, RoutingKey: "#.Billing.#"},
				{Source: "nsb.v2.delay-delivery", Destination: "Shipping", DestinationType: DestinationQueue, RoutingKey: "Shipping"},
				{Source: "nsb.v2.delay-delivery", Destination: "Loop", DestinationType: DestinationQueue, RoutingKey: "#.a..b"},
				{Source: "nsb.v2.delay-delivery", Destination: "Twice", DestinationType: DestinationQueue, RoutingKey: "#.#.Twice"},
				{Source: "nsb.v2.delay-delivery", Destination: "nsb.v2.delay-level-03", DestinationType: DestinationExchange, RoutingKey: "#.x"},
				{Source: "Sales", Destination: "Sales", DestinationType: DestinationQueue, RoutingKey: "#.Sales"},
			}},
			Spec{Name: "system", VHost: "prod", Layout: LayoutNServiceBus, Routes: []Route{
				{Destination: "Sales", DestinationType: DestinationExchange, Key: "Sales"},
				{Destination: "Audit"},
				{Destination: "Billing", Key: "Billing.#"},
			}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := Infer("system", tc.actual)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(mustResolve(t, tc.want), got); d != "" {
				t.Errorf("Infer (-want +got):\n%s", d)
			}
		})
	}
}

func TestInferLibraryErrors(t *testing.T) {
	t.Parallel()
	mixed := editTopology(celeryDeclaration(QueueTypeQuorum, nil), func(t *Topology) {
		queueNamed(t, "celery_delayed_2").Arguments.QueueType = QueueTypeClassic
	})
	tests := map[string]struct {
		run  func() error
		want string
	}{
		"celery queues disagree on their type": {func() error { _, err := Infer("system", mixed); return err },
			"the level queues disagree on x-queue-type: celery_delayed_27, celery_delayed_26"},
		"both libraries' objects": {func() error {
			both := nserviceBusDeclaration(nil)
			both.Exchanges = append(both.Exchanges, Exchange{Name: "celery_delayed_delivery", Type: ExchangeTopic})
			_, err := Infer("system", both)
			return err
		}, `cannot infer delay set "system" from its objects: the objects are those of two layouts, nservicebus or celery; the layout to import must be named`},
		"unknown layout": {func() error { _, _, err := InferLayout("system", "rebus", Topology{VHost: "/"}); return err },
			`layout: must be one of "default", "nservicebus", "celery", got "rebus"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := tc.run()
			var inferErr *InferError
			if !errors.As(err, &inferErr) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want an InferError …%s…", err, tc.want)
			}
		})
	}
	// A spec no layout can hold still fails: an empty vhost.
	if _, err := Infer("system", Topology{Exchanges: []Exchange{{Name: "nsb.v2.delay-delivery"}}}); err == nil || !strings.Contains(err.Error(), "the inferred spec is invalid: vhost: must not be empty") {
		t.Errorf("Infer in no vhost: %v", err)
	}
}

// TestInferPrefersTheSetsOwnObjects checks that an object named for the
// set makes it a set of the default layout, even beside a library's.
func TestInferPrefersTheSetsOwnObjects(t *testing.T) {
	t.Parallel()
	own := mustPlan(t, Spec{Name: "delay", VHost: "/", Levels: 2})
	library := nserviceBusDeclaration(nil)
	withLevel := Topology{VHost: "/", Exchanges: library.Exchanges, Queues: append([]Queue{own.Queues[0]}, library.Queues...)}
	if spec, err := Infer("delay", withLevel); err != nil || spec.Layout != "" || spec.Levels != 1 {
		t.Errorf("beside delay.level.00: Infer = %+v, %v; want the default layout", spec, err)
	}
	// The ingest alone tells the layout, but not the levels.
	withIngest := Topology{VHost: "/", Exchanges: append([]Exchange{own.Exchanges[0]}, library.Exchanges...), Queues: library.Queues}
	if _, err := Infer("delay", withIngest); err == nil || !strings.Contains(err.Error(), "no level queue (delay.level.00 …) nor done exchange") {
		t.Errorf("beside delay.ingest: Infer error = %v; want the default layout's", err)
	}
}

func TestDiffReasonsOfLibraryObjects(t *testing.T) {
	t.Parallel()
	planned := mustPlan(t, Spec{Name: "x", VHost: "/", Layout: LayoutCelery, Routes: []Route{{Destination: "celery", Key: "celery"}}})
	lines := changeLines(Diff(Topology{VHost: "/"}, planned))
	for _, want := range []string{
		`delete_binding celery_delayed_0 → exchange celery_delayed_delivery "*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.0.#": the celery delivery exchange is no longer in the set`,
		`delete_binding celery_delayed_delivery → queue celery "#.celery": the celery delivery exchange is no longer in the set`,
		"delete_queue celery_delayed_27: celery level 27 is no longer in the set",
		"delete_exchange celery_delayed_delivery: the celery delivery exchange is no longer in the set",
	} {
		found := false
		for _, line := range lines {
			found = found || line == want
		}
		if !found {
			t.Errorf("no change %q in:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	created := changeLines(Diff(planned, Topology{VHost: "/"}))
	if got, want := created[0], "create_exchange celery_delayed_0: celery level 0 is missing"; got != want {
		t.Errorf("first change %q, want %q", got, want)
	}
	// The top level is the only exchange no binding leads to: its bindings
	// open the chain, last.
	last := Diff(planned, Topology{VHost: "/"})
	for _, c := range last[len(last)-2:] {
		if !c.Opens || c.Binding.Source != "celery_delayed_27" {
			t.Errorf("late change %s, want one that opens celery_delayed_27", changeLine(c))
		}
	}
}

func FuzzLibraryKey(f *testing.F) {
	// layoutChoice: even NServiceBus, odd Celery; key; delay in ns.
	f.Add(0, "some-address", int64(10*time.Second))                                      // NServiceBus's own example
	f.Add(0, "Sales", int64(1))                                                          // a nanosecond rounds up to a second
	f.Add(1, "celery", int64(1999*time.Millisecond))                                     // truncated to a second
	f.Add(1, "celery", int64(999*time.Millisecond))                                      // truncated to none
	f.Add(0, "Sales", int64((1<<28-1)*time.Second+1))                                    // rounds past the longest: refused
	f.Add(1, "celery", int64((1<<28)*time.Second-1))                                     // truncates to the longest
	f.Add(0, "", int64(time.Second))                                                     // no key: refused
	f.Add(1, "tasks.add.1.0", int64(time.Hour))                                          // key words that look like bits
	f.Add(1, strings.Repeat("k", 200), int64(time.Second))                               // one byte too long: refused
	f.Add(0, "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.Sales", int64(-1)) // a routing key given as key, negative delay
	f.Fuzz(func(t *testing.T, layoutChoice int, key string, delayNanos int64) {
		spec := mustResolve(t, Spec{Name: "x", VHost: "/", Layout: []Layout{LayoutNServiceBus, LayoutCelery}[layoutChoice&1]})
		lib := libraryNamed(spec.Layout)
		format, delay := spec.KeyFormat(), time.Duration(delayNanos)
		fuzzCheckDecodeReencodes(t, key, format) // any text decodes without panic
		routingKey, err := format.Encode(key, delay)
		if err != nil {
			var fieldErr *FieldError
			if !errors.As(err, &fieldErr) || routingKey != "" {
				t.Fatalf("Encode() = %q, %v (%T), want only a *FieldError", routingKey, err, err)
			}
			return
		}
		if len(routingKey) > MaxNameLength {
			t.Fatalf("Encode() made a routing key of %d bytes", len(routingKey))
		}
		gotKey, gotDelay, err := format.Decode(routingKey)
		if err != nil || gotKey != key {
			t.Fatalf("Decode(Encode()) = %q, %v; want the key %q", gotKey, err, key)
		}
		// NServiceBus rounds up, never early; Celery truncates, never late;
		// both by less than a second.
		early, late := gotDelay < delay, gotDelay > delay
		if gotDelay%time.Second != 0 || (lib.roundUp && (early || gotDelay-delay >= time.Second)) || (!lib.roundUp && (late || delay-gotDelay >= time.Second)) {
			t.Fatalf("%s: delay %s came back as %s", spec.Layout, delay, gotDelay)
		}
		entry, err := spec.EntryExchange(delay)
		if err != nil || !lib.owns(entry) {
			t.Fatalf("EntryExchange(%s) = %q, %v", delay, entry, err)
		}
		fuzzCheckDecodeReencodes(t, routingKey, format)
	})
}

func TestPublishingNames(t *testing.T) {
	t.Parallel()
	resolved := func(t *testing.T, s Spec) Spec {
		t.Helper()
		s.VHost = "/"
		r, err := Resolve(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := map[string]struct {
		spec                         Spec
		ingest, out, unroutableQueue string
	}{
		"default":             {Spec{Name: "delay", Levels: 4}, "delay.ingest", "delay.out", "delay.unroutable"},
		"default, generation": {Spec{Name: "delay", Levels: 4, Generation: 3, FormatGeneration: 2}, "delay.ingest.g2", "delay.out.g2", "delay.unroutable"},
		"nservicebus":         {Spec{Name: "nsb", Layout: LayoutNServiceBus}, "nsb.v2.delay-level-27", "nsb.v2.delay-delivery", ""},
		"celery":              {Spec{Name: "celery", Layout: LayoutCelery}, "celery_delayed_27", "celery_delayed_delivery", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := resolved(t, tc.spec)
			got := [3]string{s.IngestExchange(), s.OutExchange(), s.UnroutableQueue()}
			if want := [3]string{tc.ingest, tc.out, tc.unroutableQueue}; got != want {
				t.Errorf("ingest, out, unroutable = %q, want %q", got, want)
			}
			planned := mustPlan(t, s)
			for _, exchange := range got[:2] {
				if !slices.ContainsFunc(planned.Exchanges, func(e Exchange) bool { return e.Name == exchange }) {
					t.Errorf("%s is no exchange of the plan", exchange)
				}
			}
		})
	}
	// Every delay the layout holds enters at the ingest exchange: it is
	// the entry exchange of the longest delay, whose highest bit is the top.
	for _, l := range []Layout{LayoutNServiceBus, LayoutCelery} {
		s := resolved(t, Spec{Name: "x", Layout: l})
		if entry, err := s.EntryExchange(s.KeyFormat().MaxDelay()); err != nil || entry != s.IngestExchange() {
			t.Errorf("%s: entry of the longest delay %q, %v; want the ingest exchange %q", l, entry, err, s.IngestExchange())
		}
	}
}

func TestAnyLayoutObjectNamePattern(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(AnyLayoutObjectNamePattern("delay"))
	for _, s := range []Spec{{Name: "delay", VHost: "/", Levels: 3, Radix: 4}, planSpecNServiceBus, planSpecCelery} {
		checkPatternMatchesPlan(t, pattern, mustPlan(t, s))
	}
	for _, name := range []string{"delayx.ingest", "other.ingest", "delay.ingest.x", "xnsb.v2.delay-level-01", "celery_delayed_28", "amq.topic"} {
		if pattern.MatchString(name) {
			t.Errorf("%s matches %q, an object of no layout's set", pattern, name)
		}
	}
}

// checkPatternMatchesPlan checks that pattern matches every exchange and
// queue of planned.
func checkPatternMatchesPlan(t *testing.T, pattern *regexp.Regexp, planned Topology) {
	t.Helper()
	for _, e := range planned.Exchanges {
		if !pattern.MatchString(e.Name) {
			t.Errorf("%s does not match %s", e.Name, pattern)
		}
	}
	for _, q := range planned.Queues {
		if !pattern.MatchString(q.Name) {
			t.Errorf("%s does not match %s", q.Name, pattern)
		}
	}
}
