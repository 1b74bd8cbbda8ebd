package machine

import (
	"os"
	"testing"
)

func TestParseProcessStat(t *testing.T) {
	t.Parallel()
	// The command holds a space and a parenthesis; utime 1234, stime 56.
	line := "29395 (beam.smp (x)) S 1 29395 29395 0 -1 4194560 1000 0 0 0 1234 56 0 0 20 0 60 0 100 3000000000 20000 18446744073709551615\n"
	if ticks, ok := parseProcessStat(line); !ok || ticks != 1290 {
		t.Errorf("parseProcessStat = %d, %v; want 1290, true", ticks, ok)
	}
	if _, ok := parseProcessStat("garbage"); ok {
		t.Error("parseProcessStat of garbage succeeded")
	}
}

func TestProcessCPUOfThisProcess(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := ProcessCPU(os.Getpid()); err != nil {
		t.Errorf("ProcessCPU(self) error = %v", err)
	}
	if load := LoadAverage(); load < 0 {
		t.Errorf("LoadAverage() = %v, want a load", load)
	}
}
