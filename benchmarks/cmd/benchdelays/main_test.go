package main

import "testing"

func TestExitCode(t *testing.T) {
	t.Parallel()
	clean := fixtureReport()
	clean.Trials = clean.Trials[:6]
	if got := exitCode(clean); got != 0 {
		t.Errorf("exitCode of clean main trials = %d, want 0", got)
	}
	// A search step beyond the broker's pace may lose messages; that is its answer, not a failure.
	if got := exitCode(fixtureReport()); got != 0 {
		t.Errorf("exitCode with a lossy search step = %d, want 0", got)
	}
	lostInMain := fixtureReport()
	lostInMain.Trials[2].Measurement.Lost = 1
	if got := exitCode(lostInMain); got != 1 {
		t.Errorf("exitCode with a message lost in a main trial = %d, want 1", got)
	}
	earlyInSearch := fixtureReport()
	earlyInSearch.Trials[6].Measurement.Early = 1
	if got := exitCode(earlyInSearch); got != 1 {
		t.Errorf("exitCode with an early message in a search step = %d, want 1", got)
	}
}

// TestRenderFromJSON writes a report, renders it again from its JSON alone,
// and checks that the Markdown and the plot come out the same.
