package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/compose"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/triggers"
)

// The values of --provider.
const (
	providerAuto   = "auto"
	providerLocal  = "local"
	providerDocker = compose.Name
)

var providers = []string{providerAuto, providerLocal, providerDocker}

// addProviderFlag binds --provider; help says what auto does in cmd.
func addProviderFlag(fs *pflag.FlagSet, p *string, auto string) {
	fs.StringVar(p, "provider", providerAuto, "which provider runs the testbed: "+strings.Join(providers, ", ")+" ("+auto+")")
}

func checkProvider(p string) error {
	if !slices.Contains(providers, p) {
		return usageErrorf("--provider: unknown %q (accepted: %s)", p, strings.Join(providers, ", "))
	}
	return nil
}

// providerChecks say whether each provider can run here; tests replace them.
type providerChecks struct {
	local  func(observability bool) error
	docker func(ctx context.Context) error
}

var realChecks = providerChecks{
	local: func(observability bool) error {
		err := local.CheckBinaries()
		if observability {
			err = errors.Join(err, local.CheckObservabilityBinaries())
		}
		return err
	},
	docker: func(ctx context.Context) error {
		_, err := compose.FindCommand(ctx)
		return err
	},
}

// chooseProvider resolves --provider auto: the local provider when its
// programs are installed, else docker compose when it works. It says which
// on stderr, and why.
func chooseProvider(ctx context.Context, stderr io.Writer, requested string, observability bool, checks providerChecks) (string, error) {
	if requested != providerAuto {
		return requested, nil
	}
	localErr := checks.local(observability)
	if localErr == nil {
		fmt.Fprintln(stderr, "provider: local (its programs are installed; --provider docker runs docker-compose.yml instead)")
		return providerLocal, nil
	}
	dockerErr := checks.docker(ctx)
	if dockerErr == nil {
		fmt.Fprintf(stderr, "provider: docker (the local provider cannot run: %s)\n", oneLine(localErr))
		return providerDocker, nil
	}
	return "", fmt.Errorf("no provider can run the testbed:\nlocal: %v\ndocker: %v", localErr, dockerErr)
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// runningTestbed returns the status of the testbed running in dir,
// whichever provider started it.
func runningTestbed(ctx context.Context, dir string) (testbed.Status, error) {
	if compose.Recorded(dir) {
		return compose.ReadStatus(ctx, dir)
	}
	return local.ReadStatus(dir)
}

// restarterOf is how the parts of the testbed in st restart: through the
// local supervisor's control API, or docker compose.
func restarterOf(st testbed.Status) triggers.Restarter {
	if st.Provider == providerDocker {
		return compose.Restarter{StateDir: st.StateDir}
	}
	return local.Control{URL: st.Control}
}

// dockerUpFlags are the flags of `testbed up` that the docker provider
// takes; the others set the local replicas' start-up options, which
// docker-compose.yml fixes.
var dockerUpFlags = []string{"state-dir", "provider", "compose-file", "observability", "grafana", "timeout", "json", "foreground",
	"tiers", "edge-timeout", "edge-retry", "edge-retry-budget", "edge-breaker", "edge-bulkhead", "edge-deadline"}

// upDocker starts the compose testbed and returns once every service is
// healthy; with --foreground it stays until Ctrl-C and then takes it down.
func upDocker(ctx context.Context, stdout, stderr io.Writer, opts upOptions) error {
	var bad []string
	for _, f := range opts.setFlags {
		if !slices.Contains(dockerUpFlags, f) {
			bad = append(bad, "--"+f)
		}
	}
	if len(bad) > 0 {
		return usageErrorf("%s: the docker provider runs the replicas docker-compose.yml defines (accepted with --provider docker: --%s); switch mitigations at run time with PUT /admin/config or the stampede's --arms",
			strings.Join(bad, ", "), strings.Join(dockerUpFlags, ", --"))
	}
	if st, err := local.ReadStatus(opts.StateDir); err == nil {
		return fmt.Errorf("a local testbed runs in %s (supervisor pid %d): stop it with 'herdbench testbed down', or choose another --state-dir",
			opts.StateDir, st.PIDs["supervisor"])
	}
	timeout := opts.Timeout
	if !slices.Contains(opts.setFlags, "timeout") {
		timeout = compose.DefaultReadyTimeout
	}
	fmt.Fprintf(stderr, "starting the docker testbed from %s (building the replicas' image the first time) ...\n", opts.ComposeFile)
	st, err := compose.Up(ctx, compose.Config{StateDir: opts.StateDir, File: opts.ComposeFile, Observability: opts.Observability,
		NoGrafana: !opts.Grafana, ReadyTimeout: timeout, Log: stderr, Tiers: opts.Tiers, Edge: opts.Edge.Config})
	if errors.Is(err, compose.ErrRunning) {
		fmt.Fprintf(stderr, "a testbed is already running in %s; nothing changed (stop it with 'herdbench testbed down')\n", opts.StateDir)
		return printUp(stdout, st, opts.JSON)
	}
	if err != nil {
		return err
	}
	if err := printUp(stdout, st, opts.JSON); err != nil {
		return err
	}
	if !opts.Foreground {
		return nil
	}
	fmt.Fprintln(stderr, "testbed running in the foreground; Ctrl-C stops it")
	<-ctx.Done()
	return compose.Down(context.WithoutCancel(ctx), opts.StateDir)
}

// statusOf reads the status of the testbed in dir from provider, or, with
// auto, from whichever provider the state directory records.
func statusOf(ctx context.Context, provider, dir string) (testbed.Status, error) {
	switch provider {
	case providerDocker:
		return compose.ReadStatus(ctx, dir)
	case providerLocal:
		return local.ReadStatus(dir)
	}
	return runningTestbed(ctx, dir)
}

// downDocker takes the compose testbed recorded in the state directory down.
func downDocker(stdout io.Writer, opts downOptions) error {
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout+time.Minute)
	defer cancel()
	err := compose.Down(ctx, opts.StateDir)
	if errors.Is(err, compose.ErrNotRunning) {
		_, err = fmt.Fprintf(stdout, "no docker testbed recorded in %s\n", opts.StateDir)
		return err
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, "testbed stopped (docker compose down: containers and volumes removed)")
	return err
}
