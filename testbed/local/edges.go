package local

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/edge"
)

// Tier counts Config.Tiers accepts: the API replicas alone, or edge
// replicas in front of them.
const (
	OneTier  = testbed.OneTier
	TwoTiers = testbed.TwoTiers
)

// DefaultEdgeTimeout is an edge attempt's timeout unless Config.Edge says.
const DefaultEdgeTimeout = edge.DefaultTimeout

// edgeDefaults fills and checks what the edge tier needs.
func (c *Config) edgeDefaults() error {
	c.Tiers = cmp.Or(c.Tiers, OneTier)
	if c.Tiers != OneTier && c.Tiers != TwoTiers {
		return fmt.Errorf("tiers: %d out of range (accepted: 1, the API replicas; 2, edge replicas in front of them)", c.Tiers)
	}
	c.Edge.Timeout = cmp.Or(c.Edge.Timeout, herd.Duration(DefaultEdgeTimeout))
	c.Edge.Retry.Kind = cmp.Or(c.Edge.Retry.Kind, retry.None)
	if err := c.Edge.Config.Problems().Err(); err != nil {
		return fmt.Errorf("edge %w", err)
	}
	return nil
}

// startEdges starts the edge tier: one edge replica (`testbed edge`) per API
// replica, each calling every API replica in turn through a toxiproxy proxy
// of that replica's own (api-1, api-2, ...), so a proxy's faults cut the
// edges from it. ports are the edges' own.
func (tb *Testbed) startEdges(ctx context.Context, ports []int) error {
	var upstreams []string
	for i, u := range tb.status.API {
		name := "api-" + strconv.Itoa(i+1)
		listen, err := tb.proxy.add(name, strings.TrimPrefix(u, "http://"))
		if err != nil {
			return &PartError{Part: "toxiproxy", Log: tb.status.Logs["toxiproxy"], Err: err}
		}
		tb.status.Proxies[name] = listen
		upstreams = append(upstreams, "http://"+listen)
	}
	type started struct {
		p   *process
		url string
	}
	var all []started
	for i, port := range ports {
		o := tb.cfg.Edge
		o.Name, o.Upstreams, o.Seed = "edge-"+strconv.Itoa(i+1), upstreams, tb.cfg.Edge.Seed+uint64(i)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p, err := tb.spawn(ctx, o.Name, syscall.SIGTERM, nil, append([]string{tb.cfg.Binary}, EdgeArgs(addr, o)...)...)
		if err != nil {
			return &PartError{Part: o.Name, Err: err}
		}
		all = append(all, started{p, "http://" + addr})
	}
	for _, s := range all {
		s.p.ready = healthy(s.url)
		if err := tb.waitReady(ctx, s.p, s.p.ready); err != nil {
			return &PartError{Part: s.p.name, Log: s.p.log, Err: err}
		}
		tb.status.Edge = append(tb.status.Edge, s.url)
	}
	return nil
}

// EdgeArgs are the arguments of `herdbench testbed edge` that run one edge
// replica with o on addr.
func EdgeArgs(addr string, o edge.Options) []string {
	return []string{"testbed", "edge",
		"--listen", addr,
		"--name", o.Name,
		"--upstream", strings.Join(o.Upstreams, ","),
		"--timeout", o.Timeout.String(),
		"--retry", o.Retry.String(),
		"--retry-budget", o.Budget.String(),
		"--breaker", o.Breaker.String(),
		"--bulkhead", strconv.Itoa(o.Bulkhead),
		"--deadline", o.Deadline.String(),
		"--seed", strconv.FormatUint(o.Seed, 10),
	}
}
