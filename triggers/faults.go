package triggers

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// does: a cold-start stampede over every key. On a Redis herdbench did not
// start, it removes only the keys the target's pattern lets it touch.
type Flush struct{}

var (
	_ Trigger  = Flush{}
	_ Requirer = Flush{}
)

func (Flush) Name() string { return "flush" }
func (Flush) Describe() string {
	return "FLUSHDB at T (on a target's Redis: every key of its pattern): a cold cache, as after a Redis restart without persistence"
}

// Requires a Redis, and a pattern unless herdbench owns it.
func (Flush) Requires(c Caps) error {
	switch {
	case !c.Redis:
		return errors.New("a Redis (redis.address in the target file)")
	case !c.Pattern:
		return errors.New("the pattern of the only keys it may remove (redis.pattern in the target file)")
	}
	return nil
}

// Fire flushes the database the service uses: all of it on the testbed,
// the keys matching the pattern elsewhere.
func (Flush) Fire(ctx context.Context, env Env) (Detail, error) {
	if env.Owned {
		n, err := env.Redis.DBSize(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("flush: count keys: %w", err)
		}
		if err := env.Redis.FlushDB(ctx).Err(); err != nil {
			return nil, fmt.Errorf("flush: %w", err)
		}
		return Detail{"keys_flushed": n}, nil
	}
	if env.Pattern == "" {
		return nil, errors.New("flush: the target declares no pattern of keys it may touch")
	}
	var n int64
	iter := env.Redis.Scan(ctx, 0, env.Pattern, 1000).Iterator()
	var batch []string
	unlink := func() error {
		if len(batch) == 0 {
			return nil
		}
		m, err := env.Redis.Unlink(ctx, batch...).Result()
		n += m
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if k := iter.Val(); MatchPattern(env.Pattern, k) { // SCAN's match, checked again
			batch = append(batch, k)
		}
		if len(batch) == 1000 {
			if err := unlink(); err != nil {
				return nil, fmt.Errorf("flush: unlink: %w", err)
			}
		}
	}
	if err := errors.Join(iter.Err(), unlink()); err != nil {
		return nil, fmt.Errorf("flush %s: %w", env.Pattern, err)
	}
	return Detail{"keys_flushed": n, "pattern": env.Pattern}, nil
}

// Conndrop resets every connection of the service to Redis and Postgres at
// T, as a network blip or a proxy restart does: a reconnect storm. Behind
// toxiproxy it closes the proxies and opens them again (the harness's own
// connections do not pass through them); on a target without toxiproxy it
// ends the Postgres connections of the target's role.
type Conndrop struct{}

var (
	_ Trigger  = Conndrop{}
	_ Requirer = Conndrop{}
)

func (Conndrop) Name() string { return "conndrop" }
func (Conndrop) Describe() string {
	return "every service connection to Redis and Postgres reset at T: a reconnect storm"
}

// Requires toxiproxy in front of a dependency, or a Postgres role.
func (Conndrop) Requires(c Caps) error {
	if len(c.Proxies) == 0 && !c.Role {
		return errors.New("toxiproxy in front of the service's dependencies (toxiproxy in the target file), or a Postgres role whose connections may be reset (postgres.role)")
	}
	return nil
}

// Fire disables and re-enables each proxy, which closes its connections,
// or terminates the role's backends.
func (Conndrop) Fire(ctx context.Context, env Env) (Detail, error) {
	if len(env.Proxies) == 0 {
		var n int64
		err := env.DB.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE usename = $1 AND pid <> pg_backend_pid()`, env.Role).Scan(&n)
		if err != nil {
			return nil, fmt.Errorf("conndrop: terminate the connections of %s: %w", env.Role, err)
		}
		return Detail{"role": env.Role, "connections_reset": n}, nil
	}
	var reset []string
	for _, dep := range Dependencies {
		if _, ok := env.Proxies[dep]; !ok {
			continue
		}
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
		reset = append(reset, dep)
	}
	return Detail{"proxies_reset": reset}, nil
}

// Outage makes a dependency unreachable from T for a while, then brings it
// back: clients that failed retry, and when it returns their retries arrive
// together. Behind toxiproxy its proxy closes; a Redis without one is
// paused (CLIENT PAUSE, which Redis ends by itself when the time is up).
type Outage struct {
	For        time.Duration
	Dependency string
}

var (
	_ Trigger  = Outage{}
	_ Requirer = Outage{}
)

func (Outage) Name() string { return "outage" }
func (o Outage) Describe() string {
	return fmt.Sprintf("%s unreachable from T for %s, then back: a retry storm when it returns", o.Dependency, o.For)
}

// Requires toxiproxy in front of the dependency, or for Redis, one that
// may be paused whole.
func (o Outage) Requires(c Caps) error {
	if slices.Contains(c.Proxies, o.Dependency) || (o.Dependency == "redis" && c.Pause) {
		return nil
	}
	if o.Dependency == "redis" {
		return errors.New("toxiproxy in front of redis (toxiproxy.proxies.redis), or a Redis that may be paused whole, every client of it waiting (redis.allow_pause: true)")
	}
	return fmt.Errorf("toxiproxy in front of %s (toxiproxy.proxies.%s in the target file)", o.Dependency, o.Dependency)
}

// Fire closes the dependency's proxy, or pauses Redis, for o.For. It
// undoes the fault when the time is up or ctx ends, whichever comes first.
func (o Outage) Fire(ctx context.Context, env Env) (Detail, error) {
	if _, ok := env.Proxies[o.Dependency]; !ok {
		return o.pause(ctx, env)
	}
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

// pause makes Redis stop answering every client for o.For. Redis (7.0)
// runs a CLIENT UNPAUSE only once the pause is over, so an arm stopped
// early still waits out the pause before Fire returns: keep Redis outages
// short, or put toxiproxy in front of Redis, whose proxy reopens at once.
func (o Outage) pause(ctx context.Context, env Env) (Detail, error) {
	if err := env.Redis.Do(ctx, "CLIENT", "PAUSE", o.For.Milliseconds(), "ALL").Err(); err != nil {
		return nil, fmt.Errorf("outage: pause redis: %w", err)
	}
	down := time.Now()
	wait(ctx, o.For)
	if ctx.Err() != nil { // stopped early: do not wait for Redis to end the pause
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := env.Redis.Do(uctx, "CLIENT", "UNPAUSE").Err(); err != nil {
			return nil, fmt.Errorf("outage: unpause redis: %w", err)
		}
	}
	return Detail{"dependency": "redis", "paused": true, "for_ms": o.For.Milliseconds(), "down_ms": time.Since(down).Milliseconds()}, nil
}

// SlowDB adds latency to every Postgres reply from T for a while: requests
// take longer, clients time out and retry, and the retries add load to a
// database that is already slow.
type SlowDB struct {
	Latency, For time.Duration
}

var (
	_ Trigger  = SlowDB{}
	_ Requirer = SlowDB{}
)

func (SlowDB) Name() string { return "slowdb" }
func (s SlowDB) Describe() string {
	return fmt.Sprintf("Postgres replies %s slower from T for %s: timeouts, retries, more load", s.Latency, s.For)
}

// Requires toxiproxy in front of Postgres.
func (SlowDB) Requires(c Caps) error {
	if !slices.Contains(c.Proxies, "postgres") {
		return errors.New("toxiproxy in front of postgres (toxiproxy.proxies.postgres in the target file)")
	}
	return nil
}

// SlowToxic names the latency toxic slowdb adds, so it can be found and
// removed after a killed run.
const SlowToxic = "herdbench-slowdb"

// Fire adds a latency toxic to the Postgres proxy for s.For, and removes it
// when the time is up or ctx ends.
func (s SlowDB) Fire(ctx context.Context, env Env) (Detail, error) {
	p, err := proxy(env, "postgres")
	if err != nil {
		return nil, err
	}
	if _, err := p.AddToxic(SlowToxic, "latency", "downstream", 1, toxiclient.Attributes{"latency": s.Latency.Milliseconds()}); err != nil {
		return nil, fmt.Errorf("slowdb: add latency: %w", err)
	}
	slow := time.Now()
	wait(ctx, s.For)
	if err := p.RemoveToxic(SlowToxic); err != nil {
		return nil, fmt.Errorf("slowdb: remove latency: %w", err)
	}
	return Detail{"latency_ms": s.Latency.Milliseconds(), "for_ms": s.For.Milliseconds(), "slow_ms": time.Since(slow).Milliseconds()}, nil
}

func proxy(env Env, dep string) (*toxiclient.Proxy, error) {
	name, ok := env.Proxies[dep]
	if env.Toxiproxy == nil || !ok {
		return nil, fmt.Errorf("the target has no toxiproxy in front of %s", dep)
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

var (
	_ Trigger  = Restart{}
	_ Requirer = Restart{}
)

// Requires a target whose processes herdbench can restart.
func (Restart) Requires(c Caps) error {
	if !c.Restart {
		return errors.New("processes herdbench can restart (the testbed)")
	}
	return nil
}

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

var (
	_ Trigger  = Notify{}
	_ Requirer = Notify{}
)

// Requires a Redis and its invalidation channel.
func (Notify) Requires(c Caps) error {
	if !c.Redis || !c.Channel {
		return errors.New("a Redis and the channel the service listens on for invalidations (redis.address and redis.invalidate_channel in the target file)")
	}
	return nil
}

func (Notify) Name() string { return "notify" }
func (Notify) Describe() string {
	return "a broadcast invalidation of the hot keys at T: every replica reloads them at once"
}

// Fire publishes the hot keys on the target's channel.
func (Notify) Fire(ctx context.Context, env Env) (Detail, error) {
	n, err := env.Redis.Publish(ctx, env.Channel, strings.Join(env.HotKeys, ",")).Result()
	if err != nil {
		return nil, fmt.Errorf("notify: publish: %w", err)
	}
	return Detail{"keys": len(env.HotKeys), "receivers": n}, nil
}
