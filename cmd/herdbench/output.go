package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/reporters"
	"github.com/herdbench/herdbench/workers"
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
		onStdout := func(o output) bool { return o.path == "" && o.format != vegetaFormat } // vegeta's own check: it needs a file
		if i := slices.IndexFunc(outs, onStdout); i >= 0 && onStdout(output{format, path}) {
			errs = append(errs, &herd.FieldError{Field: "output", Elem: s,
				Msg: fmt.Sprintf("%s on stdout beside %s, which is there already (accepted: one output on stdout, the others as FORMAT=FILE)", format, outs[i].format)})
			continue
		}
		if format == vegetaFormat && path != "" && slices.ContainsFunc(outs, func(o output) bool { return o.format == vegetaFormat && o.path != "" }) {
			errs = append(errs, &herd.FieldError{Field: "output", Elem: s, Msg: "a second vegeta output: a run writes its requests to one (accepted: one vegeta=FILE)"})
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

// outputFiles lists the files outs write; byWorkers: vegeta's results
// are the workers' files (workers.VegetaFile).
func outputFiles(outs []output, byWorkers bool) []string {
	var files []string
	for _, o := range outs {
		switch {
		case o.format == vegetaFormat && byWorkers:
			files = append(files, workers.VegetaFile(o.path, 0)+" and on (each worker's own, under its working directory)")
		case o.path != "":
			files = append(files, o.path)
		}
	}
	return files
}

// vegetaFormat is -o vegeta=FILE: every request of the run as vegeta's
// results (reporters.VegetaResults), written while it runs.
const vegetaFormat = "vegeta"

// runFormats are the formats of a command that runs an experiment: the
// reports, and vegeta's results.
func runFormats() []string { return append(reporters.FormatNames(), vegetaFormat) }

// checkVegeta refuses -o vegeta without a file.
func checkVegeta(outs []output) herd.FieldErrors {
	var errs herd.FieldErrors
	for _, o := range outs {
		if o.format == vegetaFormat && o.path == "" {
			errs.Add("output", "vegeta: needs a file, vegeta=FILE (vegeta's results are binary; stdout has the table)")
		}
	}
	return errs
}

// vegetaFile is the file of -o vegeta=FILE; "": none.
func vegetaFile(outs []output) string {
	for _, o := range outs {
		if o.format == vegetaFormat {
			return o.path
		}
	}
	return ""
}

// vegetaResults opens the file of -o vegeta=FILE, if any, as an observer
// of the run; done flushes and closes it. No such output, or workers
// writing their own: nil.
func vegetaResults(outs []output, byWorkers bool) (obs *reporters.VegetaResults, done func() error, err error) {
	for _, o := range outs {
		if o.format != vegetaFormat || byWorkers {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(o.path), 0o755); err != nil {
			return nil, nil, fmt.Errorf("-o vegeta=%s: %w", o.path, err)
		}
		f, err := os.Create(o.path)
		if err != nil {
			return nil, nil, fmt.Errorf("-o vegeta=%s: %w", o.path, err)
		}
		obs = reporters.NewVegetaResults(f)
		return obs, func() error {
			err := obs.Flush()
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("-o vegeta=%s: %w", o.path, err)
			}
			return nil
		}, nil
	}
	return nil, func() error { return nil }, nil
}

// writeOutputs renders reps once per output (vegeta's results are written
// while the run goes).
func writeOutputs(stdout io.Writer, outs []output, reps []*experiment.Report) error {
	outs = slices.DeleteFunc(slices.Clone(outs), func(o output) bool { return o.format == vegetaFormat })
	return renderEach(stdout, outs, func(w io.Writer, format string) error { return reporters.Render(w, format, reps) })
}

// renderEach renders once per output, with render, to stdout or its file.
func renderEach(stdout io.Writer, outs []output, render func(w io.Writer, format string) error) error {
	for _, o := range outs {
		if o.path == "" {
			if err := render(stdout, o.format); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(o.path, func(w io.Writer) error { return render(w, o.format) }); err != nil {
			return fmt.Errorf("-o %s=%s: %w", o.format, o.path, err)
		}
	}
	return nil
}
