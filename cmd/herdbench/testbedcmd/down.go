package testbedcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/providers"
)

type downOptions struct {
	StateDir string
	Timeout  time.Duration
	Provider string
}

func newDownCmd(stdout io.Writer) *cobra.Command {
	var opts downOptions
	c := &cobra.Command{
		Use:   "down",
		Short: "Stop the testbed and remove its data",
		Long: `Stop every process of the testbed and remove its data. Logs stay in the
state directory until the next up. Running down when nothing runs is not an
error.`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return downRun(c.Context(), stdout, opts) },
	}
	addStateDirFlag(c.Flags(), &opts.StateDir)
	c.Flags().DurationVar(&opts.Timeout, "timeout", 30*time.Second, "how long to wait for an orderly stop before killing")
	addProviderFlag(c.Flags(), &opts.Provider, "auto: the one the state directory records")
	return c
}

func downRun(ctx context.Context, stdout io.Writer, opts downOptions) error {
	reg := providers.Default()
	if err := reg.Check(opts.Provider); err != nil {
		return cli.UsageError{Err: err}
	}
	if opts.Timeout <= 0 { // 0 would kill at once, with no orderly stop at all
		return cli.UsageErrorf("--timeout: %s out of range (accepted: more than 0, such as 30s, the default)", opts.Timeout)
	}
	done, err := reg.Down(context.WithoutCancel(ctx), opts.Provider, opts.StateDir, opts.Timeout)
	if errors.Is(err, testbed.ErrNotRunning) {
		_, err = fmt.Fprintf(stdout, "no testbed running in %s\n", opts.StateDir)
		return err
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "testbed stopped; %s\n", done)
	return err
}
