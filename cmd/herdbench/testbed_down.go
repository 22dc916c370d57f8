package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/local"
)

type downOptions struct {
	StateDir string
	Timeout  time.Duration
	Provider string
}

func newTestbedDownCmd(stdout io.Writer) *cobra.Command {
	var opts downOptions
	c := &cobra.Command{
		Use:   "down",
		Short: "Stop the testbed and remove its data",
		Long: `Stop every process of the testbed and remove its data. Logs stay in the
state directory until the next up. Running down when nothing runs is not an
error.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return downRun(stdout, opts) },
	}
	addStateDirFlag(c.Flags(), &opts.StateDir)
	c.Flags().DurationVar(&opts.Timeout, "timeout", 30*time.Second, "how long to wait for an orderly stop before killing")
	addProviderFlag(c.Flags(), &opts.Provider, "auto: the one the state directory records")
	return c
}

func downRun(stdout io.Writer, opts downOptions) error {
	if err := checkProvider(opts.Provider); err != nil {
		return err
	}
	if opts.Provider == providerDocker || (opts.Provider == providerAuto && compose.Recorded(opts.StateDir)) {
		return downDocker(stdout, opts)
	}
	err := local.Down(opts.StateDir, opts.Timeout)
	if errors.Is(err, local.ErrNotRunning) {
		_, err = fmt.Fprintf(stdout, "no testbed running in %s\n", opts.StateDir)
		return err
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "testbed stopped; logs kept in %s/logs\n", opts.StateDir)
	return err
}
