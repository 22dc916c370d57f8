package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/herdbench/herdbench/herd"
)

// pathProblems are the places a run would write that it cannot, found
// before it starts rather than after its arms have run: --results-dir and
// --state-dir naming a file (or under one), an output file that is a
// directory (or under a file), and two outputs to one file.
func pathProblems(opts stampedeOptions, outs []output) herd.FieldErrors {
	var bad herd.FieldErrors
	for _, d := range []struct{ field, path string }{{"results_dir", opts.ResultsDir}, {"state_dir", opts.StateDir}} {
		if msg := notADir(d.path); msg != "" {
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
		if msg := notAFile(o.path); msg != "" {
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

// notADir says why path cannot be a directory: it is a file, or one of
// its parents is; "" when it is one or can be made.
func notADir(path string) string { return notA(path, true) }

// notAFile says why path cannot be written as a file: it is a directory,
// or one of its parents is a file; "" otherwise.
func notAFile(path string) string { return notA(path, false) }

// notA says why path cannot be a directory (dir) or a file: it exists as
// the other, or a parent of it is a file.
func notA(path string, dir bool) string {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fileAbove(path)
	case dir && !fi.IsDir():
		return path + " is a file"
	case !dir && fi.IsDir():
		return path + " is a directory"
	}
	return ""
}

// fileAbove names the nearest existing parent of path when it is a file,
// which no directory can be made under; "" otherwise.
func fileAbove(path string) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil {
			if !fi.IsDir() {
				return fmt.Sprintf("%s is under %s, a file", path, dir)
			}
			return ""
		}
		if next := filepath.Dir(dir); next == dir {
			return ""
		}
	}
}
