package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The three renderers below show any Topology, planned or read from a broker:
// they never assume the layout is complete, only name its parts when they
// recognise them.

// definitionsDocument is the part of RabbitMQ's definitions format that a
// topology fills. RabbitMQ 3.10's importer (rabbit_definitions:apply_defs)
// skips absent categories and needs no rabbit_version unless users are
// imported, and it creates exchanges, then queues, then bindings.
type definitionsDocument struct {
	Exchanges []exchangeDefinition `json:"exchanges"`
	Queues    []queueDefinition    `json:"queues"`
	Bindings  []bindingDefinition  `json:"bindings"`
}

type exchangeDefinition struct {
	Name       string         `json:"name"`
	VHost      string         `json:"vhost"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments"`
}

type queueDefinition struct {
	Name       string         `json:"name"`
	VHost      string         `json:"vhost"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments"`
}

type bindingDefinition struct {
	Source          string          `json:"source"`
	VHost           string          `json:"vhost"`
	Destination     string          `json:"destination"`
	DestinationType DestinationType `json:"destination_type"`
	RoutingKey      string          `json:"routing_key"`
	Arguments       map[string]any  `json:"arguments"`
}

// DefinitionsJSON renders t as RabbitMQ definitions: the "exchanges",
// "queues" and "bindings" arrays that `rabbitmqctl import_definitions` and
// the management API's POST /api/definitions/{vhost} load, every object
// durable, not auto-delete, not internal, in t's vhost. Arguments keep their
// types (x-message-ttl is a JSON number, the broker refuses a string); Other
// arguments are embedded as the JSON they hold. The output is indented, ends
// in a newline and depends only on t: objects in t's order, argument keys
// sorted.
func DefinitionsJSON(t Topology) ([]byte, error) {
	if t.VHost == "" {
		return nil, errors.New("rendering definitions: the topology names no vhost")
	}
	doc := definitionsDocument{
		Exchanges: make([]exchangeDefinition, 0, len(t.Exchanges)),
		Queues:    make([]queueDefinition, 0, len(t.Queues)),
		Bindings:  make([]bindingDefinition, 0, len(t.Bindings)),
	}
	for _, x := range t.Exchanges {
		args, err := exchangeArgumentsJSON(x)
		if err != nil {
			return nil, err
		}
		doc.Exchanges = append(doc.Exchanges, exchangeDefinition{
			Name: x.Name, VHost: t.VHost, Type: x.Type, Durable: true, Arguments: args,
		})
	}
	for _, q := range t.Queues {
		args, err := queueArgumentsJSON(q)
		if err != nil {
			return nil, err
		}
		doc.Queues = append(doc.Queues, queueDefinition{
			Name: q.Name, VHost: t.VHost, Durable: true, Arguments: args,
		})
	}
	for _, b := range t.Bindings {
		doc.Bindings = append(doc.Bindings, bindingDefinition{
			Source: b.Source, VHost: t.VHost, Destination: b.Destination,
			DestinationType: b.DestinationType, RoutingKey: b.RoutingKey,
			Arguments: map[string]any{},
		})
	}
	return encodeIndented(doc)
}

// encodeIndented is json.MarshalIndent without HTML escaping, so that names
// holding <, > or & stay readable, plus the trailing newline.
func encodeIndented(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}

func exchangeArgumentsJSON(x Exchange) (map[string]any, error) {
	args := argumentsJSON{owner: "exchange " + strconv.Quote(x.Name), values: map[string]any{}}
	args.setString(ArgAlternateExchange, x.Arguments.AlternateExchange)
	return args.values, args.addOther(x.Arguments.Other)
}

func queueArgumentsJSON(q Queue) (map[string]any, error) {
	args := argumentsJSON{owner: "queue " + strconv.Quote(q.Name), values: map[string]any{}}
	if q.Arguments.MessageTTL != 0 {
		args.values[ArgMessageTTL] = q.Arguments.MessageTTL
	}
	args.setString(ArgDeadLetterExchange, q.Arguments.DeadLetterExchange)
	args.setString(ArgQueueType, string(q.Arguments.QueueType))
	args.setString(ArgDeadLetterStrategy, string(q.Arguments.DeadLetterStrategy))
	args.setString(ArgOverflow, q.Arguments.Overflow)
	args.setString(ArgLeaderLocator, string(q.Arguments.LeaderLocator))
	if q.Arguments.QuorumInitialGroupSize != 0 {
		args.values[ArgQuorumInitialGroupSize] = q.Arguments.QuorumInitialGroupSize
	}
	return args.values, args.addOther(q.Arguments.Other)
}

// argumentsJSON collects one object's arguments as the values that encode
// to their JSON: strings, int64 for the TTL, json.RawMessage for Other.
type argumentsJSON struct {
	owner  string // for errors: `queue "delay.level.00"`
	values map[string]any
}

// setString sets a string argument unless it is absent (empty).
func (a argumentsJSON) setString(name, value string) {
	if value == "" {
		return
	}
	a.values[name] = value
}

// addOther embeds the arguments the typed fields do not know. Each must be
// valid JSON and must not repeat a typed argument: the output would hold one
// of the two values and silently drop the other.
func (a argumentsJSON) addOther(other map[string]string) error {
	for _, name := range sortedKeys(other) {
		text := other[name]
		if _, typed := a.values[name]; typed {
			return fmt.Errorf("rendering definitions: %s has argument %q both typed and in Other", a.owner, name)
		}
		if !json.Valid([]byte(text)) {
			return fmt.Errorf("rendering definitions: %s has argument %q whose value is not JSON: %q", a.owner, name, text)
		}
		a.values[name] = json.RawMessage(text)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// BindingTable renders t's bindings as a plain text table with the columns
// SOURCE, DESTINATION, TYPE and ROUTING KEY, one row per binding in t's order,
// columns aligned with spaces and no trailing blanks. A field that is empty or
// holds blanks or control characters is shown Go-quoted, so that every row
// reads back unambiguously.
func BindingTable(t Topology) string {
	rows := [][]string{{"SOURCE", "DESTINATION", "TYPE", "ROUTING KEY"}}
	for _, b := range t.Bindings {
		rows = append(rows, []string{
			tableField(b.Source), tableField(b.Destination), tableField(string(b.DestinationType)), tableField(b.RoutingKey),
		})
	}
	return alignColumns(rows)
}

// tableField quotes what would otherwise be invisible or split a column.
func tableField(s string) string {
	if s == "" || strings.HasPrefix(s, `"`) || strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsPrint(r)
	}) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// alignColumns pads every cell but the last of each row to its column's
// width plus two spaces, counting runes.
func alignColumns(rows [][]string) string {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Mermaid renders t as a Mermaid sequence diagram in the spirit of the
// design's original drawing: participants from the ingest down the level
// queues to out and the parking lot, a dotted arrow per binding labelled
// with its key, and solid "no match" and "expired" arrows to alternate and
// dead-letter exchanges. DESIGN.md ("The diagram") gives the order of
// participants in each radix.
func Mermaid(t Topology) string {
	d := newDiagram(t)
	var bindingArrows, alternateArrows, expiryArrows []arrow
	for _, b := range t.Bindings {
		bindingArrows = append(bindingArrows, arrow{
			from: d.participant(b.Source, DestinationExchange), to: d.participant(b.Destination, b.DestinationType),
			style: "-->>", label: mermaidText(mermaidRoutingKey(b.RoutingKey)),
		})
	}
	for _, x := range t.Exchanges {
		if x.Arguments.AlternateExchange == "" {
			continue
		}
		alternateArrows = append(alternateArrows, arrow{
			from: d.participant(x.Name, DestinationExchange), to: d.participant(x.Arguments.AlternateExchange, DestinationExchange),
			style: "->>", label: "no match",
		})
	}
	for _, q := range t.Queues {
		if q.Arguments.DeadLetterExchange == "" {
			continue
		}
		from, to := d.participant(q.Name, DestinationQueue), d.participant(q.Arguments.DeadLetterExchange, DestinationExchange)
		if from != to {
			expiryArrows = append(expiryArrows, arrow{from: from, to: to, style: "->>", label: "expired"})
		}
	}

	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	if d.hasSet {
		fmt.Fprintf(&b, "    title %s\n", mermaidText(fmt.Sprintf("%s in vhost %s", string(d.names), t.VHost)))
	}
	for _, p := range d.ordered() {
		fmt.Fprintf(&b, "    participant %s as %s\n", p.id, mermaidText(p.label))
	}
	// Arrows leave the participants in the order a message meets them,
	// so the highest level comes first, as in the original drawing.
	for _, arrows := range [][]arrow{bindingArrows, alternateArrows, expiryArrows} {
		sort.SliceStable(arrows, func(i, j int) bool { return arrows[i].from.before(arrows[j].from) })
		for _, a := range arrows {
			fmt.Fprintf(&b, "    %s %s %s: %s\n", a.from.id, a.style, a.to.id, a.label)
		}
	}
	return b.String()
}

// arrow is one message line of the diagram; label is already escaped.
type arrow struct {
	from, to     *participant
	style, label string
}

// mermaidRoutingKey shows the empty routing key (a fanout binding's) as "".
func mermaidRoutingKey(key string) string {
	if key == "" {
		return `""`
	}
	return key
}

// mermaidText writes s so that Mermaid shows it as is: characters that
// Mermaid's sequence diagram syntax reads as punctuation (# starts an entity,
// ; ends a statement, : starts a message, < > " & % and control characters
// may be taken for markup or break the line) become entity codes like #35;.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`#;:"<>&%`, r) || unicode.IsControl(r) {
			fmt.Fprintf(&b, "#%d;", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Participant ranks: the order the diagram lists them in, left to right.
const (
	rankIngest = iota
	rankLevel
	rankOut
	rankUnroutable
	rankOther
)

type participant struct {
	id    string
	label string
	rank  int
	// For rankLevel: participants go from the highest level down, radix 2
	// first, then each level's queues from the largest digit down, then its
	// done exchange.
	radix, level, digit int
	seen                int // order of first appearance, among rankOther
}

// diagram maps object names to participants.
type diagram struct {
	names        Names
	hasSet       bool
	queues       map[string]Queue
	participants map[string]*participant // by identity, see describe()
	others       int                     // participants of rankOther so far
}

func newDiagram(t Topology) *diagram {
	d := &diagram{queues: map[string]Queue{}, participants: map[string]*participant{}}
	d.names, d.hasSet = setNames(t)
	for _, q := range t.Queues {
		d.queues[q.Name] = q
	}
	// Declare every object, so that one no binding touches is still drawn.
	for _, x := range t.Exchanges {
		d.participant(x.Name, DestinationExchange)
	}
	for _, q := range t.Queues {
		d.participant(q.Name, DestinationQueue)
	}
	return d
}

// participant returns (creating it on first use) the participant that
// stands for the exchange or queue called name.
func (d *diagram) participant(name string, kind DestinationType) *participant {
	identity, p := d.describe(name, kind)
	if existing, ok := d.participants[identity]; ok {
		return existing
	}
	if p.rank == rankOther {
		d.others++
		p.seen = d.others
		p.id = fmt.Sprintf("Object%d", p.seen)
	}
	d.participants[identity] = &p
	return &p
}

// describe says which participant name stands for, and its identity: the
// set's objects by role (a level's queue and done exchange share one), any
// other object by kind and name, since a queue and an exchange may share a name.
func (d *diagram) describe(name string, kind DestinationType) (string, participant) {
	var role objectName
	if d.hasSet {
		role = d.names.parse(name)
	}
	switch level := role.level; {
	case role.kind == kindLevel && role.radix != 2:
		id := fmt.Sprintf("R%dLevel%02dDigit%d", role.radix, level, role.digit)
		return id, participant{id: id, label: d.levelLabel(name), rank: rankLevel, radix: role.radix, level: level, digit: role.digit}
	case role.kind == kindDone && role.radix != 2:
		id := fmt.Sprintf("R%dLevel%02dDone", role.radix, level)
		return id, participant{id: id, label: d.levelLabel(name), rank: rankLevel, radix: role.radix, level: level}
	}
	switch role.kind {
	case kindIngest:
		return "ingest", participant{id: "Ingest", label: "Ingest", rank: rankIngest}
	case kindOut:
		return "out", participant{id: "Out", label: "Out", rank: rankOut}
	case kindUnroutable:
		return "unroutable", participant{id: "Unroutable", label: "Unroutable", rank: rankUnroutable}
	case kindLevel, kindDone:
		id := fmt.Sprintf("Level%02d", role.level)
		return id, participant{id: id, label: d.levelLabel(d.names.Level(role.level)), rank: rankLevel, radix: 2, level: role.level}
	}
	label := name
	if kind == DestinationExchange {
		label += " (exchange)"
	}
	return string(kind) + ":" + name, participant{label: label, rank: rankOther}
}

// levelLabel names a TTL queue (in radix 2 also its done exchange) by its
// name without the set's and its TTL: "level.03 (8s)", "r16.01.15 (4m)";
// a done exchange of another radix is just named: "r16.01.done".
func (d *diagram) levelLabel(name string) string {
	label := strings.TrimPrefix(name, string(d.names)+".")
	q, ok := d.queues[name]
	switch {
	case !ok:
		return label
	case q.Arguments.MessageTTL == 0:
		return label + " (no TTL)"
	}
	return label + " (" + humanMilliseconds(q.Arguments.MessageTTL) + ")"
}

// ordered lists the participants as the diagram declares them.
func (d *diagram) ordered() []*participant {
	list := make([]*participant, 0, len(d.participants))
	for _, p := range d.participants {
		list = append(list, p)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].before(list[j]) })
	return list
}

// before orders participants by rank, levels from the highest down, and
// other objects by first appearance.
func (p *participant) before(q *participant) bool {
	if p.rank != q.rank {
		return p.rank < q.rank
	}
	if p.radix != q.radix {
		return p.radix < q.radix
	}
	if p.level != q.level {
		return p.level > q.level
	}
	if p.digit != q.digit {
		return p.digit > q.digit
	}
	return p.seen < q.seen
}

// setNames finds the prefix of the set t holds: the one that most of its
// exchange and queue names extend with a suffix of the layout (the first
// such prefix on a tie). A topology with none of the set's objects has none.
func setNames(t Topology) (Names, bool) {
	var names []string
	for _, x := range t.Exchanges {
		names = append(names, x.Name)
	}
	for _, q := range t.Queues {
		names = append(names, q.Name)
	}
	votes := map[Names]int{}
	var best Names
	for _, name := range names {
		for i := range len(name) {
			if name[i] != '.' {
				continue
			}
			prefix := Names(name[:i])
			if prefix.parse(name).kind == kindNone {
				continue
			}
			votes[prefix]++
			if votes[prefix] > votes[best] {
				best = prefix
			}
		}
	}
	return best, votes[best] > 0
}

// humanMilliseconds shows a TTL in milliseconds as a duration: "500ms", "8s",
// "2m8s", "1h1.5s".
func humanMilliseconds(ms int64) string {
	if ms > int64(1<<63-1)/int64(time.Millisecond) {
		return strconv.FormatInt(ms, 10) + "ms"
	}
	return FormatDuration(time.Duration(ms) * time.Millisecond)
}

// FormatDuration is time.Duration's String without its zero units: "1h"
// rather than "1h0m0s", "2m500ms" rather than "2m0.5s". The result still
// parses with time.ParseDuration.
func FormatDuration(d time.Duration) string {
	if d < time.Minute {
		return d.String()
	}
	var b strings.Builder
	if hours := d / time.Hour; hours > 0 {
		fmt.Fprintf(&b, "%dh", hours)
		d %= time.Hour
	}
	if minutes := d / time.Minute; minutes > 0 {
		fmt.Fprintf(&b, "%dm", minutes)
		d %= time.Minute
	}
	if d > 0 {
		b.WriteString(d.String())
	}
	return b.String()
}
