package topology

import (
	"regexp"
	"testing"
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
	}
	for name, want := range tests {
		if got := pattern.MatchString(name); got != want {
			t.Errorf("ObjectNamePattern matches %q = %v, want %v", name, got, want)
		}
		if kind, _ := Names("delay").parse(name); (kind != kindNone) != want {
			t.Errorf("parse(%q) = %v, disagreeing with the pattern (want a match: %v)", name, kind, want)
		}
	}
	// Regular-expression characters in a set's name are literal.
	if regexp.MustCompile(Names("a.b").ObjectNamePattern()).MatchString("axb.ingest") {
		t.Error(`the pattern of set "a.b" matches "axb.ingest"`)
	}
}
