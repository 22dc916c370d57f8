package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/reporters"
)

// output is one -o: a format, to stdout or a file.
type output struct {
	format string
	path   string // "": stdout
}

// parseOutputs reads -o FORMAT or -o FORMAT=FILE (and --json FILE, the same
// as -o json=FILE), FORMAT one of formats.
func parseOutputs(specs []string, jsonFile string, formats []string) ([]output, error) {
	var outs []output
	var errs herd.FieldErrors
	for _, s := range specs {
		format, path, hasPath := strings.Cut(s, "=")
		if !slices.Contains(formats, format) {
			errs = append(errs, &herd.FieldError{Field: "output", Elem: s, Msg: fmt.Sprintf("unknown format %q (accepted: %s, each as FORMAT or FORMAT=FILE)", format, strings.Join(formats, ", "))})
			continue
		}
		if hasPath && path == "" {
			errs = append(errs, &herd.FieldError{Field: "output", Elem: s, Msg: "no file after '=' (accepted: FORMAT for stdout, or FORMAT=FILE)"})
			continue
		}
		outs = append(outs, output{format: format, path: path})
	}
	if jsonFile != "" {
		outs = append(outs, output{format: "json", path: jsonFile})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return outs, nil
}

// withTable adds the table on stdout when no output goes there: the
// terminal always gets a report.
func withTable(outs []output) []output {
	if slices.ContainsFunc(outs, func(o output) bool { return o.path == "" }) {
		return outs
	}
	return append([]output{{format: "table"}}, outs...)
}

// tableOnStdout says whether the table is what stdout shows.
func tableOnStdout(outs []output) bool {
	return slices.Contains(outs, output{format: "table"})
}

// outputFiles lists the files outs write.
func outputFiles(outs []output) []string {
	var files []string
	for _, o := range outs {
		if o.path != "" {
			files = append(files, o.path)
		}
	}
	return files
}

// writeOutputs renders reps once per output.
func writeOutputs(stdout io.Writer, outs []output, reps []*experiment.Report) error {
	for _, o := range outs {
		if o.path == "" {
			if err := reporters.Render(stdout, o.format, reps); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(o.path, func(w io.Writer) error { return reporters.Render(w, o.format, reps) }); err != nil {
			return fmt.Errorf("-o %s=%s: %w", o.format, o.path, err)
		}
	}
	return nil
}
