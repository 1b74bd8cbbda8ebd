package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// The output files, in -out.
const (
	markdownFile = "delays.md"
	svgFile      = "delays.svg"
	ratesFile    = "rates.svg"
	jsonFile     = "delays.json"
)

// renderFromJSON writes the report in jsonPath again into dir, with the
// provenance stored with the figures, so the text can change without measuring.
func renderFromJSON(jsonPath, dir string) error {
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		return err
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %w", jsonPath, err)
	}
	// The report names the run's commit and machine, not the renderer's.
	if r.Environment.Provenance.Commit == "" {
		return fmt.Errorf("%s has no provenance (an older benchdelays wrote it): measure again to get a report that names its commit", jsonPath)
	}
	return writeReport(dir, r)
}

// writeReport writes delays.md, delays.json and the plots there are
// (delays.svg, rates.svg) into dir, unless dir is empty.
func writeReport(dir string, r report) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{jsonFile: append(data, '\n')}
	plotName := func(name, plot string) string {
		if plot == "" {
			return ""
		}
		files[name] = []byte(plot)
		return name
	}
	files[markdownFile] = []byte(markdown(r, plotName(svgFile, svgPlot(r)), plotName(ratesFile, ratesPlot(r))))
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}
