package topology

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// renderSpecs are the planned topologies whose renderings are kept as golden
// files under testdata/render/<case>/.
var renderSpecs = map[string]Spec{
	// The original design's example: delays up to 15 s, one route to a queue.
	"n4-1s-queue-route": {
		Name: "delay", VHost: "/", Levels: 4, Resolution: time.Second,
		Routes: []Route{{Destination: "orders", Key: "orders"}},
	},
	// Radix 4: three TTL queues per level, one done exchange per level.
	"r4-n2-1s-queue-route": {
		Name: "delay", VHost: "/", Levels: 2, Radix: 4, Resolution: time.Second,
		Routes: []Route{{Destination: "orders", Key: "orders"}},
	},
	"n2-250ms-quorum-at-most-once-exchange-route": {
		Name: "retry", VHost: "jobs", Levels: 2, Resolution: 250 * time.Millisecond,
		QueueType: QueueTypeQuorum, DeadLetterStrategy: AtMostOnce,
		Routes: []Route{{Destination: "events", DestinationType: DestinationExchange}},
	},
	// Replicas on 2 nodes: x-quorum-initial-group-size an integer on each TTL queue.
	"n2-1s-quorum-group-2-queue-route": {
		Name: "delay", VHost: "/", Levels: 2, Resolution: time.Second, QuorumInitialGroupSize: 2,
		Routes: []Route{{Destination: "orders", Key: "orders"}},
	},
}

func renderPlan(t *testing.T, s Spec) Topology {
	t.Helper()
	topology, err := Plan(s)
	if err != nil {
		t.Fatalf("Plan(%+v): %v", s, err)
	}
	return topology
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	for name, spec := range renderSpecs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			topology := renderPlan(t, spec)
			definitions, err := DefinitionsJSON(topology)
			if err != nil {
				t.Fatalf("DefinitionsJSON: %v", err)
			}
			checkGolden(t, path.Join("render", name, "definitions.golden.json"), definitions)
			checkGolden(t, path.Join("render", name, "mermaid.golden.mmd"), []byte(Mermaid(topology)))
			checkGolden(t, path.Join("render", name, "bindings.golden.txt"), []byte(BindingTable(topology)))
		})
	}
}

// renderDriftTopology is what a broker could hold after hand edits: a level
// queue without its TTL, a done exchange whose queue is gone, an alternate
// exchange outside the set, an exchange nothing binds, a queue and an
// exchange sharing a name, arguments the layout never sets, and names that
// need escaping in Mermaid.
var renderDriftTopology = Topology{
	VHost: "ops",
	Exchanges: []Exchange{
		{Name: "d.ingest", Type: ExchangeTopic, Arguments: ExchangeArguments{AlternateExchange: "elsewhere"}},
		{Name: "d.level.00.done", Type: ExchangeTopic},
		{Name: "d.level.01.done", Type: ExchangeTopic, Arguments: ExchangeArguments{
			Other: map[string]string{"x-note": `{"b": [1, 2], "a": "x"}`},
		}},
		{Name: "spare", Type: ExchangeFanout},
		{Name: "twin", Type: ExchangeTopic},
	},
	Queues: []Queue{
		{Name: "d.level.00", Arguments: QueueArguments{
			DeadLetterExchange: "d.level.00.done", QueueType: QueueTypeClassic,
			Other: map[string]string{"x-max-length": "1000", "x-single-active-consumer": "true"},
		}},
		{Name: "twin"},
	},
	Bindings: []Binding{
		{Source: "d.ingest", Destination: "d.level.01", DestinationType: DestinationQueue, RoutingKey: "#.1.*"},
		{Source: "d.ingest", Destination: "d.level.00", DestinationType: DestinationQueue, RoutingKey: "#.0.1"},
		{Source: "d.level.01.done", Destination: "twin", DestinationType: DestinationExchange, RoutingKey: "a;b:c"},
		{Source: "d.level.00.done", Destination: "twin", DestinationType: DestinationQueue, RoutingKey: `<"x"> & 100%`},
		{Source: "twin", Destination: "line\nbreak", DestinationType: DestinationQueue, RoutingKey: ""},
	},
}

func TestRenderDriftGolden(t *testing.T) {
	t.Parallel()
	definitions, err := DefinitionsJSON(renderDriftTopology)
	if err != nil {
		t.Fatalf("DefinitionsJSON: %v", err)
	}
	checkGolden(t, "render/drift/definitions.golden.json", definitions)
	checkGolden(t, "render/drift/mermaid.golden.mmd", []byte(Mermaid(renderDriftTopology)))
	checkGolden(t, "render/drift/bindings.golden.txt", []byte(BindingTable(renderDriftTopology)))
}

// TestRenderMermaidOriginalDesign checks the N = 4 diagram against the
// arrows of the design's original drawing (Q8…Q1 are the level queues, Done
// the out exchange), plus ingest → out on #.0.0.0.0, which the original lists
// but leaves out of its drawing: the 15 delay bindings.
func TestRenderMermaidOriginalDesign(t *testing.T) {
	t.Parallel()
	original := `Ingest -->> Q8: #35;.1.*.*.*
Ingest -->> Q4: #35;.0.1.*.*
Ingest -->> Q2: #35;.0.0.1.*
Ingest -->> Q1: #35;.0.0.0.1
Ingest -->> Done: #35;.0.0.0.0
Q8 -->> Q4: #35;.1.*.*
Q8 -->> Q2: #35;.0.1.*
Q8 -->> Q1: #35;.0.0.1
Q8 -->> Done: #35;.0.0.0
Q4 -->> Q2: #35;.1.*
Q4 -->> Q1: #35;.0.1
Q4 -->> Done: #35;.0.0
Q2 -->> Q1: #35;.1
Q2 -->> Done: #35;.0
Q1 -->> Done: #35;`
	participants := strings.NewReplacer("Q8", "Level03", "Q4", "Level02", "Q2", "Level01", "Q1", "Level00", "Done", "Out")
	want := map[string]bool{}
	for line := range strings.Lines(original) {
		want["    "+participants.Replace(strings.TrimSuffix(line, "\n"))] = true
	}

	got := map[string]bool{}
	for line := range strings.Lines(Mermaid(renderPlan(t, renderSpecs["n4-1s-queue-route"]))) {
		line = strings.TrimSuffix(line, "\n")
		from, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if strings.Contains(line, " -->> ") && (from == "Ingest" || strings.HasPrefix(from, "Level")) {
			got[line] = true
		}
	}
	if len(want) != 15 {
		t.Fatalf("the original drawing plus ingest → out should have 15 arrows, have %d", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delay arrows differ from the original design (-want +got):\n%s", diff)
	}
}

func TestRenderMermaidParticipants(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		topology Topology
		want     []string
	}{
		"planned set, longest TTL first": {
			topology: renderPlan(t, renderSpecs["n4-1s-queue-route"]),
			want: []string{
				"participant Ingest as Ingest",
				"participant Level03 as level.03 (8s)",
				"participant Level02 as level.02 (4s)",
				"participant Level01 as level.01 (2s)",
				"participant Level00 as level.00 (1s)",
				"participant Out as Out",
				"participant Unroutable as Unroutable",
				"participant Object1 as orders",
			},
		},
		"sub-second and minute TTLs": {
			topology: renderPlan(t, Spec{Name: "t", VHost: "/", Levels: 9, Resolution: 500 * time.Millisecond}),
			want: []string{
				"participant Ingest as Ingest",
				"participant Level08 as level.08 (2m8s)",
				"participant Level07 as level.07 (1m4s)",
				"participant Level06 as level.06 (32s)",
				"participant Level05 as level.05 (16s)",
				"participant Level04 as level.04 (8s)",
				"participant Level03 as level.03 (4s)",
				"participant Level02 as level.02 (2s)",
				"participant Level01 as level.01 (1s)",
				"participant Level00 as level.00 (500ms)",
				"participant Out as Out",
				"participant Unroutable as Unroutable",
			},
		},
		"radix 4: each queue, then its level's done exchange, highest first": {
			topology: renderPlan(t, renderSpecs["r4-n2-1s-queue-route"]),
			want: []string{
				"participant Ingest as Ingest",
				"participant R4Level01Digit3 as r4.01.3 (12s)",
				"participant R4Level01Digit2 as r4.01.2 (8s)",
				"participant R4Level01Digit1 as r4.01.1 (4s)",
				"participant R4Level01Done as r4.01.done",
				"participant R4Level00Digit3 as r4.00.3 (3s)",
				"participant R4Level00Digit2 as r4.00.2 (2s)",
				"participant R4Level00Digit1 as r4.00.1 (1s)",
				"participant R4Level00Done as r4.00.done",
				"participant Out as Out",
				"participant Unroutable as Unroutable",
				"participant Object1 as orders",
			},
		},
		"radix change half done: radix 2 first, then radix 16": {
			topology: func() Topology {
				binary := renderPlan(t, Spec{Name: "d", VHost: "/", Levels: 1})
				hex := renderPlan(t, Spec{Name: "d", VHost: "/", Levels: 1, Radix: 16, Resolution: time.Millisecond})
				return Topology{VHost: "/",
					Exchanges: []Exchange{hex.Exchanges[1], binary.Exchanges[1]},
					Queues:    []Queue{hex.Queues[14], hex.Queues[0], binary.Queues[0]}}
			}(),
			want: []string{
				"participant Level00 as level.00 (1s)",
				"participant R16Level00Digit15 as r16.00.15 (15ms)",
				"participant R16Level00Digit1 as r16.00.1 (1ms)",
				"participant R16Level00Done as r16.00.done",
				"participant Unroutable as Unroutable",
			},
		},
		"no set object: everything by name, in order of appearance": {
			topology: Topology{
				VHost:     "/",
				Exchanges: []Exchange{{Name: "b", Type: ExchangeTopic}, {Name: "a", Type: ExchangeTopic}},
				Queues:    []Queue{{Name: "a"}},
				Bindings:  []Binding{{Source: "a", Destination: "c", DestinationType: DestinationQueue, RoutingKey: "k"}},
			},
			want: []string{
				"participant Object1 as b (exchange)",
				"participant Object2 as a (exchange)",
				"participant Object3 as a",
				"participant Object4 as c",
			},
		},
		"empty topology": {topology: Topology{VHost: "/"}},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for line := range strings.Lines(Mermaid(test.topology)) {
				if line = strings.TrimSpace(line); strings.HasPrefix(line, "participant ") {
					got = append(got, line)
				}
			}
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("participants differ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderDeterministic renders the same topology many times: participants
// live in a map, whose order Go randomises on every range.
func TestRenderDeterministic(t *testing.T) {
	t.Parallel()
	for name, topology := range map[string]Topology{
		"planned": renderPlan(t, renderSpecs["n4-1s-queue-route"]),
		"drift":   renderDriftTopology,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			firstMermaid := Mermaid(topology)
			firstDefinitions, err := DefinitionsJSON(topology)
			if err != nil {
				t.Fatal(err)
			}
			for range 50 {
				if got := Mermaid(topology); got != firstMermaid {
					t.Fatalf("Mermaid changed between calls:\n%s", cmp.Diff(firstMermaid, got))
				}
				if got, _ := DefinitionsJSON(topology); !bytes.Equal(got, firstDefinitions) {
					t.Fatalf("DefinitionsJSON changed between calls:\n%s", cmp.Diff(string(firstDefinitions), string(got)))
				}
			}
		})
	}
}

func TestRenderMermaidText(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"#.0.1.*":          "#35;.0.1.*",
		"plain.name-x_1":   "plain.name-x_1",
		"a;b:c":            "a#59;b#58;c",
		`<"x"> & 100%`:     "#60;#34;x#34;#62; #38; 100#37;",
		"line\nbreak\ttab": "line#10;break#9;tab",
		"ünïcode →":        "ünïcode →",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			if got := mermaidText(in); got != want {
				t.Errorf("mermaidText(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

// TestRenderDefinitionsParse reads the definitions back as the broker would
// and checks what the importer relies on.
func TestRenderDefinitionsParse(t *testing.T) {
	t.Parallel()
	for name, spec := range renderSpecs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			topology := renderPlan(t, spec)
			data, err := DefinitionsJSON(topology)
			if err != nil {
				t.Fatalf("DefinitionsJSON: %v", err)
			}
			if !bytes.HasSuffix(data, []byte("}\n")) {
				t.Errorf("output does not end in a newline after the document")
			}
			var doc struct {
				Exchanges []map[string]any `json:"exchanges"`
				Queues    []map[string]any `json:"queues"`
				Bindings  []map[string]any `json:"bindings"`
			}
			decoder := json.NewDecoder(bytes.NewReader(data))
			decoder.DisallowUnknownFields()
			if err := decoder.Decode(&doc); err != nil {
				t.Fatalf("decoding definitions: %v", err)
			}
			counts := []int{len(doc.Exchanges), len(doc.Queues), len(doc.Bindings)}
			wantCounts := []int{len(topology.Exchanges), len(topology.Queues), len(topology.Bindings)}
			if diff := cmp.Diff(wantCounts, counts); diff != "" {
				t.Errorf("exchange, queue and binding counts differ (-want +got):\n%s", diff)
			}
			objects := append(append(append([]map[string]any{}, doc.Exchanges...), doc.Queues...), doc.Bindings...)
			for _, object := range objects {
				if object["vhost"] != spec.VHost {
					t.Errorf("object %v has vhost %v, want %q", object, object["vhost"], spec.VHost)
				}
				if _, ok := object["arguments"].(map[string]any); !ok {
					t.Errorf("object %v: arguments %v is not a JSON object", object, object["arguments"])
				}
			}
			for _, x := range doc.Exchanges {
				for field, want := range map[string]any{"durable": true, "auto_delete": false, "internal": false} {
					if x[field] != want {
						t.Errorf("exchange %v: %s = %v, want %v", x["name"], field, x[field], want)
					}
				}
			}
			ttls := 0
			for i, q := range doc.Queues {
				if q["durable"] != true || q["auto_delete"] != false {
					t.Errorf("queue %v: durable %v, auto_delete %v; want true, false", q["name"], q["durable"], q["auto_delete"])
				}
				arguments, ok := q["arguments"].(map[string]any)
				if !ok {
					t.Fatalf("queue %v: arguments = %#v, want a JSON object", q["name"], q["arguments"])
				}
				ttl, present := arguments["x-message-ttl"]
				if !present {
					continue
				}
				ttls++
				if number, ok := ttl.(float64); !ok || int64(number) != topology.Queues[i].Arguments.MessageTTL {
					t.Errorf("queue %v: x-message-ttl = %#v, want the JSON number %d", q["name"], ttl, topology.Queues[i].Arguments.MessageTTL)
				}
			}
			if want := (radixOrDefault(spec.Radix) - 1) * spec.Levels; ttls != want {
				t.Errorf("%d queues have a TTL, want one per level and nonzero digit: %d", ttls, want)
			}
			for i, b := range doc.Bindings {
				want := topology.Bindings[i]
				text := func(field string) string {
					s, ok := b[field].(string)
					if !ok {
						t.Fatalf("binding %d: %s = %#v, want a JSON string", i, field, b[field])
					}
					return s
				}
				got := Binding{
					Source: text("source"), Destination: text("destination"),
					DestinationType: DestinationType(text("destination_type")), RoutingKey: text("routing_key"),
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("binding %d differs (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestRenderDefinitionsOtherArguments(t *testing.T) {
	t.Parallel()
	data, err := DefinitionsJSON(renderDriftTopology)
	if err != nil {
		t.Fatalf("DefinitionsJSON: %v", err)
	}
	var doc struct {
		Exchanges []struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"exchanges"`
		Queues []struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"queues"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("decoding definitions: %v", err)
	}
	wantQueue := map[string]any{
		"x-dead-letter-exchange": "d.level.00.done", "x-queue-type": "classic",
		"x-max-length": float64(1000), "x-single-active-consumer": true,
	}
	if diff := cmp.Diff(wantQueue, doc.Queues[0].Arguments); diff != "" {
		t.Errorf("queue %s arguments differ (-want +got):\n%s", doc.Queues[0].Name, diff)
	}
	wantExchange := map[string]any{"x-note": map[string]any{"a": "x", "b": []any{float64(1), float64(2)}}}
	if diff := cmp.Diff(wantExchange, doc.Exchanges[2].Arguments); diff != "" {
		t.Errorf("exchange %s arguments differ (-want +got):\n%s", doc.Exchanges[2].Name, diff)
	}
}

func TestRenderDefinitionsErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		topology Topology
		want     string
	}{
		"no vhost": {
			topology: Topology{Exchanges: []Exchange{{Name: "x", Type: ExchangeTopic}}},
			want:     "rendering definitions: the topology names no vhost",
		},
		"queue argument that is not JSON": {
			topology: Topology{VHost: "/", Queues: []Queue{{Name: "q", Arguments: QueueArguments{
				Other: map[string]string{"x-max-length": "10", "x-note": "plain text"},
			}}}},
			want: `rendering definitions: queue "q" has argument "x-note" whose value is not JSON: "plain text"`,
		},
		"queue argument both typed and in Other": {
			topology: Topology{VHost: "/", Queues: []Queue{{Name: "q", Arguments: QueueArguments{
				MessageTTL: 1000, Other: map[string]string{"x-message-ttl": "2000"},
			}}}},
			want: `rendering definitions: queue "q" has argument "x-message-ttl" both typed and in Other`,
		},
		"exchange argument both typed and in Other": {
			topology: Topology{VHost: "/", Exchanges: []Exchange{{Name: "x", Type: ExchangeTopic, Arguments: ExchangeArguments{
				AlternateExchange: "u", Other: map[string]string{"alternate-exchange": `"v"`},
			}}}},
			want: `rendering definitions: exchange "x" has argument "alternate-exchange" both typed and in Other`,
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := DefinitionsJSON(test.topology)
			if err == nil {
				t.Fatalf("DefinitionsJSON succeeded with %s, want error %q", data, test.want)
			}
			if err.Error() != test.want {
				t.Errorf("error = %q, want %q", err, test.want)
			}
			if data != nil {
				t.Errorf("DefinitionsJSON returned %q with its error, want nil", data)
			}
		})
	}
}

func TestRenderBindingTable(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		bindings []Binding
		want     string
	}{
		"header only": {
			want: "SOURCE  DESTINATION  TYPE  ROUTING KEY\n",
		},
		"columns align on the widest cell, counting runes": {
			bindings: []Binding{
				{Source: "a", Destination: "→→→→→→→→→→→→→→", DestinationType: DestinationQueue, RoutingKey: "#.1"},
				{Source: "long.source.name", Destination: "b", DestinationType: DestinationExchange, RoutingKey: "#"},
			},
			want: "" +
				"SOURCE            DESTINATION     TYPE      ROUTING KEY\n" +
				"a                 →→→→→→→→→→→→→→  queue     #.1\n" +
				"long.source.name  b               exchange  #\n",
		},
		"empty, blank, quoted and control fields are quoted": {
			bindings: []Binding{
				{Source: "u", Destination: "has space", DestinationType: DestinationQueue, RoutingKey: ""},
				{Source: `"q"`, Destination: "tab\there", DestinationType: DestinationQueue, RoutingKey: "bell\a"},
			},
			want: "" +
				"SOURCE   DESTINATION  TYPE   ROUTING KEY\n" +
				"u        \"has space\"  queue  \"\"\n" +
				"\"\\\"q\\\"\"  \"tab\\there\"  queue  \"bell\\a\"\n",
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := BindingTable(Topology{VHost: "/", Bindings: test.bindings})
			if diff := cmp.Diff(test.want, got); diff != "" {
				t.Errorf("BindingTable differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderHumanDuration(t *testing.T) {
	t.Parallel()
	tests := map[int64]string{
		0:                         "0s",
		1:                         "1ms",
		250:                       "250ms",
		500:                       "500ms",
		1000:                      "1s",
		1500:                      "1.5s",
		8000:                      "8s",
		59_999:                    "59.999s",
		60_000:                    "1m",
		128_000:                   "2m8s",
		120_500:                   "2m500ms",
		3_600_000:                 "1h",
		3_601_500:                 "1h1.5s",
		5_430_000:                 "1h30m30s",
		MaxTTL:                    "87600h",
		math.MaxInt64 / 1_000_000: "2562047h47m16.854s",
		math.MaxInt64 / 10:        "922337203685477580ms",
	}
	for ms, want := range tests {
		t.Run(want, func(t *testing.T) {
			t.Parallel()
			got := humanMilliseconds(ms)
			if got != want {
				t.Errorf("humanMilliseconds(%d) = %q, want %q", ms, got, want)
			}
			// Whatever fits a time.Duration reads back to the same value.
			if parsed, err := time.ParseDuration(got); err == nil && parsed != time.Duration(ms)*time.Millisecond {
				t.Errorf("%q parses back as %v, want %d ms", got, parsed, ms)
			}
		})
	}
}

func TestRenderSetNames(t *testing.T) {
	t.Parallel()
	exchanges := func(names ...string) Topology {
		var t Topology
		for _, name := range names {
			t.Exchanges = append(t.Exchanges, Exchange{Name: name})
		}
		return t
	}
	tests := map[string]struct {
		topology Topology
		want     Names
		found    bool
	}{
		"planned":                 {topology: renderPlan(t, renderSpecs["n4-1s-queue-route"]), want: "delay", found: true},
		"nothing of a set":        {topology: exchanges("orders", "events.x"), found: false},
		"empty":                   {found: false},
		"majority wins":           {topology: exchanges("a.ingest", "b.out", "b.level.00.done"), want: "b", found: true},
		"first wins a tie":        {topology: exchanges("a.b.ingest", "a.out"), want: "a.b", found: true},
		"name with layout words":  {topology: exchanges("x.level.ingest", "x.level.out"), want: "x.level", found: true},
		"queues count as objects": {topology: Topology{Queues: []Queue{{Name: "q.level.07"}}}, want: "q", found: true},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, found := setNames(test.topology)
			if got != test.want || found != test.found {
				t.Errorf("setNames = %q, %v; want %q, %v", got, found, test.want, test.found)
			}
		})
	}
}

func TestBindingString(t *testing.T) {
	for _, tc := range []struct {
		binding Binding
		want    string
	}{
		{Binding{Source: "delay.ingest", Destination: "delay.level.03", DestinationType: DestinationQueue, RoutingKey: "#.1.*.*.*"},
			`delay.ingest -> queue delay.level.03, key "#.1.*.*.*"`},
		{Binding{Source: "delay.ingest", Destination: "delay.out", DestinationType: DestinationExchange, RoutingKey: "#.0.0"},
			`delay.ingest -> exchange delay.out, key "#.0.0"`},
		{Binding{Source: "delay.unroutable", Destination: "delay.unroutable", DestinationType: DestinationQueue},
			`delay.unroutable -> queue delay.unroutable, key ""`},
	} {
		if got := tc.binding.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.binding, got, tc.want)
		}
	}
}

func TestObjectLines(t *testing.T) {
	for _, tc := range []struct {
		object fmt.Stringer
		want   string
	}{
		{Exchange{Name: "delay.ingest", Type: ExchangeTopic, Arguments: ExchangeArguments{AlternateExchange: "delay.unroutable"}},
			`delay.ingest: topic, alternate-exchange "delay.unroutable"`},
		{Exchange{Name: "delay.out", Type: ExchangeTopic, Arguments: ExchangeArguments{Other: map[string]string{"x-b": `"2"`, "x-a": "1"}}},
			`delay.out: topic, x-a 1, x-b "2"`},
		{Queue{Name: "ns:delay.level.03", Arguments: QueueArguments{QueueType: QueueTypeClassic, MessageTTL: 8000,
			DeadLetterExchange: "ns:delay.level.03.done", DeadLetterStrategy: AtLeastOnce, Overflow: "reject-publish",
			Other: map[string]string{"x-max-length": "10"}}},
			`ns:delay.level.03: x-queue-type "classic", x-message-ttl 8000, x-dead-letter-exchange "ns:delay.level.03.done", ` +
				`x-dead-letter-strategy "at-least-once", x-overflow "reject-publish", x-max-length 10`},
		{Queue{Name: "delay.unroutable"}, `delay.unroutable`},
	} {
		if got := tc.object.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.object, got, tc.want)
		}
	}
	lines := Lines([]Binding{{Source: "a", Destination: "b", DestinationType: DestinationQueue, RoutingKey: "#"},
		{Source: "a", Destination: "c", DestinationType: DestinationExchange}})
	if want := "a -> queue b, key \"#\"\na -> exchange c, key \"\""; lines != want {
		t.Errorf("Lines = %q, want %q", lines, want)
	}
	if lines := Lines([]Queue(nil)); lines != "" {
		t.Errorf("Lines of none = %q, want empty", lines)
	}
}

func TestQueueTypeInLine(t *testing.T) {
	for _, q := range []Queue{
		{Name: "ns:delay.unroutable", Arguments: QueueArguments{QueueType: QueueTypeQuorum}},
		{Name: "delay.unroutable", Arguments: QueueArguments{QueueType: QueueTypeClassic, Overflow: "reject-publish"}},
		{Name: "delay.unroutable", Arguments: QueueArguments{MessageTTL: 5, Other: map[string]string{"x-queue-type": `"stream"`}}},
		{Name: "delay.unroutable"},
	} {
		name, queueType := QueueTypeInLine(q.String())
		if LineName(q.String()) != q.Name {
			t.Errorf("LineName(%q) = %q, want %q", q.String(), LineName(q.String()), q.Name)
		}
		if name != q.Name || queueType != q.Arguments.QueueType {
			t.Errorf("QueueTypeInLine(%q) = %q, %q; want %q, %q", q.String(), name, queueType, q.Name, q.Arguments.QueueType)
		}
	}
}

// TestBindingInLine reads back what Binding.String writes, the default
// exchange's empty source and a key with quotes and blanks included, and
// refuses what is no binding's line.
func TestBindingInLine(t *testing.T) {
	for _, b := range []Binding{
		{Source: "delay.ingest", Destination: "delay.level.03", DestinationType: DestinationQueue, RoutingKey: "#.1.*.*.*"},
		{Source: "", Destination: "q", DestinationType: DestinationQueue, RoutingKey: "q"},
		{Source: "delay.out", Destination: "orders", DestinationType: DestinationExchange, RoutingKey: `a "quoted", key -> x`},
		{Source: "delay.out", Destination: "orders", DestinationType: DestinationExchange},
	} {
		got, ok := BindingInLine(b.String())
		if !ok || got != b {
			t.Errorf("BindingInLine(%q) = %+v, %v; want %+v", b.String(), got, ok, b)
		}
	}
	for _, line := range []string{"", "delay.ingest: topic", "a -> queue b", "a -> queue b, key unquoted", "a -> queueb, key \"k\""} {
		if got, ok := BindingInLine(line); ok {
			t.Errorf("BindingInLine(%q) = %+v, true; want false", line, got)
		}
	}
}
