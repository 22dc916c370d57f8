package main

import (
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/testbed/edge"
)

func newTestbedEdgeCmd(stderr io.Writer) *cobra.Command {
	var (
		listen, name, retryS, budgetS, breakerS = "127.0.0.1:8090", "a1", retry.None, retry.None, retry.None
		upstreams                               []string
		timeout                                 = edge.DefaultTimeout
		deadline                                time.Duration
		bulkhead                                int
		seed                                    uint64
	)
	c := &cobra.Command{
		Use:   "edge",
		Short: "Run one edge replica in front of the API replicas (tier A of a call chain)",
		Long: `Run one edge replica: GET /items/{id} answered by calling an API replica
(--upstream, in turn) over HTTP, each attempt with its own --timeout, a
failed attempt (an error, a timeout or a 5xx) retried per --retry and
--retry-budget, the same forms as the clients'. --breaker, --bulkhead and
--deadline are the protections a cascade calls for at this layer; PUT
/admin/config replaces the whole policy at run time. /metrics counts the
requests it answered (herdbench_edge_requests_total) and the attempts it
sent (herdbench_edge_upstream_attempts_total): their ratio is the layer's
amplification. docs/testbed.md has an example.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o := edge.Options{Name: name, Seed: seed, Config: edge.Config{Timeout: herd.Duration(timeout),
				Bulkhead: bulkhead, Deadline: herd.Duration(deadline)}}
			if len(upstreams) == 0 {
				return usageErrorf("--upstream: required: the API replicas' base URLs, such as http://127.0.0.1:8081")
			}
			for _, u := range upstreams {
				p, err := url.Parse(u)
				if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || (p.Path != "" && p.Path != "/") {
					return usageErrorf("--upstream %q: want an API replica's base URL, http://HOST:PORT", u)
				}
				o.Upstreams = append(o.Upstreams, p.Scheme+"://"+p.Host)
			}
			var err error
			if o.Retry, err = retry.Parse(retryS); err != nil {
				return usageErrorf("--retry: %v", err)
			}
			if o.Budget, err = retry.ParseBudget(budgetS); err != nil {
				return usageErrorf("--retry-budget: %v", err)
			}
			if o.Breaker, err = retry.ParseBreaker(breakerS); err != nil {
				return usageErrorf("--breaker: %v", err)
			}
			for _, p := range o.Config.Problems() {
				return usageErrorf("--%s: %s", p.Field, p.Msg)
			}
			return edge.Run(c.Context(), listen, o, slog.New(slog.NewTextHandler(stderr, nil)))
		},
	}
	fs := c.Flags()
	fs.StringVar(&listen, "listen", listen, "address to serve on")
	fs.StringVar(&name, "name", name, "edge replica name, reported in X-Edge")
	fs.StringSliceVar(&upstreams, "upstream", nil, "API replicas' base URLs, called in turn (comma-separated or repeated)")
	fs.DurationVar(&timeout, "timeout", timeout, "each attempt's own timeout")
	fs.StringVar(&retryS, "retry", retryS, "retry policy after a failed attempt: "+strings.Join(retry.Forms, ", "))
	fs.StringVar(&budgetS, "retry-budget", budgetS, "bounds the retries over all the edge's requests: none, a ratio such as 10%, tokens or tokens:N")
	fs.StringVar(&breakerS, "breaker", breakerS, "circuit breaker on the calls to the API replicas: none, or FAILURES:OPEN such as 5:2s")
	fs.IntVar(&bulkhead, "bulkhead", 0, "requests calling the API replicas at once at most, the rest refused with 503; 0: unbounded")
	fs.DurationVar(&deadline, "deadline", 0, "each request's whole time, passed on to the API replicas in "+api.DeadlineHeader+"; 0: none")
	fs.Uint64Var(&seed, "seed", 0, "seed of the backoff's jitter")
	return c
}
