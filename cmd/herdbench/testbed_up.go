package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/local"
)

type upOptions struct {
	StateDir   string
	Replicas   int
	Items      int
	Timeout    time.Duration
	Foreground bool
	JSON       bool
	NotifyFD   int // set by a detaching up for its supervisor
	Replica    api.Options
	// Tiers 2 puts edge replicas in front of the API replicas, calling them
	// with Edge's timeout and the EdgeRetry policy and EdgeBudget budget.
	Tiers                              int
	Edge                               edge.Options
	EdgeRetry, EdgeBudget, EdgeBreaker string
	// Flags the user set, handed on to a detached supervisor.
	passArgs []string

	Observability bool     // Prometheus and exporters too
	Grafana       bool     // and, under docker, Grafana
	Provider      string   // --provider: auto, local or docker
	ComposeFile   string   // the docker provider's compose file
	setFlags      []string // every flag the user set
}

func newTestbedUpCmd(stdout, stderr io.Writer) *cobra.Command {
	opts := upOptions{Replica: api.DefaultOptions}
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
  herdbench testbed up --foreground
  herdbench testbed up --observability
  herdbench testbed up --provider docker --observability`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			c.Flags().Visit(func(f *pflag.Flag) {
				opts.setFlags = append(opts.setFlags, f.Name)
				switch f.Name {
				case "state-dir", "foreground", "notify-fd", "json", "provider", "compose-file":
				default:
					opts.passArgs = append(opts.passArgs, "--"+f.Name+"="+f.Value.String())
				}
			})
			return upRun(c.Context(), stdout, stderr, opts)
		},
	}
	fs := c.Flags()
	addStateDirFlag(fs, &opts.StateDir)
	fs.IntVar(&opts.Replicas, "replicas", local.DefaultReplicas, "API replicas, each its own process (1 to 64)")
	fs.IntVar(&opts.Items, "items", local.DefaultItems, "items seeded into Postgres")
	fs.DurationVar(&opts.Timeout, "timeout", local.DefaultReadyTimeout, "deadline for every part to become healthy")
	fs.BoolVar(&opts.Foreground, "foreground", false, "stay in the foreground until Ctrl-C, then stop everything")
	fs.BoolVar(&opts.JSON, "json", false, "print the status as JSON once up (as testbed status --json)")
	fs.BoolVar(&opts.Observability, "observability", false, "also run Prometheus and the Redis and Postgres exporters (local: Debian's prometheus, prometheus-redis-exporter, prometheus-postgres-exporter); status names it under prometheus")
	fs.BoolVar(&opts.Grafana, "grafana", true, "with --provider docker --observability, Grafana too (--grafana=false where its image cannot be had)")
	addProviderFlag(fs, &opts.Provider, "auto: local when redis-server and PostgreSQL are installed, else docker")
	fs.StringVar(&opts.ComposeFile, "compose-file", "docker-compose.yml", "the docker provider's compose file, in the herdbench repository")
	fs.IntVar(&opts.NotifyFD, "notify-fd", 0, "")
	_ = fs.MarkHidden("notify-fd")
	addReplicaFlags(fs, &opts.Replica)
	fs.IntVar(&opts.Tiers, "tiers", local.OneTier, "1: the API replicas; 2: also one edge replica per API replica in front of them, calling them over HTTP (status lists them under edge; the stampede's clients attack them)")
	fs.DurationVar((*time.Duration)(&opts.Edge.Timeout), "edge-timeout", local.DefaultEdgeTimeout, "with --tiers 2: each edge attempt's own timeout")
	fs.StringVar(&opts.EdgeRetry, "edge-retry", retry.None, "with --tiers 2: the edges' retry policy: "+strings.Join(retry.Forms, ", "))
	fs.StringVar(&opts.EdgeBudget, "edge-retry-budget", retry.None, "with --tiers 2: bounds each edge's retries: none, a ratio such as 10%, tokens or tokens:N")
	fs.StringVar(&opts.EdgeBreaker, "edge-breaker", retry.None, "with --tiers 2: each edge's circuit breaker on its calls to the replicas: none, or FAILURES:OPEN such as 5:2s")
	fs.IntVar(&opts.Edge.Bulkhead, "edge-bulkhead", 0, "with --tiers 2: requests each edge lets call the replicas at once, the rest refused with 503; 0: unbounded")
	fs.DurationVar((*time.Duration)(&opts.Edge.Deadline), "edge-deadline", 0, "with --tiers 2: each request's whole time at an edge, passed on to the replicas; 0: none")
	return c
}

func upRun(ctx context.Context, stdout, stderr io.Writer, opts upOptions) error {
	if err := opts.Replica.Problems().Err(); err != nil {
		return usageError{err}
	}
	if opts.Timeout <= 0 {
		return usageErrorf("--timeout: %s out of range (accepted: more than 0, such as 30s)", opts.Timeout)
	}
	if opts.Replicas < 1 || opts.Replicas > 64 {
		return usageErrorf("--replicas: %d out of range (accepted: 1 to 64)", opts.Replicas)
	}
	if opts.Items < 1 {
		return usageErrorf("--items: %d out of range (accepted: 1 or more)", opts.Items)
	}
	if opts.Tiers != local.OneTier && opts.Tiers != local.TwoTiers {
		return usageErrorf("--tiers: %d out of range (accepted: 1, the API replicas; 2, edge replicas in front of them)", opts.Tiers)
	}
	for _, p := range opts.Edge.Config.Problems() {
		return usageErrorf("--edge-%s: %s", p.Field, p.Msg)
	}
	var err error
	if opts.Edge.Retry, err = retry.Parse(opts.EdgeRetry); err != nil {
		return usageErrorf("--edge-retry: %v", err)
	}
	if opts.Edge.Budget, err = retry.ParseBudget(opts.EdgeBudget); err != nil {
		return usageErrorf("--edge-retry-budget: %v", err)
	}
	if opts.Edge.Breaker, err = retry.ParseBreaker(opts.EdgeBreaker); err != nil {
		return usageErrorf("--edge-breaker: %v", err)
	}
	if opts.Tiers == local.OneTier {
		for _, f := range []string{"edge-timeout", "edge-retry", "edge-retry-budget", "edge-breaker", "edge-bulkhead", "edge-deadline"} {
			if slices.Contains(opts.setFlags, f) {
				return usageErrorf("--%s: sets the edge tier's policy, and there is none with --tiers 1 (accepted with --tiers 2)", f)
			}
		}
	}
	opts.Edge.Seed = opts.Replica.Seed
	if err := checkProvider(opts.Provider); err != nil {
		return err
	}
	if opts.NotifyFD == 0 { // a detached supervisor is local by then
		provider, err := chooseProvider(ctx, stderr, opts.Provider, opts.Observability, realChecks)
		if err != nil {
			return err
		}
		if provider == providerDocker {
			return upDocker(ctx, stdout, stderr, opts)
		}
		if slices.Contains(opts.setFlags, "grafana") {
			return usageErrorf("--grafana: the local provider runs no Grafana (accepted with --provider docker --observability; point any Grafana at testbed status -t '{{.Prometheus}}')")
		}
	}
	if opts.Foreground || opts.NotifyFD > 0 {
		return upForeground(ctx, stdout, stderr, opts)
	}
	return upDetached(ctx, stdout, stderr, opts)
}

// upForeground runs the supervisor in this process until ctx ends.
func upForeground(ctx context.Context, stdout, stderr io.Writer, opts upOptions) error {
	var logFile string
	if opts.NotifyFD > 0 { // detached: upDetached sends stderr here
		logFile = filepath.Join(opts.StateDir, "logs", "supervisor.log")
	}
	tb, err := local.Start(ctx, local.Config{
		LogFile:      logFile,
		StateDir:     opts.StateDir,
		Replicas:     opts.Replicas,
		Items:        opts.Items,
		Replica:      opts.Replica,
		ReadyTimeout: opts.Timeout,
		Log:          slog.New(slog.NewTextHandler(stderr, nil)),

		Observability: opts.Observability,
		Tiers:         opts.Tiers,
		Edge:          opts.Edge,
	})
	if opts.NotifyFD > 0 {
		f := os.NewFile(uintptr(opts.NotifyFD), "notify")
		var st testbed.Status
		if tb != nil {
			st = tb.Status()
		}
		_ = local.Notify(f, st, err)
		_ = f.Close()
	}
	if err != nil {
		return err
	}
	defer tb.Stop()
	if err := printUp(stdout, tb.Status(), opts.JSON); err != nil {
		return err
	}
	if opts.NotifyFD == 0 {
		fmt.Fprintln(stderr, "testbed running in the foreground; Ctrl-C stops it")
	}
	<-ctx.Done()
	return nil
}

// upDetached starts the supervisor as a detached `testbed up --foreground`
// and returns once it reports ready, or its error. Ctrl-C meanwhile stops
// it, and with it everything it started.
func upDetached(ctx context.Context, stdout, stderr io.Writer, opts upOptions) error {
	dir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return usageErrorf("--state-dir: %v", err)
	}
	if st, err := runningTestbed(ctx, dir); err == nil {
		fmt.Fprintf(stderr, "a testbed is already running in %s; nothing changed (stop it with 'herdbench testbed down')\n", dir)
		return printUp(stdout, st, opts.JSON)
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "logs", "supervisor.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := append([]string{"testbed", "up", "--foreground", "--notify-fd=3", "--state-dir=" + dir}, opts.passArgs...)
	sup := exec.Command(exe, args...)
	sup.Stdout, sup.Stderr = logf, logf
	sup.ExtraFiles = []*os.File{w} // fd 3
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	sup.Dir = dir // like every process of the testbed: local.Processes finds it
	err = sup.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("start testbed supervisor: %w", err)
	}

	type result struct {
		st  testbed.Status
		err error
	}
	ready := make(chan result, 1)
	go func() {
		st, err := local.AwaitReady(r)
		ready <- result{st, err}
	}()
	var res result
	select {
	case res = <-ready:
	case <-ctx.Done():
		_ = sup.Process.Signal(syscall.SIGTERM)
		<-ready
		_ = sup.Wait()
		return fmt.Errorf("interrupted: the testbed was stopped before it was ready (log: %s)", logPath)
	}
	if res.err != nil {
		_ = sup.Wait() // it tears down what it started, then exits
		if errors.Is(res.err, local.ErrSupervisorDied) {
			return fmt.Errorf("%w: %s (log: %s)", res.err, lastLogLine(logPath), logPath)
		}
		return res.err
	}
	_ = sup.Process.Release()
	return printUp(stdout, res.st, opts.JSON)
}

func printUp(stdout io.Writer, st testbed.Status, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	return printStatus(stdout, st)
}

func lastLogLine(path string) string {
	b, _ := os.ReadFile(path)
	lines := splitLines(string(b))
	if len(lines) == 0 {
		return "(empty log)"
	}
	return lines[len(lines)-1]
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
