package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	for _, name := range []string{markdownFile, svgFile, jsonFile} {
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
	if err := renderFromJSON(filepath.Join(t.TempDir(), "missing.json"), rendered); err == nil {
		t.Error("render of a missing file succeeded")
	}
}
