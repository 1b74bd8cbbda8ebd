package main

import (
	"syscall"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
)

// cpuSample is a reading of the CPU time of the machine (in clock ticks) and of
// the broker's processes, together and each, to compare with a later one.
type cpuSample struct {
	busy, total  uint64        // all CPUs of the machine, from /proc/stat
	broker       time.Duration // user + system time of the broker's processes
	nodes        []time.Duration
	threads      []map[string]time.Duration // each node's threads, by kind
	ok, brokerOK bool
	self         time.Duration // user + system time of this process
}

// sampleCPU reads the machine's CPU time and the broker's, that of the
// processes pids (none: the broker is not on this machine).
func sampleCPU(pids []int) cpuSample {
	var s cpuSample
	s.busy, s.total, s.ok = machine.CPUTicks()
	s.brokerOK = len(pids) > 0
	for _, pid := range pids {
		node, err := machine.ProcessCPU(pid)
		s.broker += node
		s.nodes = append(s.nodes, node)
		s.brokerOK = s.brokerOK && err == nil
		threads, _ := machine.ThreadCPU(pid) // nil, and no figures by kind, when unreadable
		s.threads = append(s.threads, threads)
	}
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err == nil {
		s.self = time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	}
	return s
}

// nodeSeconds is the CPU seconds each of the broker's processes used from
// s to later, in the order sampled; nil when unknown.
func (s cpuSample) nodeSeconds(later cpuSample) []float64 {
	if !s.brokerOK || !later.brokerOK || len(s.nodes) != len(later.nodes) {
		return nil
	}
	seconds := make([]float64, len(s.nodes))
	for i := range s.nodes {
		seconds[i] = (later.nodes[i] - s.nodes[i]).Seconds()
	}
	return seconds
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
		brokerSeconds = (later.broker - s.broker).Seconds()
	}
	return machineBusy, brokerSeconds
}

// nodeThreadSeconds is the CPU seconds of each kind of each node's threads from
// s to later, in the order sampled; nil when unknown.
func (s cpuSample) nodeThreadSeconds(later cpuSample) []map[string]float64 {
	if len(s.threads) != len(later.threads) || len(s.threads) == 0 {
		return nil
	}
	seconds := make([]map[string]float64, len(s.threads))
	for i := range s.threads {
		if s.threads[i] == nil || later.threads[i] == nil {
			return nil
		}
		seconds[i] = map[string]float64{}
		for kind, after := range later.threads[i] {
			seconds[i][kind] = (after - s.threads[i][kind]).Seconds()
		}
	}
	return seconds
}
