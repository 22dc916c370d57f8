package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/grafana"
)

func newDashboardsCmd(stdout io.Writer) *cobra.Command {
	var dir string
	c := &cobra.Command{
		Use:   "dashboards",
		Short: "Write the bundled Grafana dashboards and their provisioning files",
		Long: "Write the Grafana dashboards (DIR/dashboards/*.json) and the provisioning files that load them and the\n" +
			"Prometheus they read (DIR/provisioning/), built in Go with Grafana's foundation SDK (grafana/*.go).\n" +
			"The repository's grafana/ is this command's output; docs/testbed.md (its observability section) says how to load it.",
		Args: noArgs,
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
