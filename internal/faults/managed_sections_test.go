package faults

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestManagedSections: a results file's sections are found by version
// with their markers, so a run replaces its own and keeps the others;
// a section without its end marker is not one.
func TestManagedSections(t *testing.T) {
	t.Parallel()
	section := func(version, body string) string {
		return fmt.Sprintf(managedSectionBegin, version) + body + fmt.Sprintf(managedSectionEnd, version)
	}
	text := managedIntro + "\n" + section("4.0", "## RabbitMQ 4.0.5\n") + "\n" + section("4.3", "## RabbitMQ 4.3.6\n| a | b |\n") +
		"\n" + fmt.Sprintf(managedSectionBegin, "5.0") + "cut off\n"
	want := map[string]string{"4.0": section("4.0", "## RabbitMQ 4.0.5\n"), "4.3": section("4.3", "## RabbitMQ 4.3.6\n| a | b |\n")}
	if diff := cmp.Diff(want, managedSections(text)); diff != "" {
		t.Errorf("managedSections mismatch (-want +got):\n%s", diff)
	}
	if got := managedSections(""); len(got) != 0 {
		t.Errorf("managedSections of no file = %v, want none", got)
	}
}
