package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/triggers"
)

func newTriggersCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "triggers",
		Short: "List the triggers that provoke a herd, a line each",
		Long:  "List the triggers `herdbench stampede --trigger NAME` can fire at T. docs/triggers.md explains each.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			reg := triggers.Default(triggers.DefaultOptions)
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			for _, n := range reg.Names() {
				t, _ := reg.Get(n)
				fmt.Fprintf(tw, "%s\t%s\n", n, t.Describe())
			}
			return tw.Flush()
		},
	}
}
