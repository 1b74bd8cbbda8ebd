package main

import (
	"syscall"
	"time"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
)

// cpuSample is a reading of the CPU time the machine (in clock ticks) and
// the broker have used, to tell how busy they were between two readings.
type cpuSample struct {
	busy, total  uint64        // all CPUs of the machine, from /proc/stat
	broker       time.Duration // user + system time of the broker's process
	ok, brokerOK bool
	self         time.Duration // user + system time of this process
}

// sampleCPU reads the machine's CPU time and, when brokerPID is not 0, the
// broker's.
func sampleCPU(brokerPID int) cpuSample {
	var s cpuSample
	s.busy, s.total, s.ok = machine.CPUTicks()
	if brokerPID != 0 {
		broker, err := machine.ProcessCPU(brokerPID)
		s.broker, s.brokerOK = broker, err == nil
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
		brokerSeconds = (later.broker - s.broker).Seconds()
	}
	return machineBusy, brokerSeconds
}
