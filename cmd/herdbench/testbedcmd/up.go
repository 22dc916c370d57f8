package testbedcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/providers"
	"github.com/herdbench/herdbench/testbed/replica"
)

type upOptions struct {
	StateDir   string
	Replicas   int
	Timeout    time.Duration
	Foreground bool
	JSON       bool
	Replica    replica.Options
	StartOptions
	// With --tiers 2, the edge replicas call the API replicas with Edge's
	// policy (--edge-*).
	Edge edge.Options

	Observability bool     // Prometheus and exporters too
	Grafana       bool     // and, under docker, Grafana
	setFlags      []string // every flag the user set
}

func newUpCmd(stdout, stderr io.Writer) *cobra.Command {
	opts := upOptions{Replica: replica.DefaultOptions}
	c := &cobra.Command{
		Use:   "up",
		Short: "Start the testbed and return when every part is healthy",
		Long: `Start Redis, Postgres (with pg_stat_statements), an embedded toxiproxy and the
API replicas on free loopback ports, and return when every part answers.
The testbed keeps running in the background until 'herdbench testbed down';
with --foreground it runs until Ctrl-C and then stops everything.

If a part fails to start, up stops the rest, names the part and its log, and
exits 1. If a testbed already runs in the state directory, up says so,
prints it and changes nothing.

--provider docker runs docker-compose.yml instead (from the repository's
root, or --compose-file), and returns when every service is healthy; auto,
the default, picks local when its programs are installed, else docker.
--observability also runs Prometheus scraping the replicas, the exporters
and the harness (and under docker Grafana with the bundled dashboards).`,
		Example: `  herdbench testbed up
  herdbench testbed up --replicas 5 --query-cost 20ms
  herdbench testbed up --cache memcached
  herdbench testbed up --foreground
  herdbench testbed up --observability
  herdbench testbed up --provider docker --observability`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			c.Flags().Visit(func(f *pflag.Flag) { opts.setFlags = append(opts.setFlags, f.Name) })
			return upRun(c.Context(), stdout, stderr, opts)
		},
	}
	bindUpFlags(c.Flags(), &opts)
	return c
}

// bindUpFlags binds every flag of testbed up to opts.
func bindUpFlags(fs *pflag.FlagSet, opts *upOptions) {
	addStateDirFlag(fs, &opts.StateDir)
	fs.IntVar(&opts.Replicas, "replicas", local.DefaultReplicas, "API replicas, each its own process (1 to 64)")
	fs.DurationVar(&opts.Timeout, "timeout", local.DefaultReadyTimeout, "deadline for every part to become healthy")
	fs.BoolVar(&opts.Foreground, "foreground", false, "stay in the foreground until Ctrl-C, then stop everything")
	fs.BoolVar(&opts.JSON, "json", false, "print the status as JSON once up (as testbed status --json)")
	fs.BoolVar(&opts.Observability, "observability", false, "also run Prometheus and the Redis and Postgres exporters (local: Debian's prometheus, prometheus-redis-exporter, prometheus-postgres-exporter); status names it under prometheus")
	fs.BoolVar(&opts.Grafana, "grafana", true, "with --provider docker --observability, Grafana too (--grafana=false where its image cannot be had)")
	AddStartFlags(fs, &opts.StartOptions, "auto: local when redis-server and the database (PostgreSQL, or MariaDB with --db mariadb) are installed, else docker")
	AddReplicaFlags(fs, &opts.Replica)
	fs.DurationVar((*time.Duration)(&opts.Edge.Timeout), "edge-timeout", local.DefaultEdgeTimeout, "with --tiers 2: each edge attempt's own timeout")
	fs.TextVar(&opts.Edge.Retry, "edge-retry", retry.Policy{Kind: retry.None}, "with --tiers 2: the edges' retry `POLICY`: "+strings.Join(retry.Forms, ", "))
	fs.TextVar(&opts.Edge.Budget, "edge-retry-budget", retry.Budget{}, "with --tiers 2: bounds each edge's retries, a `BUDGET`: "+strings.Join(retry.BudgetForms, ", "))
	fs.TextVar(&opts.Edge.Breaker, "edge-breaker", retry.Breaker{}, "with --tiers 2: each edge's circuit `BREAKER` on its calls to the replicas: "+strings.Join(retry.BreakerForms, ", "))
	fs.IntVar(&opts.Edge.Bulkhead, "edge-bulkhead", 0, "with --tiers 2: requests each edge lets call the replicas at once, the rest refused with 503; 0: unbounded")
	fs.DurationVar((*time.Duration)(&opts.Edge.Deadline), "edge-deadline", 0, "with --tiers 2: each request's whole time at an edge, passed on to the replicas; 0: none")
}

// upProblems are the problems of up's own options, before the testbed's
// (which Ensure checks before it starts anything).
func upProblems(opts upOptions) herd.FieldErrors {
	bad := opts.Replica.Problems().Blame(func(field string) bool { return slices.Contains(opts.setFlags, cli.FlagOf(field)) })
	if opts.Timeout <= 0 {
		bad.Add("timeout", "%s out of range (accepted: more than 0, such as 30s)", opts.Timeout)
	}
	bad = append(bad, herd.Fields(WithComposeFile(nil, opts.Provider, opts.ComposeFile))...)
	return bad
}

// CheckUp parses args as testbed up's flags and runs up's checks and
// those Ensure makes before it starts anything, without Ensure: nothing
// starts. It is what cmd/herdbench's fuzzers run of a testbed up command
// line. The error is the flags' own when they do not parse, else every
// problem found, each told (Error) once; nil when none.
func CheckUp(args []string) error {
	opts := upOptions{Replica: replica.DefaultOptions}
	fs := pflag.NewFlagSet("up", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindUpFlags(fs, &opts)
	if err := fs.Parse(args); err != nil {
		return err
	}
	fs.Visit(func(f *pflag.Flag) { opts.setFlags = append(opts.setFlags, f.Name) })
	o := opts.testbed(io.Discard)
	return errors.Join(upProblems(opts).Err(), providers.Default().Check(o.Provider), o.Problems().Err(), local.Provider{}.Problems(o).Err())
}

func upRun(ctx context.Context, stdout, stderr io.Writer, opts upOptions) error {
	if bad := upProblems(opts); len(bad) > 0 {
		return cli.UsageError{Err: bad}
	}
	run, err := providers.Default().Ensure(ctx, opts.testbed(stderr))
	if err != nil {
		return StartError(err)
	}
	if !run.Started {
		fmt.Fprintf(stderr, "a testbed is already running in %s; nothing changed (stop it with 'herdbench testbed down')\n", run.Status.StateDir)
		WarnIgnored(stderr, run.Ignored)
		return printUp(stdout, run.Status, opts.JSON)
	}
	defer Stop(ctx, stderr, run) // with --foreground; detached, it stays
	if err := printUp(stdout, run.Status, opts.JSON); err != nil || !opts.Foreground {
		return err
	}
	fmt.Fprintln(stderr, "testbed running in the foreground; Ctrl-C stops it")
	<-ctx.Done()
	return nil
}

// testbed is what up asks of the testbed: the flags set, in its terms.
func (opts upOptions) testbed(stderr io.Writer) testbed.Options {
	o := testbed.Options{
		StateDir: opts.StateDir, Provider: opts.Provider, Replicas: opts.Replicas, Items: opts.Items, Tiers: opts.Tiers,
		Replica: opts.Replica, Edge: opts.Edge.Config, Observability: opts.Observability, Grafana: opts.Grafana,
		ComposeFile: opts.ComposeFile, Detach: !opts.Foreground, Log: stderr,
	}
	for _, f := range opts.setFlags {
		switch f {
		case "json", "foreground":
		case "timeout":
			o.ReadyTimeout = opts.Timeout // else the provider's own
			fallthrough
		default:
			o.Set = append(o.Set, OptionName(f))
		}
	}
	if opts.Foreground {
		o.Events = stderr // the supervisor's log, here
	}
	return o
}

func printUp(stdout io.Writer, st testbed.Status, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	return printStatus(stdout, st)
}
