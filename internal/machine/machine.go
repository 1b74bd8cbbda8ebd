// Package machine describes the computer a benchmark ran on, in one line
// for its report: figures mean little without it.
package machine

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Describe returns, for example, "2 CPUs (Intel(R) Xeon(R) …), 24.0 GiB RAM,
// linux/amd64, go1.26.8". Parts that cannot be read are left out.
func Describe() string {
	parts := []string{fmt.Sprintf("%d CPUs", runtime.NumCPU())}
	if model := cpuModel("/proc/cpuinfo"); model != "" {
		parts[0] += " (" + model + ")"
	}
	if kib := memTotalKiB("/proc/meminfo"); kib > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB RAM", float64(kib)/(1<<20)))
	}
	parts = append(parts, runtime.GOOS+"/"+runtime.GOARCH, runtime.Version())
	return strings.Join(parts, ", ")
}

// cpuModel is the first "model name" of a /proc/cpuinfo file.
func cpuModel(path string) string {
	return field(path, "model name")
}

// memTotalKiB is MemTotal of a /proc/meminfo file, in KiB.
func memTotalKiB(path string) int64 {
	value := field(path, "MemTotal")
	kib, err := strconv.ParseInt(strings.TrimSuffix(value, " kB"), 10, 64)
	if err != nil {
		return 0
	}
	return kib
}

// field returns the value of the first "name: value" line of a file, or
// "" if there is none.
func field(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ":")
		if ok && strings.TrimSpace(key) == name {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
