package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
)

// Exit codes, documented in the README.
const (
	exitOK          = 0
	exitError       = 1  // a run failed
	exitUsage       = 2  // bad flags, arguments or configuration
	exitGatesFailed = 99 // a gate failed or a stop condition ended an arm (k6's convention)
)

// gatesFailed ends a run whose results are written and whose gates did
// not all pass, or whose arm a stop condition ended: exit code 99. The
// report has said which; why sums it up.
type gatesFailed struct{ why []string }

func (g gatesFailed) Error() string {
	if len(g.why) == 0 {
		return "gates failed"
	}
	return strings.Join(g.why, "; ")
}

// exitCode prints err and maps it to the process' exit code, in one place.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var g gatesFailed
	if errors.As(err, &g) {
		fmt.Fprintf(stderr, "herdbench: %v (exit %d)\n", g, exitGatesFailed)
		return exitGatesFailed
	}
	var u cli.UsageError
	if errors.As(err, &u) {
		fmt.Fprintf(stderr, "herdbench: %v\n", inFlagTerms(u.Err))
		if !inFiles(u.Err) { // a file's problems are fixed in the file, at the lines named
			fmt.Fprintln(stderr, "Run 'herdbench --help' for usage.")
		}
		return exitUsage
	}
	fmt.Fprintf(stderr, "herdbench: %v\n", err)
	return exitError
}

// inFiles says whether every problem err carries is at a file's line.
func inFiles(err error) bool {
	fe := herd.Fields(err)
	return len(fe) > 0 && !slices.ContainsFunc(fe, func(e *herd.FieldError) bool { return e.File == "" })
}
