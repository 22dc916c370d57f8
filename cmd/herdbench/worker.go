package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/workers"
)

type workerOptions struct {
	Listen     string
	AllowHosts []string
	Idle       time.Duration
	TokenFile  string // "": $HERDBENCH_WORKER_TOKEN
}

func newWorkerCmd(stderr io.Writer) *cobra.Command {
	opts := workerOptions{Listen: "127.0.0.1:7070"}
	c := &cobra.Command{
		Use:   "worker",
		Short: "Serve as one of several load generators of a stampede (--workers)",
		Long: `Serve the worker API: a controller (herdbench stampede --workers ...) gives
this worker its stripe of each arm's schedule, the worker starts it at the
instant it is told on its own clock, and returns what it recorded. It
sends only to loopback and to the hosts --allow-host names. Beyond
loopback, every call must carry its token (--token-file, or
$HERDBENCH_WORKER_TOKEN; the controller's --worker-token-file).
docs/distributed.md has the whole path, Kubernetes included.`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if opts.Idle < 0 {
				return cli.UsageErrorf("--idle-timeout %s is negative (accepted: 0, never, or a duration)", opts.Idle)
			}
			for _, h := range opts.AllowHosts {
				if err := targets.CheckHost(h); err != nil {
					return cli.UsageErrorf("--allow-host: %v", err)
				}
			}
			token, err := workers.ReadToken(opts.TokenFile)
			switch {
			case err != nil && opts.TokenFile != "":
				return cli.UsageErrorf("--token-file: %v", err)
			case err != nil: // from the environment: it names itself
				return cli.UsageErrorf("%v", err)
			}
			if err := checkListen(opts.Listen); err != nil {
				return cli.UsageErrorf("--listen %s: %v (accepted: HOST:PORT, port 1 to 65535, such as 127.0.0.1:7070, or :7070 for every interface)", opts.Listen, err)
			}
			if token == "" && !workers.LoopbackOnly(opts.Listen) {
				return cli.UsageErrorf("--listen %s: beyond loopback without a token, anything that reaches it could make this worker send load "+
					"(accepted: --token-file FILE or $%s, %d characters or more; or a loopback address such as 127.0.0.1:7070)",
					opts.Listen, workers.TokenEnv, workers.MinTokenLen)
			}
			ln, err := net.Listen("tcp", opts.Listen)
			if err != nil {
				return cli.UsageErrorf("--listen %s: %v (accepted: a free HOST:PORT, such as 127.0.0.1:7070 or :7070)", opts.Listen, err)
			}
			w := workers.NewWorker(herdbenchVersion(), opts.AllowHosts, token)
			w.Log = slog.New(slog.NewTextHandler(stderr, nil))
			fmt.Fprintf(stderr, "herdbench worker %s listening on %s\n", herdbenchVersion(), ln.Addr())
			err = w.Serve(c.Context(), ln, opts.Idle)
			if n := w.Refused(); n > 0 {
				fmt.Fprintf(stderr, "refused %d calls without the worker token\n", n)
			}
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	fs := c.Flags()
	cli.NonEmptyVar(fs, &opts.Listen, "listen", opts.Listen, "HOST:PORT, such as 127.0.0.1:7070, or :7070 for every interface", "`HOST:PORT` to serve the worker API on (:7070 for every interface, as in a pod)")
	fs.StringArrayVar(&opts.AllowHosts, "allow-host", nil, "a host besides loopback this worker may send to (repeatable)")
	fs.DurationVar(&opts.Idle, "idle-timeout", 0, "exit after this long with no request and nothing running (0: never)")
	cli.NonEmptyVar(fs, &opts.TokenFile, "token-file", "", "a file holding the token; or leave it out for $HERDBENCH_WORKER_TOKEN", "`FILE` holding the token every call must carry (default: $HERDBENCH_WORKER_TOKEN; required to listen beyond loopback)")
	return c
}

// workersFor is the generator of --workers, nil without: the controller of
// the workers it names, sending only to the target's checked hosts;
// vegeta: each writes its requests as vegeta's results to a file of its
// own named after it (-o vegeta=FILE; "": none).
func workersFor(ctx context.Context, opts stampedeOptions, target *targets.Target, vegeta string) (experiment.Generator, error) {
	if opts.Workers == "" {
		return nil, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	urls, err := workers.Resolve(rctx, opts.Workers, opts.WorkerCount)
	if err != nil {
		if strings.HasPrefix(opts.Workers, "dns:") {
			return nil, err
		}
		return nil, cli.UsageError{Err: err}
	}
	var hosts []string
	for h := range target.Hosts {
		if !targets.Loopback(h) {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	token, err := workers.ReadToken(opts.WorkerToken) // checked before anything started (workerTokenProblems)
	if err != nil {
		return nil, cli.UsageError{Err: err}
	}
	c := workers.NewController(urls, herdbenchVersion(), hosts, token)
	c.VegetaFile = vegeta
	return c, nil
}

// workerTokenProblems are --worker-token-file's: given without --workers
// (it would do nothing), or a token that cannot be read or is too short.
func workerTokenProblems(opts stampedeOptions) herd.FieldErrors {
	var bad herd.FieldErrors
	if opts.podToken {
		return nil
	}
	switch tok, err := workers.ReadToken(opts.WorkerToken); {
	case opts.WorkerToken != "" && opts.Workers == "":
		bad.Add("worker_token_file", "without --workers it would do nothing (accepted: with --workers, or left out)")
	case err != nil && opts.WorkerToken != "":
		bad.Add("worker_token_file", "%v", err)
	case err != nil && opts.Workers != "": // from the environment: it names itself
		bad = append(bad, &herd.FieldError{Msg: err.Error()})
	case tok == "" && remoteWorker(opts.Workers) != "":
		// a worker beyond loopback refuses to listen without one
		bad.Add("workers", "%s is on another machine, whose worker takes only calls that carry the workers' token, and none is given (accepted: --worker-token-file FILE, or $%s, holding the token the workers read)",
			remoteWorker(opts.Workers), workers.TokenEnv)
	}
	return bad
}

// checkListen says what is wrong with addr as a HOST:PORT to listen on,
// before it is read as beyond loopback. Port 0, any free port, is for
// tests.
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("not HOST:PORT")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}
