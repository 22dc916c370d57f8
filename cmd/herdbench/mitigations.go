package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/testbed/replica"
)

func newMitigationsCmd(stdout io.Writer, newMitigations func() *replica.Mitigations) *cobra.Command {
	return &cobra.Command{
		Use:   "mitigations",
		Short: "List the bundled testbed's mitigations, a line each",
		Long: "List the mitigations the bundled testbed's replicas run (`--strategy`, `--arms`, a scenario's\n" +
			"arms), each with its kind and the flags of its knobs with their defaults (a scenario file's knobs,\n" +
			"with underscores). A strategy joins several with +, such as lock+ttl_jitter: at most one loader or\n" +
			"refresh, none alone. docs/mitigations.md explains each. They are the testbed's: on your own\n" +
			"service, an arm is whatever switches it (a header, a query value, a hook), declared under arms:\n" +
			"in its target file (docs/targets.md).",
		Args: cli.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			reg := newMitigations()
			cfg := reg.DefaultConfig()
			knobs := map[string][]string{}
			for _, k := range reg.Knobs() {
				if k.Mitigation != "" {
					knobs[k.Mitigation] = append(knobs[k.Mitigation], fmt.Sprintf("--%s %s", k.Flag(), k.Value(&cfg)))
				}
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			for _, m := range reg.Mitigations() {
				line := m.Name() + "\t" + m.Kind() + "\t" + m.Describe()
				if len(knobs[m.Name()]) > 0 {
					line += "\t" + strings.Join(knobs[m.Name()], ", ")
				}
				fmt.Fprintln(tw, line)
			}
			return tw.Flush()
		},
	}
}
