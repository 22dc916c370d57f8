package triggers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/herdbench/herdbench/testbed/api"
)

// Dependencies are the proxied dependencies faults can break.
var Dependencies = []string{"postgres", "redis"}

// Options configure the triggers that take them.
type Options struct {
	Outage        api.Duration `json:"outage"`         // outage: how long the dependency is unreachable
	Dependency    string       `json:"dependency"`     // outage: which one, one of Dependencies
	SlowDBLatency api.Duration `json:"slowdb_latency"` // slowdb: latency added to every Postgres reply
	SlowDBFor     api.Duration `json:"slowdb_for"`     // slowdb: how long
	Burst         int          `json:"burst"`          // burst: clients released at T
	Restart       string       `json:"restart"`        // restart: api, redis or postgres
	Rolling       bool         `json:"rolling"`        // restart: the API replicas one after another
}

// DefaultOptions are the triggers' defaults.
var DefaultOptions = Options{Outage: api.Duration(2 * time.Second), Dependency: "postgres",
	SlowDBLatency: api.Duration(300 * time.Millisecond), SlowDBFor: api.Duration(3 * time.Second), Burst: 1000, Restart: "api"}

// OrDefaults fills the options left zero from DefaultOptions.
func (o Options) OrDefaults() Options {
	d := DefaultOptions
	if o.Outage == 0 {
		o.Outage = d.Outage
	}
	if o.Dependency == "" {
		o.Dependency = d.Dependency
	}
	if o.SlowDBLatency == 0 {
		o.SlowDBLatency = d.SlowDBLatency
	}
	if o.SlowDBFor == 0 {
		o.SlowDBFor = d.SlowDBFor
	}
	if o.Burst == 0 {
		o.Burst = d.Burst
	}
	if o.Restart == "" {
		o.Restart = d.Restart
	}
	return o
}

// Validate returns every problem at once, naming the option and the
// accepted values.
func (o Options) Validate() error {
	var errs []error
	if o.Outage <= 0 || o.Outage > api.Duration(time.Minute) {
		errs = append(errs, fmt.Errorf("outage: %s out of range (accepted: more than 0, at most 1m)", o.Outage))
	}
	if !slices.Contains(Dependencies, o.Dependency) {
		errs = append(errs, fmt.Errorf("dependency: unknown %q (accepted: %s)", o.Dependency, strings.Join(Dependencies, ", ")))
	}
	if o.SlowDBLatency <= 0 || o.SlowDBLatency > api.Duration(30*time.Second) {
		errs = append(errs, fmt.Errorf("slowdb_latency: %s out of range (accepted: more than 0, at most 30s)", o.SlowDBLatency))
	}
	if o.SlowDBFor <= 0 || o.SlowDBFor > api.Duration(time.Minute) {
		errs = append(errs, fmt.Errorf("slowdb_for: %s out of range (accepted: more than 0, at most 1m)", o.SlowDBFor))
	}
	if !slices.Contains(RestartParts, o.Restart) {
		errs = append(errs, fmt.Errorf("restart: unknown %q (accepted: %s)", o.Restart, strings.Join(RestartParts, ", ")))
	}
	if o.Burst < 1 || o.Burst > MaxBurst {
		errs = append(errs, fmt.Errorf("burst: %d out of range (accepted: 1 to %d clients)", o.Burst, MaxBurst))
	}
	return errors.Join(errs...)
}

// MaxBurst caps the clients a burst opens connections for.
const MaxBurst = 10_000

// Flush empties the cache at T, as a Redis restart without persistence
// does: a cold-start stampede over every key.
type Flush struct{}

var _ Trigger = Flush{}

func (Flush) Name() string { return "flush" }
func (Flush) Describe() string {
	return "FLUSHDB at T: a cold cache, as after a Redis restart without persistence"
}

// Fire flushes the database the replicas use.
func (Flush) Fire(ctx context.Context, env Env) (Detail, error) {
	n, err := env.Redis.DBSize(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("flush: count keys: %w", err)
	}
	if err := env.Redis.FlushDB(ctx).Err(); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	return Detail{"keys_flushed": n}, nil
}

// Conndrop resets every connection of the replicas to Redis and Postgres at
// T, as a network blip or a proxy restart does: a reconnect storm. It closes
// the toxiproxy proxies the replicas go through and opens them again; the
// harness's own connections do not pass through them.
type Conndrop struct{}

var _ Trigger = Conndrop{}

func (Conndrop) Name() string { return "conndrop" }
func (Conndrop) Describe() string {
	return "every replica connection to Redis and Postgres reset at T: a reconnect storm"
}

// Fire disables and re-enables each proxy, which closes its connections.
func (Conndrop) Fire(ctx context.Context, env Env) (Detail, error) {
	for _, dep := range Dependencies {
		p, err := proxy(env, dep)
		if err != nil {
			return nil, err
		}
		if err := p.Disable(); err != nil {
			return nil, fmt.Errorf("conndrop: close %s proxy: %w", dep, err)
		}
		if err := p.Enable(); err != nil {
			return nil, fmt.Errorf("conndrop: reopen %s proxy: %w", dep, err)
		}
	}
	return Detail{"proxies_reset": Dependencies}, nil
}

// Outage makes a dependency unreachable from T for a while, then brings it
// back: clients that failed retry, and when it returns their retries arrive
// together.
type Outage struct {
	For        time.Duration
	Dependency string
}

var _ Trigger = Outage{}

func (Outage) Name() string { return "outage" }
func (o Outage) Describe() string {
	return fmt.Sprintf("%s unreachable from T for %s, then back: a retry storm when it returns", o.Dependency, o.For)
}

// Fire closes the dependency's proxy for o.For. It reopens it when the
// time is up or ctx ends, whichever comes first.
func (o Outage) Fire(ctx context.Context, env Env) (Detail, error) {
	p, err := proxy(env, o.Dependency)
	if err != nil {
		return nil, err
	}
	if err := p.Disable(); err != nil {
		return nil, fmt.Errorf("outage: close %s proxy: %w", o.Dependency, err)
	}
	down := time.Now()
	wait(ctx, o.For)
	if err := p.Enable(); err != nil {
		return nil, fmt.Errorf("outage: reopen %s proxy: %w", o.Dependency, err)
	}
	// down_ms is shorter than for_ms when the arm was stopped early
	return Detail{"dependency": o.Dependency, "for_ms": o.For.Milliseconds(), "down_ms": time.Since(down).Milliseconds()}, nil
}

// SlowDB adds latency to every Postgres reply from T for a while: requests
// take longer, clients time out and retry, and the retries add load to a
// database that is already slow.
type SlowDB struct {
	Latency, For time.Duration
}

var _ Trigger = SlowDB{}

func (SlowDB) Name() string { return "slowdb" }
func (s SlowDB) Describe() string {
	return fmt.Sprintf("Postgres replies %s slower from T for %s: timeouts, retries, more load", s.Latency, s.For)
}

const slowToxic = "herdbench-slowdb"

// Fire adds a latency toxic to the Postgres proxy for s.For, and removes it
// when the time is up or ctx ends.
func (s SlowDB) Fire(ctx context.Context, env Env) (Detail, error) {
	p, err := proxy(env, "postgres")
	if err != nil {
		return nil, err
	}
	if _, err := p.AddToxic(slowToxic, "latency", "downstream", 1, toxiclient.Attributes{"latency": s.Latency.Milliseconds()}); err != nil {
		return nil, fmt.Errorf("slowdb: add latency: %w", err)
	}
	slow := time.Now()
	wait(ctx, s.For)
	if err := p.RemoveToxic(slowToxic); err != nil {
		return nil, fmt.Errorf("slowdb: remove latency: %w", err)
	}
	return Detail{"latency_ms": s.Latency.Milliseconds(), "for_ms": s.For.Milliseconds(), "slow_ms": time.Since(slow).Milliseconds()}, nil
}

func proxy(env Env, name string) (*toxiclient.Proxy, error) {
	if env.Toxiproxy == nil {
		return nil, fmt.Errorf("the target has no toxiproxy, which this trigger needs to break %s", name)
	}
	p, err := env.Toxiproxy.Proxy(name)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy proxy %s: %w", name, err)
	}
	return p, nil
}

// wait returns after d or when ctx ends.
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// RestartParts are the parts the restart trigger can restart.
var RestartParts = []string{"api", "redis", "postgres"}

// Restart restarts a part of the testbed at T: the API replicas (cold
// in-process state, reconnects), Redis (an empty cache without persistence:
// a warm-up stampede) or Postgres (every connection lost, errors until it is
// back: a failover). Fire returns once the part serves again.
type Restart struct {
	Part    string
	Rolling bool
}

var _ Trigger = Restart{}

func (Restart) Name() string { return "restart" }
func (r Restart) Describe() string {
	how := "all at once"
	if r.Rolling {
		how = "rolling"
	}
	return fmt.Sprintf("%s restarted at T (%s): cold state, reconnects, a warm-up stampede", r.Part, how)
}

// Fire restarts the part through the target's Restarter.
func (r Restart) Fire(ctx context.Context, env Env) (Detail, error) {
	if env.Restarter == nil {
		return nil, fmt.Errorf("restart: the target cannot restart its processes")
	}
	start := time.Now()
	done, err := env.Restarter.Restart(ctx, r.Part, r.Rolling)
	if err != nil {
		return nil, fmt.Errorf("restart %s: %w", r.Part, err)
	}
	return Detail{"part": r.Part, "rolling": r.Rolling, "restarted": done, "took_ms": time.Since(start).Milliseconds()}, nil
}

// Notify broadcasts an invalidation of the hot keys at T on the replicas'
// pub/sub channel: every replica wakes and reloads them at once.
type Notify struct{}

var _ Trigger = Notify{}

func (Notify) Name() string { return "notify" }
func (Notify) Describe() string {
	return "a broadcast invalidation of the hot keys at T: every replica reloads them at once"
}

// Fire publishes the hot ids on api.InvalidateChannel.
func (Notify) Fire(ctx context.Context, env Env) (Detail, error) {
	ids := make([]string, len(env.HotKeys))
	for i, id := range env.HotKeys {
		ids[i] = strconv.FormatInt(id, 10)
	}
	n, err := env.Redis.Publish(ctx, api.InvalidateChannel, strings.Join(ids, ",")).Result()
	if err != nil {
		return nil, fmt.Errorf("notify: publish: %w", err)
	}
	return Detail{"keys": len(ids), "receivers": n}, nil
}
