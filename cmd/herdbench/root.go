package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/cmd/herdbench/initcmd"
	"github.com/herdbench/herdbench/cmd/herdbench/testbedcmd"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/triggers"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	return newRootCmdWith(stdout, stderr, triggers.Default)
}

// newRootCmdWith is the root command with the triggers newTriggers returns:
// their names and options are the stampede's flags, the scenario file's
// trigger keys and what herdbench triggers lists.
func newRootCmdWith(stdout, stderr io.Writer, newTriggers func() *triggers.Registry) *cobra.Command {
	root := &cobra.Command{
		Use:   "herdbench",
		Short: "Provoke thundering herds against real services and measure which mitigation stops them",
		Long: `herdbench provokes thundering herds on purpose (cache stampedes, reconnect
storms, synchronized retries) against a real service, measures the damage at
the database, the cache and the clients, and compares mitigations side by side.

Exit codes: 0 ok, 1 runtime error, 2 usage error or invalid configuration,
99 a gate failed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Cobra validates arguments before running a command; an error then
		// is the user's input, so it exits 2.
		Args: cobra.NoArgs,
		RunE: cli.ShowHelp,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.UsageError{Err: flagValueError(err)} })
	root.AddCommand(newStampedeCmd(stdout, stderr, newTriggers), newSweepCmd(stdout, stderr, newTriggers), newRunCmd(stdout, stderr, newTriggers), newReportCmd(stdout), newModelCmd(stdout), newWorkerCmd(stderr), newKubeCmd(stdout),
		newTriggersCmd(stdout, newTriggers), initcmd.New(stdout), newMitigationsCmd(stdout, replica.DefaultMitigations), newDashboardsCmd(stdout), testbedcmd.New(stdout, stderr), newVersionCmd(stdout))
	markUsageErrors(root)
	refuseEmptyFlags(root)
	wrapFlagHelp(root)
	return root
}

// refuseEmptyFlags makes the flags of c and its subcommands refuse an
// explicit "" (refuseEmpty) and a second value of one that takes one
// (refuseTwice), but for the replicas' and edges' commands,
// whose command lines testbed up writes, not a user.
func refuseEmptyFlags(c *cobra.Command) {
	if c.Annotations[cli.BuiltByTestbed] != "" {
		return
	}
	refuseEmpty(c.Flags())
	refuseEmpty(c.PersistentFlags())
	refuseTwice(c.Flags()) // on the command line: a scenario's value a flag replaces is set twice
	refuseTwice(c.PersistentFlags())
	for _, sub := range c.Commands() {
		refuseEmptyFlags(sub)
	}
}

// markUsageErrors makes argument validation errors usage errors (exit 2) in
// every command.
func markUsageErrors(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return cli.UsageError{Err: err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsageErrors(sub)
	}
}
