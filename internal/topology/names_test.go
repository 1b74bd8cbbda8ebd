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
