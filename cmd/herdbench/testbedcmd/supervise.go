package testbedcmd

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/testbed/local"
)

// newSuperviseCmd is the detached supervisor `testbed up` starts
// (local.StartDetached): its config on stdin, its readiness on
// local.NotifyFD, its log on stderr.
func newSuperviseCmd(stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:    "supervise",
		Short:  "Run a detached local testbed's supervisor (testbed up starts it)",
		Hidden: true,
		Args:   cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return local.Supervise(c.Context(), os.Stdin, os.NewFile(local.NotifyFD, "notify"), stderr)
		},
	}
}
