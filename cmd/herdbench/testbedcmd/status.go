package testbedcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/providers"
)

type statusOptions struct {
	StateDir string
	JSON     bool
	Template string
	Provider string
}

func newStatusCmd(stdout io.Writer) *cobra.Command {
	var opts statusOptions
	c := &cobra.Command{
		Use:   "status",
		Short: "Show the running testbed: endpoints, pids, versions, log paths",
		Long: `Show the running testbed. --json prints one object for scripts:
provider, api (one base URL per replica), edge (with --tiers 2, one per
edge replica), redis (URL), postgres (a DSN that
reads pg_stat_statements), toxiproxy (API URL), proxies, state_dir, pids,
versions and logs; with observability, prometheus (its URL), harness (where
it scrapes a stampede's live metrics) and, under docker, grafana. --template
formats the same object with a Go template, such as '{{index .API 0}}'.
Exits 1 when no testbed runs.`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return statusRun(c.Context(), stdout, opts) },
	}
	addStateDirFlag(c.Flags(), &opts.StateDir)
	c.Flags().BoolVar(&opts.JSON, "json", false, "print the status as JSON")
	addProviderFlag(c.Flags(), &opts.Provider, "auto: the one the state directory records")
	c.Flags().StringVarP(&opts.Template, "template", "t", "", "format the status with a Go template, fields as in --json (.API, .Redis, .Postgres, .Toxiproxy, .PIDs, ...)")
	return c
}

func statusRun(ctx context.Context, stdout io.Writer, opts statusOptions) error {
	if opts.JSON && opts.Template != "" {
		return cli.UsageErrorf("--json and --template: use one of them")
	}
	reg := providers.Default()
	if err := reg.Check(opts.Provider); err != nil {
		return cli.UsageError{Err: err}
	}
	var tmpl *template.Template
	if opts.Template != "" {
		var err error
		if tmpl, err = template.New("status").Parse(opts.Template); err != nil {
			return cli.UsageErrorf("--template: %v", err)
		}
	}
	st, err := reg.Status(ctx, opts.Provider, opts.StateDir)
	// nothing recorded: say how to start one; a testbed whose supervisor
	// is gone says itself how to clean up
	var gone *local.SupervisorGoneError
	if errors.Is(err, local.ErrNotRunning) && !errors.As(err, &gone) {
		return fmt.Errorf("%w: start one with 'herdbench testbed up --state-dir %s'", err, opts.StateDir)
	}
	if err != nil {
		return err
	}
	switch {
	case opts.JSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	case tmpl != nil:
		if err := tmpl.Execute(stdout, st); err != nil {
			return cli.UsageErrorf("--template: %v", err)
		}
		_, err := fmt.Fprintln(stdout)
		return err
	}
	return printStatus(stdout, st)
}

// printStatus writes the status for people.
func printStatus(w io.Writer, st testbed.Status) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "provider\t%s\n", st.Provider)
	fmt.Fprintf(tw, "state dir\t%s\n", st.StateDir)
	fmt.Fprintf(tw, "api\t%s\n", strings.Join(st.API, "  "))
	if len(st.Edge) > 0 {
		fmt.Fprintf(tw, "edge\t%s\n", strings.Join(st.Edge, "  "))
	}
	fmt.Fprintf(tw, "redis\t%s\t%s\n", st.Redis, st.Versions["redis"])
	if st.Memcached != "" {
		fmt.Fprintf(tw, "memcached\t%s\t%s\n", st.Memcached, st.Versions["memcached"])
	}
	if st.MariaDB != "" {
		fmt.Fprintf(tw, "mariadb\t%s\t%s\n", st.MariaDB, st.Versions["mariadb"])
	} else {
		fmt.Fprintf(tw, "postgres\t%s\t%s\n", st.Postgres, st.Versions["postgres"])
	}
	fmt.Fprintf(tw, "toxiproxy\t%s\t%s\n", st.Toxiproxy, st.Versions["toxiproxy"])
	for _, name := range slices.Sorted(maps.Keys(st.Proxies)) {
		fmt.Fprintf(tw, "  proxy %s\t%s\n", name, st.Proxies[name])
	}
	printObservability(tw, st)
	if len(st.PIDs) > 0 { // none under docker: its containers have their own
		fmt.Fprintln(tw, "\nprocess\tpid\tlog")
	}
	for _, name := range slices.Sorted(maps.Keys(st.PIDs)) {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", name, st.PIDs[name], st.Logs[name])
	}
	if try := append(slices.Clone(st.Edge), st.API...); len(try) > 0 {
		fmt.Fprintf(tw, "\ntry: curl -i %s/items/42\n", try[0])
	}
	return tw.Flush()
}

// printObservability adds the observability endpoints to a status table.
func printObservability(w io.Writer, st testbed.Status) {
	if st.Prometheus != "" {
		fmt.Fprintf(w, "prometheus\t%s\t%s\n", st.Prometheus, st.Versions["prometheus"])
	}
	if st.Harness != "" {
		fmt.Fprintf(w, "  scrapes stampedes at\t%s\n", st.Harness)
	}
	if st.Grafana != "" {
		fmt.Fprintf(w, "grafana\t%s\n", st.Grafana)
	}
}
