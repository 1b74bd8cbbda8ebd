package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRenderFromJSON(t *testing.T) {
	t.Parallel()
	measured, rendered := t.TempDir(), t.TempDir()
	if err := writeReport(measured, fixtureReport()); err != nil {
		t.Fatal(err)
	}
	if err := renderFromJSON(filepath.Join(measured, jsonFile), rendered); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{markdownFile, svgFile, ratesFile, jsonFile} {
		want, err := os.ReadFile(filepath.Join(measured, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(rendered, name))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s rendered from JSON differs (-measured +rendered):\n%s", name, diff)
		}
	}
	var r report
	data, _ := os.ReadFile(filepath.Join(measured, jsonFile))
	if err := json.Unmarshal(data, &r); err != nil || r.Trials[0].Measurement.ByHops[2].P99 != fixtureReport().Trials[0].Measurement.ByHops[2].P99 {
		t.Errorf("the JSON does not keep the per-hop figures: %v", err)
	}
	// The provenance is the run's, stored in the JSON, not the renderer's.
	md, err := os.ReadFile(filepath.Join(rendered, markdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := fixtureReport().Environment.Provenance.Markdown(); !strings.Contains(string(md), want) {
		t.Errorf("the rendered %s lacks the stored provenance %q", markdownFile, want)
	}
	if err := renderFromJSON(filepath.Join(t.TempDir(), "missing.json"), rendered); err == nil {
		t.Error("render of a missing file succeeded")
	}
}

// TestRenderFromJSONWithoutProvenance: a delays.json written before the
// provenance was recorded does not become a report without a commit.
func TestRenderFromJSONWithoutProvenance(t *testing.T) {
	t.Parallel()
	old := filepath.Join(t.TempDir(), jsonFile)
	content := `{"environment": {"date": "2026-11-21T08:16:24Z", "command": "benchdelays -out benchmarks", "machine": "2 CPUs",
		"rabbitmq_version": "3.10.8", "erlang_version": "25.2.3", "broker_pid": 1, "broker_idle_cpu_percent": 1}, "settings": {}, "trials": []}`
	if err := os.WriteFile(old, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	err := renderFromJSON(old, out)
	if err == nil || !strings.Contains(err.Error(), "no provenance") {
		t.Errorf("render of a JSON without provenance: %v, want an error that says so", err)
	}
	if _, statErr := os.Stat(filepath.Join(out, markdownFile)); statErr == nil {
		t.Errorf("render of a JSON without provenance wrote %s", markdownFile)
	}
}
