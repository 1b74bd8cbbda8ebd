package topology

import (
	"regexp"
	"testing"
	"time"
)

func TestObjectNamePattern(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(Names("delay").ObjectNamePattern())
	tests := map[string]bool{
		"delay.ingest":              true,
		"delay.out":                 true,
		"delay.unroutable":          true,
		"delay.level.00":            true,
		"delay.level.31.done":       true,
		"delay.level.ingest":        false, // set "delay.level"
		"delay.out.ingest":          false, // set "delay.out"
		"delay.level.00.done.extra": false,
		"delay.level.0":             false,
		"delayed.ingest":            false,
		"xdelay.ingest":             false,
		"delay.ingestx":             false,
		"delay.r4.00.1":             true,
		"delay.r4.18.3":             true,
		"delay.r4.00.done":          true,
		"delay.r8.11.7":             true,
		"delay.r16.08.15":           true,
		"delay.r16.00.9":            true,
		"delay.r16.08.done":         true,
		"delay.r4.00.4":             false, // no digit 4 in radix 4
		"delay.r4.00.0":             false, // digit 0 has no queue
		"delay.r16.00.16":           false,
		"delay.r16.00.01":           false, // digits are not padded
		"delay.r2.00.1":             false, // radix 2 is spelled "level"
		"delay.r3.00.1":             false,
		"delay.r04.00.1":            false,
		"delay.r16.0.1":             false,
		"delay.r16.00":              false,
		"delay.r16.00.1.done":       false,
		"delay.r16.ingest":          false, // set "delay.r16"
		"delay.r16.00.ingest":       false, // set "delay.r16.00"
		"delay.level.00.1":          false,
		"delay.level":               false,
		"delay.r16":                 false,
		"delay.level.0x":            false,
		"delay.r16.a0.1":            false,
		"delay.r16.000.1":           false,
		"delay.level.00.g1":         true,
		"delay.level.31.done.g12":   true,
		"delay.r16.08.15.g2":        true,
		"delay.r4.00.done.g3":       true,
		"delay.ingest.g2":           true,
		"delay.out.g1":              true,
		"delay.unroutable.g1":       false, // every generation parks in the one parking lot
		"delay.level.00.g0":         false, // generation 0 has no suffix
		"delay.level.00.g01":        false,
		"delay.level.00.g":          false,
		"delay.level.00.gx":         false,
		"delay.level.00.g1.g2":      false,
		"delay.g1.ingest":           false, // set "delay.g1"
		"delay.g1.level.00":         false,
		"delay.level.00.g1.done":    false,
	}
	for name, want := range tests {
		if got := pattern.MatchString(name); got != want {
			t.Errorf("ObjectNamePattern matches %q = %v, want %v", name, got, want)
		}
		if got := Names("delay").parse(name); (got.kind != kindNone) != want {
			t.Errorf("parse(%q) = %+v, disagreeing with the pattern (want a match: %v)", name, got, want)
		}
	}
	// Regular-expression characters in a set's name are literal.
	if regexp.MustCompile(Names("a.b").ObjectNamePattern()).MatchString("axb.ingest") {
		t.Error(`the pattern of set "a.b" matches "axb.ingest"`)
	}
}

// TestPrefixObjectNamePattern checks the pattern of every set whose name
// starts with a prefix: it matches every object of such sets, of every
// radix and generation, and what ObjectNamePattern matches of each, but
// neither other sets' objects nor other names that start with the prefix.
func TestPrefixObjectNamePattern(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(PrefixObjectNamePattern("team-a."))
	tests := map[string]bool{
		"team-a.orders.ingest":           true,
		"team-a.orders.level.03.done":    true,
		"team-a.orders.r16.03.15.g2":     true,
		"team-a.orders.ingest.g1":        true,
		"team-a.x.y.unroutable":          true, // set "team-a.x.y"
		"team-a.orders-work":             false,
		"team-a.orders.level.00.g1.done": false,
		"team-b.orders.ingest":           false,
		"team-a.ingest":                  false, // set "team-a", not under the prefix
		"team-axorders.ingest":           false, // the dot is literal
		"xteam-a.orders.ingest":          false,
	}
	for name, want := range tests {
		if got := pattern.MatchString(name); got != want {
			t.Errorf("PrefixObjectNamePattern(\"team-a.\") matches %q = %v, want %v", name, got, want)
		}
	}
	for _, set := range []string{"team-a.orders", "team-a.x.y", "team-a.r16"} {
		for _, radix := range Radixes {
			spec := Spec{Name: set, VHost: "/", Levels: 2, Radix: radix, Resolution: time.Second}
			if radix == 256 {
				spec.Levels = 1
			}
			plan, err := Plan(spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, generation := range []int{0, 1, 12} {
				names := Names(set).Generation(generation)
				for _, name := range []string{names.Ingest(), names.Out(), names.Queue(radix, 1, radix-1), names.LevelDone(radix, 0)} {
					if !pattern.MatchString(name) {
						t.Errorf("%s does not match %s", name, pattern)
					}
				}
			}
			checkPatternMatchesPlan(t, pattern, plan)
		}
	}
	if got, want := PrefixObjectNamePattern(""), "^.*"+objectSuffixPattern; got != want {
		t.Errorf("PrefixObjectNamePattern(\"\") = %q, want %q", got, want)
	}
}

// TestObjectNamePatternEveryRadix checks that the pattern and parse know
// every object of a plan of every radix, and the kind parse gives it.
func TestObjectNamePatternEveryRadix(t *testing.T) {
	t.Parallel()
	names := Names("delay")
	pattern := regexp.MustCompile(names.ObjectNamePattern())
	for _, radix := range Radixes {
		top, err := Plan(Spec{Name: "delay", VHost: "/", Levels: 3, Radix: radix, Resolution: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range top.Exchanges {
			if !pattern.MatchString(e.Name) || names.parse(e.Name).kind == kindNone || names.parse(e.Name).kind == kindLevel {
				t.Errorf("radix %d: exchange %s: pattern %v, parse %+v", radix, e.Name, pattern.MatchString(e.Name), names.parse(e.Name))
			}
		}
		for i, q := range top.Queues[:len(top.Queues)-1] {
			want := objectName{kind: kindLevel, radix: radix, level: i / (radix - 1), digit: 1 + i%(radix-1)}
			if got := names.parse(q.Name); !pattern.MatchString(q.Name) || got != want {
				t.Errorf("radix %d: queue %s: pattern %v, parse %+v, want %+v", radix, q.Name, pattern.MatchString(q.Name), got, want)
			}
		}
	}
}

// TestGenerationNames checks the names of a later generation, and that
// generation 0's are the set's.
func TestGenerationNames(t *testing.T) {
	t.Parallel()
	names := Names("delay")
	tests := []struct{ got, want string }{
		{names.Generation(0).Queue(2, 3, 1), "delay.level.03"},
		{names.Generation(0).LevelDone(16, 3), "delay.r16.03.done"},
		{names.Generation(0).Ingest(), "delay.ingest"},
		{names.Generation(2).Queue(2, 3, 1), "delay.level.03.g2"},
		{names.Generation(2).LevelDone(2, 3), "delay.level.03.done.g2"},
		{names.Generation(12).Queue(16, 1, 15), "delay.r16.01.15.g12"},
		{names.Generation(12).LevelDone(16, 1), "delay.r16.01.done.g12"},
		{names.Generation(7).Ingest(), "delay.ingest.g7"},
		{names.Generation(7).Out(), "delay.out.g7"},
		{names.Generation(0).Out(), "delay.out"},
	}
	for _, test := range tests {
		if test.got != test.want {
			t.Errorf("got %s, want %s", test.got, test.want)
		}
	}
	for _, test := range []struct {
		name string
		want objectName
	}{
		{"delay.level.03.g2", objectName{kind: kindLevel, radix: 2, level: 3, digit: 1, generation: 2}},
		{"delay.r16.01.done.g12", objectName{kind: kindDone, radix: 16, level: 1, generation: 12}},
		{"delay.ingest.g7", objectName{kind: kindIngest, generation: 7}},
		{"delay.out.g7", objectName{kind: kindOut, generation: 7}},
	} {
		if got := names.parse(test.name); got != test.want {
			t.Errorf("parse(%q) = %+v, want %+v", test.name, got, test.want)
		}
	}
}

// TestGenerationNamesStayApart checks that no object of any generation of
// one set has the name of another set's object (neighbours chosen to
// extend each other's names and suffixes), and that parse and the pattern
// give every object to its own set only.
func TestGenerationNamesStayApart(t *testing.T) {
	t.Parallel()
	sets := []string{"delay", "delay.g1", "delay.g2", "delay.level", "delay.level.00", "delay.r16", "delay.r16.00",
		"delay.ingest", "delay.level.00.done", "delay.r16.00.15", "delay.level.00.g1"}
	owner := map[string]string{}
	for _, set := range sets {
		for generation := range 13 {
			for _, radix := range Radixes {
				top, err := Plan(Spec{Name: set, VHost: "/", Levels: 2, Radix: radix, Resolution: time.Millisecond,
					Generation: generation, FormatGeneration: generation})
				if err != nil {
					t.Fatal(err)
				}
				var objects []string
				for _, e := range top.Exchanges {
					objects = append(objects, e.Name)
				}
				for _, q := range top.Queues {
					objects = append(objects, q.Name)
				}
				for _, name := range objects {
					if other, taken := owner[name]; taken && other != set {
						t.Fatalf("%s is an object of set %s and of set %s", name, other, set)
					}
					owner[name] = set
				}
			}
		}
	}
	patterns := map[string]*regexp.Regexp{}
	for _, other := range sets {
		patterns[other] = regexp.MustCompile(Names(other).ObjectNamePattern())
	}
	for name, set := range owner {
		for _, other := range sets {
			matches := patterns[other].MatchString(name)
			parsed := Names(other).parse(name).kind != kindNone
			if want := other == set; matches != want || parsed != want {
				t.Errorf("%s (of set %s): set %s's pattern matches %v, parse knows it %v", name, set, other, matches, parsed)
			}
		}
	}
}
