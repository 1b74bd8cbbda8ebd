package machine

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// LoadAverage is the machine's 1-minute load average, or -1 when unknown.
func LoadAverage() float64 {
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

// ProcessCPU is the CPU time (user + system) process pid has used so far.
func ProcessCPU(pid int) (time.Duration, error) {
	text, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, ok := parseProcessStat(string(text))
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// parseProcessStat returns utime + stime, in clock ticks, of a
// /proc/<pid>/stat line. The command, in parentheses, may hold spaces, so
// fields count from its end.
func parseProcessStat(text string) (ticks uint64, ok bool) {
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

// CPUTicks is how many clock ticks all the machine's CPUs have spent so
// far, busy and in total, from /proc/stat; ok is false when unknown. Two
// readings tell how busy the machine was between them.
func CPUTicks() (busy, total uint64, ok bool) {
	text, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseProcStat(string(text))
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

// ResidentBytes is process pid's resident memory, VmRSS of
// /proc/<pid>/status, or -1 when unknown.
func ResidentBytes(pid int) int64 {
	return residentBytes(fmt.Sprintf("/proc/%d/status", pid))
}

// residentBytes is the VmRSS of a /proc status file in bytes, or -1.
func residentBytes(path string) int64 {
	kib, ok := kibibytes(field(path, "VmRSS"))
	if !ok {
		return -1
	}
	return kib << 10
}

// ThreadCPU is the CPU time (user + system) of a process's threads, summed
// by [ThreadKind], so that an Erlang VM's schedulers erts_sched_1 and
// erts_sched_2 count as erts_sched. Threads that ended are not counted.
func ThreadCPU(pid int) (map[string]time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	byKind := map[string]time.Duration{}
	for _, task := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s", pid, task.Name())
		name, err1 := os.ReadFile(dir + "/comm")
		stat, err2 := os.ReadFile(dir + "/stat")
		if err1 != nil || err2 != nil {
			continue // the thread ended meanwhile
		}
		ticks, ok := parseProcessStat(string(stat))
		if !ok {
			return nil, fmt.Errorf("%s/stat: unexpected format", dir)
		}
		byKind[ThreadKind(strings.TrimSpace(string(name)))] += time.Duration(ticks) * time.Second / clockTicks
	}
	return byKind, nil
}

// olderThreadKinds are the names Erlang/OTP before 26 gives its threads
// (RabbitMQ 3.10's Erlang 25: 1_scheduler, 3_dirty_io_sche, truncated by
// Linux), by the prefix that tells their kind.
var olderThreadKinds = []struct{ prefix, kind string }{
	{"scheduler", "erts_sched"}, {"dirty_io_sch", "erts_dios"}, {"dirty_cpu_sch", "erts_dcpus"},
	{"aux", "erts_aux"}, {"poller", "erts_poll"},
}

// ThreadKind is the kind of a thread, from its name, whichever Erlang named
// it: the name without a trailing _N (erts_sched_2 is erts_sched), or for
// Erlang before 26 the kind its name's prefix tells (1_scheduler is
// erts_sched too); any other name is its own kind. A kind is its own kind,
// so results that recorded older names can be grouped again.
func ThreadKind(name string) string {
	if number, rest, ok := strings.Cut(name, "_"); ok {
		if _, err := strconv.Atoi(number); err == nil {
			for _, k := range olderThreadKinds {
				if strings.HasPrefix(rest, k.prefix) {
					return k.kind
				}
			}
		}
	}
	if i := strings.LastIndexByte(name, '_'); i > 0 && i < len(name)-1 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}
