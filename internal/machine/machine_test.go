package machine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFields(t *testing.T) {
	dir := t.TempDir()
	cpuinfo := filepath.Join(dir, "cpuinfo")
	meminfo := filepath.Join(dir, "meminfo")
	writeFile(t, cpuinfo, "processor\t: 0\nmodel name\t: Example CPU @ 2.00GHz\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: Example CPU @ 2.00GHz\n")
	writeFile(t, meminfo, "MemTotal:       25165824 kB\nMemFree:         1000 kB\n")
	if got, want := cpuModel(cpuinfo), "Example CPU @ 2.00GHz"; got != want {
		t.Errorf("cpuModel = %q, want %q", got, want)
	}
	if got, want := memTotalKiB(meminfo), int64(25165824); got != want {
		t.Errorf("memTotalKiB = %d, want %d", got, want)
	}
	if got := cpuModel(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("cpuModel of a missing file = %q, want empty", got)
	}
	if got := memTotalKiB(cpuinfo); got != 0 {
		t.Errorf("memTotalKiB of a file without MemTotal = %d, want 0", got)
	}
}

func TestDescribe(t *testing.T) {
	got := Describe()
	for _, want := range []string{"CPUs", "go1."} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe() = %q, want it to contain %q", got, want)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
