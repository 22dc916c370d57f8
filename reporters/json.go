package reporters

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/herdbench/herdbench/experiment"
)

// JSON writes the report as indented JSON.
func JSON(w io.Writer, rep *experiment.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteJSONFile writes the report to path, creating its directory.
func WriteJSONFile(path string, rep *experiment.Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := JSON(f, rep); err != nil {
		f.Close()
		return fmt.Errorf("results %s: %w", path, err)
	}
	return f.Close()
}

// ReadJSONFile reads a results file that JSON or WriteJSONFile wrote, of
// this version's schema or v1's. A v1 file keeps its schema and its
// verdicts as written (degraded among them): they were judged by v1's
// rule, and no word of it is read as v2's.
func ReadJSONFile(path string) (*experiment.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var rep experiment.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("results %s: not a results file: %w", path, err)
	}
	if rep.Schema != experiment.Schema && rep.Schema != experiment.SchemaV1 {
		return nil, fmt.Errorf("results %s: schema %q (accepted: %s, as herdbench stampede writes it, or %s, read with its own verdict words)",
			path, rep.Schema, experiment.Schema, experiment.SchemaV1)
	}
	return &rep, nil
}
