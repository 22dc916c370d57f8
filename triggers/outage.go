package triggers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/herdbench/herdbench/figure"
	"github.com/herdbench/herdbench/herd"
)

// Outage makes a dependency unreachable from T for a while, then brings it
// back: clients that failed retry, and when it returns their retries arrive
// together. Behind toxiproxy its proxy closes; a Redis without one is
// paused (CLIENT PAUSE, which Redis ends by itself when the time is up).
type Outage struct {
	For        herd.Duration `json:"outage" help:"how long the dependency is unreachable"`
	Dependency Dependency    `json:"dependency" help:"the dependency that goes away"`
}

// NewOutage is an outage with its defaults: Postgres, for 2 s.
func NewOutage() *Outage {
	return &Outage{For: herd.Duration(2 * time.Second), Dependency: herd.Postgres}
}

// OutageDetail is what outage did.
type OutageDetail struct {
	Dependency string `json:"dependency"`
	Paused     bool   `json:"paused,omitempty"` // a Redis paused whole, rather than its proxy closed
	ForMS      int64  `json:"for_ms"`
	DownMS     int64  `json:"down_ms"` // shorter than for_ms when the arm was stopped early
}

// Figures walks the detail's figures (trigger.detail.*), declared here.
func (d *OutageDetail) Figures(path string, c *figure.Collector) any {
	return figure.Pointer(d, path, c, figure.Decl[OutageDetail]{
		figure.MillisOf("for_ms", func(d *OutageDetail) *int64 { return &d.ForMS }),
		figure.MillisOf("down_ms", func(d *OutageDetail) *int64 { return &d.DownMS }),
	})
}

var (
	_ Trigger  = (*Outage)(nil)
	_ Requirer = (*Outage)(nil)
	_ Lasting  = (*Outage)(nil)
)

func (*Outage) Name() string { return "outage" }

// Detail is an empty OutageDetail, into which results are read.
func (*Outage) Detail() any { return &OutageDetail{} }
func (o *Outage) Describe() string {
	return fmt.Sprintf("%s unreachable from T for %s, then back: a retry storm when it returns", o.Dependency, o.For)
}

// Validate checks the outage's length.
func (o *Outage) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	if o.For <= 0 || o.For > herd.Duration(time.Minute) {
		errs.Add("outage", "%s out of range (accepted: more than 0, at most 1m)", o.For)
	}
	return errs
}

// Lasts is how long the dependency stays away.
func (o *Outage) Lasts() (string, time.Duration) { return "outage", time.Duration(o.For) }

// Requires toxiproxy in front of the dependency, or for Redis, one that
// may be paused whole.
func (o *Outage) Requires(c Caps) error {
	dep := string(o.Dependency)
	if slices.Contains(c.Proxies, dep) || (dep == herd.Redis && c.Pause) {
		return nil
	}
	if dep == herd.Redis {
		return errors.New("toxiproxy in front of redis (toxiproxy.proxies.redis), or a Redis that may be paused whole, every client of it waiting (redis.allow_pause: true)")
	}
	return fmt.Errorf("toxiproxy in front of %s (toxiproxy.proxies.%s in the target file)", dep, dep)
}

func (o *Outage) Plan(env Env) string {
	if name, ok := env.Proxies[string(o.Dependency)]; ok {
		return fmt.Sprintf("disable toxiproxy proxy %s (%s) for %s, then enable it", name, o.Dependency, o.For)
	}
	if p := pauser(env); p != nil && o.Dependency == herd.Redis {
		return p.DescribePause(time.Duration(o.For))
	}
	return fmt.Sprintf("nothing: the target declares no toxiproxy in front of %s and no cache that may be paused", o.Dependency)
}

// Fire closes the dependency's proxy, or pauses Redis, for o.For. It
// undoes the fault when the time is up or ctx ends, whichever comes first.
func (o *Outage) Fire(ctx context.Context, env Env) (Fired, error) {
	dep, d := string(o.Dependency), time.Duration(o.For)
	if _, ok := env.Proxies[dep]; !ok {
		return o.pause(ctx, env)
	}
	p, err := proxy(env, dep)
	if err != nil {
		return Fired{}, err
	}
	if err := p.Disable(); err != nil {
		return Fired{}, fmt.Errorf("outage: close %s proxy: %w", dep, err)
	}
	down := time.Now()
	wait(ctx, d)
	if err := p.Enable(); err != nil {
		return Fired{}, fmt.Errorf("outage: reopen %s proxy: %w", dep, err)
	}
	return Fired{Detail: &OutageDetail{Dependency: dep, ForMS: d.Milliseconds(), DownMS: time.Since(down).Milliseconds()}, Ended: time.Now()}, nil
}

// pause makes Redis stop answering every client for o.For. Redis (7.0)
// runs a CLIENT UNPAUSE only once the pause is over, so an arm stopped
// early still waits out the pause before Fire returns: keep Redis outages
// short, or put toxiproxy in front of Redis, whose proxy reopens at once.
func (o *Outage) pause(ctx context.Context, env Env) (Fired, error) {
	d, p := time.Duration(o.For), pauser(env)
	if p == nil || o.Dependency != herd.Redis {
		return Fired{}, fmt.Errorf("outage: the target has no toxiproxy in front of %s and no cache that may be paused", o.Dependency)
	}
	if err := p.Pause(ctx, d); err != nil {
		return Fired{}, fmt.Errorf("outage: %w", err)
	}
	down := time.Now()
	wait(ctx, d)
	if ctx.Err() != nil { // stopped early: do not wait for Redis to end the pause
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := p.Unpause(uctx); err != nil {
			return Fired{}, fmt.Errorf("outage: %w", err)
		}
	}
	return Fired{Detail: &OutageDetail{Dependency: herd.Redis, Paused: true, ForMS: d.Milliseconds(), DownMS: time.Since(down).Milliseconds()}, Ended: time.Now()}, nil
}

// pauser is the cache of env that may be paused whole; nil: none.
func pauser(env Env) Pauser {
	for _, c := range env.Caches {
		if p, ok := c.(Pauser); ok {
			return p
		}
	}
	return nil
}
