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
