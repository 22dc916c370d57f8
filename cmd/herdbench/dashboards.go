package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/grafana"
)

func newDashboardsCmd(stdout io.Writer) *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "dashboards",
		Short: "Write the bundled Grafana dashboards and their provisioning files",
		Long: "Write the Grafana dashboards (DIR/dashboards/*.json) and the provisioning files that load them\n" +
			"and the Prometheus they read (DIR/provisioning/), built in Go with Grafana's foundation SDK\n" +
			"(grafana/*.go). The repository's grafana/ is this command's output; docs/dashboards.md says how\n" +
			"to load it and what each panel shows.",
		Args: cli.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			written, err := grafana.Write(dir)
			for _, path := range written {
				fmt.Fprintln(stdout, path)
			}
			return err
		},
	}
	c.Flags().StringVar(&dir, "dir", "grafana", "directory to write dashboards/ and provisioning/ under")
	return c
}
