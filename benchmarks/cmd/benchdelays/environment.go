package main

import (
	"syscall"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
)

// cpuSample is a reading of the CPU time the machine (in clock ticks) and
// the broker have used, to tell how busy they were between two readings.
// The broker is every process of brokerPIDs: one node's, or a cluster's
// nodes on this machine, each also read on its own.
type cpuSample struct {
	busy, total  uint64        // all CPUs of the machine, from /proc/stat
	broker       time.Duration // user + system time of the broker's processes
	nodes        []time.Duration
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
