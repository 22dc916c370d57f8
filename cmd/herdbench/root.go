package main

import (
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
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
		RunE: showHelp,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newStampedeCmd(stdout, stderr), newRunCmd(stdout, stderr), newReportCmd(stdout), newTriggersCmd(stdout), newTestbedCmd(stdout, stderr), newVersionCmd(stdout))
	markUsageErrors(root)
	return root
}

// showHelp is the RunE of command groups: bare, they print help; with an
// unknown subcommand, their Args check fails with a usage error.
func showHelp(c *cobra.Command, _ []string) error { return c.Help() }

// flagErrors renames the JSON fields in replica config errors ("ttl_jitter:
// ...") to the flags that set them ("--ttl-jitter: ...").
func flagErrors(err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		if field, rest, ok := strings.Cut(l, ": "); ok && !strings.Contains(field, " ") {
			lines[i] = "--" + strings.ReplaceAll(field, "_", "-") + ": " + rest
		}
	}
	return usageError{errors.New(strings.Join(lines, "\n"))}
}

// markUsageErrors makes argument validation errors usage errors (exit 2) in
// every command.
func markUsageErrors(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsageErrors(sub)
	}
}
