package main

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes, documented in the README.
const (
	exitOK          = 0
	exitError       = 1  // a run failed
	exitUsage       = 2  // bad flags, arguments or configuration
	exitGatesFailed = 99 // a gate failed or a stop condition ended an arm (k6's convention)
)

// usageError marks an error as the user's input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// gatesFailed ends a run whose results are written and whose gates did
// not all pass: exit code 99. The report has already said which.
type gatesFailed struct{}

func (gatesFailed) Error() string { return "gates failed" }

// exitCode prints err and maps it to the process' exit code, in one place.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.As(err, new(gatesFailed)) {
		fmt.Fprintln(stderr, "herdbench: gates failed (see the report above)")
		return exitGatesFailed
	}
	fmt.Fprintf(stderr, "herdbench: %v\n", err)
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintln(stderr, "Run 'herdbench --help' for usage.")
		return exitUsage
	}
	return exitError
}
