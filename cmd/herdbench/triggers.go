package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/triggers"
)

func newTriggersCmd(stdout io.Writer, newTriggers func() *triggers.Registry) *cobra.Command {
	return &cobra.Command{
		Use:   "triggers",
		Short: "List the triggers that provoke a herd, a line each",
		Long: "List the triggers `herdbench stampede --trigger NAME` can fire at T, each with the flags of its\n" +
			"options (a scenario file's trigger keys, with underscores). docs/triggers.md explains each.",
		Args: cli.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			reg := newTriggers()
			opts := map[string][]string{}
			for _, o := range reg.Options() {
				v := o.String()
				if o.Type() == "string" && v == "" {
					v = `""` // an empty command, to be set, not a missing value
				}
				opts[o.Trigger] = append(opts[o.Trigger], fmt.Sprintf("--%s %s", o.Flag(), v))
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			for _, n := range reg.Names() {
				t, _ := reg.Get(n)
				line := n + "\t" + t.Describe()
				if len(opts[n]) > 0 {
					line += "\t" + strings.Join(opts[n], ", ")
				}
				fmt.Fprintln(tw, line)
			}
			return tw.Flush()
		},
	}
}
