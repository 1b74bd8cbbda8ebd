package machine

import (
	"os"
	"path/filepath"
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

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	text := "cpu  100 5 50 800 40 3 2 0 7 0\ncpu0 50 2 25 400 20 1 1 0 0 0\nintr 12345\n"
	busy, total, ok := parseProcStat(text)
	// user nice system irq softirq steal = 100+5+50+3+2+0; idle and iowait 800+40; guest already in user.
	if !ok || busy != 160 || total != 1000 {
		t.Errorf("parseProcStat = %d, %d, %v; want 160, 1000, true", busy, total, ok)
	}
	if _, _, ok := parseProcStat("intr 1\n"); ok {
		t.Error("parseProcStat without a cpu line succeeded")
	}
}

func TestParseVmRSS(t *testing.T) {
	t.Parallel()
	parseVmRSS := func(status string) int64 {
		path := filepath.Join(t.TempDir(), "status")
		writeFile(t, path, status)
		return residentBytes(path)
	}
	status := "Name:\tbeam.smp\nVmPeak:\t 4000000 kB\nVmRSS:\t  123456 kB\nThreads:\t40\n"
	if got := parseVmRSS(status); got != 123456*1024 {
		t.Errorf("parseVmRSS = %d, want %d", got, 123456*1024)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\n", "VmRSS:\tmany kB\n"} {
		if got := parseVmRSS(bad); got != -1 {
			t.Errorf("parseVmRSS(%q) = %d, want -1", bad, got)
		}
	}
}
