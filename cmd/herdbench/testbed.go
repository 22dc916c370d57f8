package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/api"
)

func newTestbedCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "testbed",
		Short: "Run the bundled testbed: API replicas with Redis in front of Postgres",
		Long: `The testbed is the service herdbench provokes: API replicas serving items
cache-aside from Redis in front of Postgres, reached through toxiproxy, with
stampede mitigations switchable at run time. The local provider runs it as
plain processes on loopback; it needs redis-server and PostgreSQL, not Docker.
The docker provider runs the same with docker compose (docker-compose.yml).`,
		Args: cobra.NoArgs,
		RunE: showHelp,
	}
	c.AddCommand(newTestbedUpCmd(stdout, stderr), newTestbedDownCmd(stdout), newTestbedStatusCmd(stdout), newTestbedServeCmd(stderr), newTestbedEdgeCmd(stderr),
		newTestbedSuperviseCmd(stderr))
	return c
}

// defaultStateDir is where the local testbed keeps its data, state and logs
// unless --state-dir or HERDBENCH_STATE_DIR say otherwise. It is under the
// temporary directory because postgres, which refuses to run as root, must be
// able to enter it as another user.
func defaultStateDir() string {
	if d := os.Getenv("HERDBENCH_STATE_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("herdbench-%d", os.Getuid()))
}

func addStateDirFlag(fs *pflag.FlagSet, dir *string) {
	fs.StringVar(dir, "state-dir", defaultStateDir(), "directory of the testbed's data, state file and logs (env HERDBENCH_STATE_DIR)")
}

// addReplicaFlags binds the options every replica takes. `testbed up` passes
// them on to `testbed serve`; local.ServeArgs renders the same names.
func addReplicaFlags(fs *pflag.FlagSet, o *api.Options) {
	c := &o.Config
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the replica's random source (jitter, xfetch draws); `testbed up` gives replica i seed+i")
	addStartupFlags(fs, o)
	fs.StringVar(&c.Strategy, "strategy", c.Strategy, "mitigation: "+strings.Join(api.Strategies, ", ")+", or several joined with +")
	addKnobFlags(fs, c)
}

// addKnobFlags binds the mitigation knobs of a replica's run-time config.
func addKnobFlags(fs *pflag.FlagSet, c *api.Config) {
	fs.DurationVar((*time.Duration)(&c.TTL), "ttl", time.Duration(c.TTL), "lifetime of a cached item")
	fs.DurationVar((*time.Duration)(&c.StaleTTL), "stale-ttl", time.Duration(c.StaleTTL), "lifetime of the stale copy the lock strategy serves")
	fs.Float64Var(&c.TTLJitter, "ttl-jitter", c.TTLJitter, "fraction of the TTL added at random by ttl_jitter, 0 to 1")
	fs.Float64Var(&c.XFetchBeta, "xfetch-beta", c.XFetchBeta, "xfetch's beta; larger recomputes earlier")
	fs.DurationVar((*time.Duration)(&c.LockTTL), "lock-ttl", time.Duration(c.LockTTL), "expiry of the fleet lock, so a crashed holder's lock ends")
	fs.DurationVar((*time.Duration)(&c.LockWait), "lock-wait", time.Duration(c.LockWait), "longest a lock waiter waits before loading itself")
	fs.DurationVar((*time.Duration)(&c.LockPoll), "lock-poll", time.Duration(c.LockPoll), "when a lock or lease waiter first re-reads the cache; each next re-read waits twice as long, up to 8 times this")
	fs.DurationVar((*time.Duration)(&c.QueryCost), "query-cost", time.Duration(c.QueryCost), "time the item query holds its connection (pg_sleep)")
	fs.TextVar(&c.DBRetry, "db-retry", c.DBRetry, "retries of a failed item query, each with its own --db-timeout: "+strings.Join(retry.Forms, ", "))
	fs.Float64Var(&c.EarlyProbability, "early-probability", c.EarlyProbability, "early: chance of a background refresh on each hit, 0 to 1")
	fs.DurationVar((*time.Duration)(&c.LeaseInterval), "lease-interval", time.Duration(c.LeaseInterval), "lease: at most one token per key per interval")
	fs.DurationVar((*time.Duration)(&c.LeaseWait), "lease-wait", time.Duration(c.LeaseWait), "lease: longest a request waits for the token holder's value")
	fs.DurationVar((*time.Duration)(&c.LocalTTL), "local-ttl", time.Duration(c.LocalTTL), "local: lifetime of a replica's in-process copy")
	fs.Float64Var(&c.LocalJitter, "local-jitter", c.LocalJitter, "local: fraction of local-ttl added at random, 0 to 1")
	fs.Float64Var(&c.RateLimit, "rate-limit", c.RateLimit, "ratelimit: DB loads per second per replica")
	fs.IntVar(&c.RateBurst, "rate-burst", c.RateBurst, "ratelimit: loads the bucket holds")
	fs.DurationVar((*time.Duration)(&c.RampUp), "ramp-up", time.Duration(c.RampUp), "ratelimit: admit a share of requests growing to all over this, from a replica's start (0: off)")
	fs.Uint32Var(&c.BreakerFailures, "breaker-failures", c.BreakerFailures, "breaker: consecutive failed loads that open it")
	fs.DurationVar((*time.Duration)(&c.BreakerOpen), "breaker-open", time.Duration(c.BreakerOpen), "breaker: how long it stays open before one trial load")
	fs.IntVar(&c.ShedMinLimit, "shed-min-limit", c.ShedMinLimit, "shed: the adaptive limit's floor, concurrent DB loads per replica")
	fs.IntVar(&c.ShedMaxLimit, "shed-max-limit", c.ShedMaxLimit, "shed: the adaptive limit's ceiling")
	fs.IntVar(&c.ShedInitialLimit, "shed-initial-limit", c.ShedInitialLimit, "shed: the limit it starts from")
	fs.DurationVar((*time.Duration)(&c.ShedWait), "shed-wait", time.Duration(c.ShedWait), "shed_priority: longest an admitted load queues for a permit")
	fs.StringVar(&c.WriteStrategy, "write-strategy", c.WriteStrategy, "how a write (POST /items/{id}/likes) reaches Postgres: "+strings.Join(api.WriteStrategies, ", "))
	fs.Float64Var(&c.ApplyRate, "apply-rate", c.ApplyRate, "queue: queued writes each replica applies per second; 0: as fast as they come")
	fs.IntVar(&c.WriteBatch, "write-batch", c.WriteBatch, "queue: writes a consumer applies in one statement")
	fs.DurationVar((*time.Duration)(&c.CoalesceInterval), "coalesce-interval", time.Duration(c.CoalesceInterval), "coalesce: how often a replica flushes the increments it holds")
	fs.StringVar(&c.WriteInvalidate, "write-invalidate", c.WriteInvalidate, "what an applied write does to the item's cache entry: "+strings.Join(api.WriteInvalidations, ", "))
}
