package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// providerCPUWrapper wraps the provider binary in dir in /usr/bin/time, which
// appends its CPU seconds to log: the provider's own, apart from terraform's.
func providerCPUWrapper(dir, log string) error {
	binary := filepath.Join(dir, "terraform-provider-rabbitmq")
	realDir := filepath.Join(filepath.Dir(dir), "provider-measured")
	if err := os.MkdirAll(realDir, 0o755); err != nil {
		return err
	}
	measured := filepath.Join(realDir, "terraform-provider-rabbitmq")
	if err := os.Rename(binary, measured); err != nil {
		return err
	}
	script := fmt.Sprintf("#!/bin/sh\nexec /usr/bin/time -a -o %q -f '%%U %%S' %q \"$@\"\n", log, measured)
	return os.WriteFile(binary, []byte(script), 0o755)
}

// providerCPU sums and empties the log providerCPUWrapper's script writes.
func providerCPU(log string) (time.Duration, error) {
	text, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, line := range strings.Split(string(text), "\n") {
		// Other lines say how a run ended ("Command exited with non-zero status 1").
		fields := strings.Fields(line)
		if len(fields) != 2 {
			continue
		}
		user, userErr := strconv.ParseFloat(fields[0], 64)
		system, systemErr := strconv.ParseFloat(fields[1], 64)
		if userErr == nil && systemErr == nil {
			total += time.Duration((user + system) * float64(time.Second))
		}
	}
	return total, os.Remove(log)
}
