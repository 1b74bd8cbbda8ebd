package main

import (
	"testing"
	"time"
)

func TestCPUUse(t *testing.T) {
	t.Parallel()
	before := cpuSample{busy: 100, total: 1000, broker: 500 * time.Millisecond, ok: true, brokerOK: true}
	after := cpuSample{busy: 400, total: 1500, broker: 2500 * time.Millisecond, ok: true, brokerOK: true}
	busy, broker := before.cpuUse(after)
	if busy != 60 || broker != 2 {
		t.Errorf("cpuUse = %g %%, %g s; want 60 %%, 2 s", busy, broker)
	}
	if busy, broker := (cpuSample{}).cpuUse(after); busy != -1 || broker != -1 {
		t.Errorf("cpuUse from an unknown sample = %g, %g; want -1, -1", busy, broker)
	}
}
