package main

import (
	"fmt"
	"path/filepath"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
)

// pathProblems are the places a run would write that it cannot, found
// before it starts rather than after its arms have run: --results-dir and
// --state-dir naming a file (or under one), an output file that is a
// directory (or under a file), and two outputs to one file.
func pathProblems(opts stampedeOptions, outs []output) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, d := range []struct{ field, path string }{{"results_dir", opts.ResultsDir}, {"state_dir", opts.StateDir}} {
		if msg := cli.NotADir(d.path); msg != "" {
			bad.Add(d.field, "%s (accepted: a directory, or a path where one can be made)", msg)
		}
	}
	return append(bad, outputPathProblems(outs)...)
}

// outputPathProblems are the outputs that cannot be written: a file that
// is a directory (or under a file), two outputs to one file.
func outputPathProblems(outs []output) herd.FieldErrors {
	var bad herd.FieldErrors
	written := map[string]output{}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if msg := cli.NotAFile(o.path); msg != "" {
			bad = append(bad, &herd.FieldError{Field: "output", Elem: o.format + "=" + o.path,
				Msg: msg + " (accepted: a file's path, made with its directories if need be)"})
			continue
		}
		key := filepath.Clean(o.path)
		if first, ok := written[key]; ok {
			bad = append(bad, &herd.FieldError{Field: "output", Elem: o.format + "=" + o.path,
				Msg: fmt.Sprintf("%s is written twice, by %s and by %s (accepted: one output a file)", o.path, first.format, o.format)})
			continue
		}
		written[key] = o
	}
	return bad
}
