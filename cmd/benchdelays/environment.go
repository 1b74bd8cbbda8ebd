package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// loadAverage is the 1-minute load average, or -1 when unknown.
func loadAverage() float64 {
	text, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	fields := strings.Fields(string(text))
	if len(fields) == 0 {
		return -1
	}
	load, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return -1
	}
	return load
}

// brokerVersions asks the management API's /api/overview for the RabbitMQ
// and Erlang versions.
func brokerVersions(ctx context.Context, endpoint, username, password string) (rabbitmq, erlang string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+"/api/overview", nil)
	if err != nil {
		return "", "", err
	}
	req.SetBasicAuth(username, password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("ask the broker's version: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("ask the broker's version: GET /api/overview answered %s", resp.Status)
	}
	var overview struct {
		RabbitMQ string `json:"rabbitmq_version"`
		Erlang   string `json:"erlang_version"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&overview); err != nil {
		return "", "", fmt.Errorf("read the broker's version: %w", err)
	}
	return overview.RabbitMQ, overview.Erlang, nil
}

// cpuSample is a reading of the CPU time the machine and the broker have
// used, in clock ticks, to tell how busy they were between two readings.
type cpuSample struct {
	busy, total  uint64 // all CPUs of the machine, from /proc/stat
	broker       uint64 // user + system time of the broker's process
	ok, brokerOK bool
	self         time.Duration // user + system time of this process
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// sampleCPU reads /proc/stat and, when brokerPID is not 0, the broker's
// /proc/<pid>/stat.
func sampleCPU(brokerPID int) cpuSample {
	var s cpuSample
	if text, err := os.ReadFile("/proc/stat"); err == nil {
		s.busy, s.total, s.ok = parseProcStat(string(text))
	}
	if brokerPID != 0 {
		if text, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", brokerPID)); err == nil {
			s.broker, s.brokerOK = parsePidStat(string(text))
		}
	}
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err == nil {
		s.self = time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	}
	return s
}

// selfSeconds is the CPU time this process used from s to later.
func (s cpuSample) selfSeconds(later cpuSample) float64 { return (later.self - s.self).Seconds() }

// cpuUse is how busy the machine's CPUs were, in percent, and how many CPU
// seconds the broker used from s to later; -1 for what is unknown.
func (s cpuSample) cpuUse(later cpuSample) (machineBusy, brokerSeconds float64) {
	machineBusy, brokerSeconds = -1, -1
	if s.ok && later.ok && later.total > s.total {
		machineBusy = 100 * float64(later.busy-s.busy) / float64(later.total-s.total)
	}
	if s.brokerOK && later.brokerOK && later.broker >= s.broker {
		brokerSeconds = float64(later.broker-s.broker) / clockTicks
	}
	return machineBusy, brokerSeconds
}

// parseProcStat returns the busy and total ticks of the "cpu" line of
// /proc/stat: user nice system idle iowait irq softirq steal …; idle and
// iowait are not busy.
func parseProcStat(text string) (busy, total uint64, ok bool) {
	for line := range strings.Lines(text) {
		fields := strings.Fields(line)
		if len(fields) < 5 || fields[0] != "cpu" {
			continue
		}
		// guest and guest_nice (9th and 10th) are already counted in user and nice.
		for i, field := range fields[1:min(len(fields), 9)] {
			ticks, err := strconv.ParseUint(field, 10, 64)
			if err != nil {
				return 0, 0, false
			}
			total += ticks
			if i != 3 && i != 4 {
				busy += ticks
			}
		}
		return busy, total, true
	}
	return 0, 0, false
}

// parsePidStat returns utime + stime of a /proc/<pid>/stat line. The
// command, in parentheses, may hold spaces, so fields count from its end.
func parsePidStat(text string) (ticks uint64, ok bool) {
	end := strings.LastIndexByte(text, ')')
	if end < 0 {
		return 0, false
	}
	fields := strings.Fields(text[end+1:])
	// After the command: state(0) ppid … utime is field 14 of the line, 11 here; stime 12.
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return utime + stime, true
}

// listeningPID finds the process on this machine that listens on TCP port,
// through /proc/net/tcp{,6} and the sockets in /proc/<pid>/fd; 0 when none
// is found (another machine's broker, or no permission to look).
func listeningPID(port int) int {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		text, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for inode := range listeningInodes(string(text), port) {
			inodes[inode] = true
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	processes, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, p := range processes {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if inode, ok := strings.CutPrefix(target, "socket:["); err == nil && ok && inodes[strings.TrimSuffix(inode, "]")] {
				return pid
			}
		}
	}
	return 0
}

// listeningInodes returns the socket inodes of a /proc/net/tcp table that
// listen (state 0A) on port.
func listeningInodes(table string, port int) map[string]bool {
	inodes := map[string]bool{}
	wantPort := fmt.Sprintf(":%04X", port)
	for line := range strings.Lines(table) {
		fields := strings.Fields(line)
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(fields) < 10 || fields[3] != "0A" || !strings.HasSuffix(fields[1], wantPort) {
			continue
		}
		inodes[fields[9]] = true
	}
	return inodes
}
