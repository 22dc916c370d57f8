package testbedcmd

import (
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/cmd/herdbench/cli"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/edge"
)

func newEdgeCmd(stderr io.Writer) *cobra.Command {
	var (
		listen, name = "127.0.0.1:8090", "a1"
		upstreams    []string
		pol          = edge.Config{Timeout: herd.Duration(edge.DefaultTimeout), Retry: retry.Policy{Kind: retry.None}}
		seed         uint64
	)
	c := &cobra.Command{
		Annotations: map[string]string{cli.BuiltByTestbed: "yes"},
		Use:         "edge",
		Short:       "Run one edge replica in front of the API replicas (tier A of a call chain)",
		Long: `Run one edge replica: GET /items/{id} answered by calling an API replica
(--upstream, in turn) over HTTP, each attempt with its own --timeout, a
failed attempt (an error, a timeout or a 5xx) retried per --retry and
--retry-budget, the same forms as the clients'. --breaker, --bulkhead and
--deadline are the protections a cascade calls for at this layer; PUT
/admin/config replaces the whole policy at run time. /metrics counts the
requests it answered (herdbench_edge_requests_total) and the attempts it
sent (herdbench_edge_upstream_attempts_total): their ratio is the layer's
amplification. docs/testbed.md has an example.`,
		Args: cli.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o := edge.Options{Name: name, Seed: seed, Config: pol}
			bad := pol.Problems()
			if len(upstreams) == 0 {
				bad.Add("upstream", "required: the API replicas' base URLs, such as http://127.0.0.1:8081")
			}
			for _, u := range upstreams {
				p, err := url.Parse(u)
				if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || (p.Path != "" && p.Path != "/") {
					bad = append(bad, &herd.FieldError{Field: "upstream", Elem: u, Msg: "want an API replica's base URL, http://HOST:PORT"})
					continue
				}
				o.Upstreams = append(o.Upstreams, p.Scheme+"://"+p.Host)
			}
			if len(bad) > 0 {
				return cli.UsageError{Err: bad}
			}
			return edge.Run(c.Context(), listen, o, slog.New(slog.NewTextHandler(stderr, nil)))
		},
	}
	fs := c.Flags()
	fs.StringVar(&listen, "listen", listen, "address to serve on")
	fs.StringVar(&name, "name", name, "edge replica name, reported in X-Edge")
	fs.StringSliceVar(&upstreams, "upstream", nil, "API replicas' base URLs, called in turn (comma-separated or repeated)")
	fs.DurationVar((*time.Duration)(&pol.Timeout), "timeout", time.Duration(pol.Timeout), "each attempt's own timeout")
	fs.TextVar(&pol.Retry, "retry", pol.Retry, "retry `POLICY` after a failed attempt: "+strings.Join(retry.Forms, ", "))
	fs.TextVar(&pol.Budget, "retry-budget", pol.Budget, "bounds the retries over all the edge's requests, a `BUDGET`: "+strings.Join(retry.BudgetForms, ", "))
	fs.TextVar(&pol.Breaker, "breaker", pol.Breaker, "circuit `BREAKER` on the calls to the API replicas: "+strings.Join(retry.BreakerForms, ", "))
	fs.IntVar(&pol.Bulkhead, "bulkhead", 0, "requests calling the API replicas at once at most, the rest refused with 503; 0: unbounded")
	fs.DurationVar((*time.Duration)(&pol.Deadline), "deadline", 0, "each request's whole time, passed on to the API replicas in "+admin.DeadlineHeader+"; 0: none")
	fs.Uint64Var(&seed, "seed", 0, "seed of the backoff's jitter")
	return c
}
