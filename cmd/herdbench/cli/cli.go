// Package cli is what every herdbench command shares: the usage error
// that exits 2 (UsageError), the refusal of arguments to a command that
// takes none (NoArgs), the help a bare command group prints (ShowHelp),
// the mark of a command whose command line testbed up writes
// (BuiltByTestbed), the string flag that refuses "" (NonEmptyVar) and the
// flag that sets a field (FlagOf), and why a path cannot be written
// (NotADir, NotAFile). The root command (cmd/herdbench) and
// the testbed's commands (cmd/herdbench/testbedcmd) both use it; which
// exit code an error is, and how it is printed, is the root's.
package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageError marks an error as the user's input: exit code 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// UsageErrorf is fmt.Errorf's error marked as the user's input.
func UsageErrorf(format string, args ...any) error {
	return UsageError{Err: fmt.Errorf(format, args...)}
}

// UnwrapUsage is the problems a usage error carries, before they were put
// in flag terms.
func UnwrapUsage(err error) error {
	var u UsageError
	if errors.As(err, &u) {
		return u.Err
	}
	return err
}

// BuiltByTestbed annotates a command whose command line testbed up writes.
const BuiltByTestbed = "built-by-testbed"

// ShowHelp is the RunE of command groups: bare, they print help; with an
// unknown subcommand, their Args check fails with a usage error.
func ShowHelp(c *cobra.Command, _ []string) error { return c.Help() }

// NoArgs refuses arguments to a command that takes none, naming them:
// cobra's own says "unknown command", as if one were misspelt.
func NoArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%s: takes no arguments, and was given %s (accepted: flags only, which start with --; see %s --help)",
			c.CommandPath(), strings.Join(args, " "), c.CommandPath())
	}
	return nil
}
