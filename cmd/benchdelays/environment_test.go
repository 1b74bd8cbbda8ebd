package main

import (
	"testing"
	"time"
)

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

func TestIsLocal(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"amqp://guest:guest@127.0.0.1:5672/": true,
		"amqp://localhost/":                  true,
		"amqps://[::1]:5671/":                true,
		"amqp://rabbit.example.com/":         false,
		"::not a url":                        false,
	} {
		if got := isLocal(url); got != want {
			t.Errorf("isLocal(%q) = %t, want %t", url, got, want)
		}
	}
}
