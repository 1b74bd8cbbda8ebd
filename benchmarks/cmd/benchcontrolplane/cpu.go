package main

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// listeningPID finds the process that listens on the TCP port of endpoint,
// from /proc/net/tcp{,6} and the processes' file descriptors (reading those
// of another user's process needs root, or -broker-pid).
func listeningPID(endpoint string) (int, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0, fmt.Errorf("endpoint %q names no port", endpoint)
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		scanner := bufio.NewScanner(f)
		for scanner.Scan() {
			fields := strings.Fields(scanner.Text())
			// local_address is hex ip:port; state 0A is LISTEN; the inode is the 10th field.
			if len(fields) < 10 || fields[3] != "0A" {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
				inodes["socket:["+fields[9]+"]"] = true
			}
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("no process listens on port %d", port)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && inodes[target] {
			return strconv.Atoi(strings.Split(fd, "/")[2])
		}
	}
	return 0, fmt.Errorf("cannot tell which process listens on port %d (pass -broker-pid)", port)
}

// providerCPUWrapper replaces the provider binary in dir with a script that
// runs it under /usr/bin/time, which appends each run's user and system
// seconds to log: the provider's own CPU, apart from terraform's.
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
