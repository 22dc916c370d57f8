// Package subject is the bundled testbed as an experiment's subject: the
// engine's Subject (plan.Subject) and its optional seams for the
// testbed's replicas, edges, write path and stores. The engine applies an
// arm, fills, counts and drains through it and never asks which subject
// it has; the command line puts this one in for a testbed target (Open,
// or Describe for a dry run). It is also the testbed's kind of target, its
// arm kinds (write, edge-*), its checks of an arm and its knobs.
package subject

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/predict"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/edge"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/store"
	"github.com/herdbench/herdbench/triggers"
	"golang.org/x/sync/errgroup"
)

// Testbed is the bundled testbed, as a target (the Target it embeds: its
// endpoints and the handles triggers and observers get) and as the
// experiment's subject: every arm flushes its cache and fills it the same
// way through the replicas, which it configures with the arm's strategy
// and resets, and it reads the replicas' own counters. Describe and Open
// make one.
type Testbed struct {
	*targets.Target
	Status testbed.Status // as its provider reported it
	Admin  admin.Fleet    // the replicas' admin API
	// Edges administers the edge replicas of a two-tier testbed, which the
	// clients attack; nil with one tier
	Edges *edge.Fleet
}

var (
	_ plan.Subject             = (*Testbed)(nil)
	_ experiment.WriteObserver = (*Testbed)(nil)
	_ plan.ServerCounter       = (*Testbed)(nil)
	_ plan.Tiered              = (*Testbed)(nil)
	_ plan.Loader              = (*Testbed)(nil)
	_ plan.Configured          = (*Testbed)(nil)
	_ plan.ArmChecker          = (*Testbed)(nil)
)

// warmConcurrency is how many hot keys each replica is asked for at once:
// its database pool (replica.DefaultOptions.DBPoolSize), so the warm takes as
// long as the pools need, not as long as a queue of requests.
const warmConcurrency = 10

// drainTimeout bounds the wait for the replicas' loads to finish.
const drainTimeout = 15 * time.Second

// Config is the config the replicas run now, as the run found them.
func (s *Testbed) Config(ctx context.Context) (json.RawMessage, error) {
	raw, err := s.Admin.Config(ctx)
	if err != nil {
		return nil, err
	}
	c, err := replica.ConfigOf(raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(c)
}

// Keep puts the replicas' config back as the run found it, and the edges'
// policy back to their start-up one.
func (s *Testbed) Keep(ctx context.Context) func() {
	orig, err := s.Admin.Config(ctx)
	if err != nil {
		return func() {}
	}
	return func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.Admin.SetConfig(rctx, orig)
		if s.Edges != nil {
			_, _ = s.Edges.SetConfig(rctx, edge.Patch{})
		}
	}
}

// Apply sends the replicas what the arm sets of their config, over the
// config they were started with, and reads back what they run: the arm's
// effective config. Keep puts back what the run found.
func (s *Testbed) Apply(ctx context.Context, arm arm.Arm, _ plan.ArmAt) (plan.Applied, error) {
	answer, err := s.Admin.Patch(ctx, arm.Knobs)
	if err != nil {
		return plan.Applied{}, fmt.Errorf("arm %s: %w", arm.Name, err)
	}
	cfg, err := replica.ConfigOf(answer)
	if err != nil {
		return plan.Applied{}, fmt.Errorf("arm %s: PUT %s: %w", arm.Name, admin.PathConfig, err)
	}
	bound, err := s.loadBound(ctx, cfg)
	if err != nil {
		return plan.Applied{}, fmt.Errorf("arm %s: %w", arm.Name, err)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return plan.Applied{}, fmt.Errorf("arm %s: %w", arm.Name, err)
	}
	return plan.Applied{Arm: arm, Config: raw, Bound: bound, After: func(context.Context) error { return nil }}, nil
}

// loadBound is the longest one load of the replicas may take under cfg:
// their db-timeout (each answers its own on /healthz; the longest) times
// the attempts of their db_retry, and its waits.
func (s *Testbed) loadBound(ctx context.Context, cfg replica.Config) (time.Duration, error) {
	var timeout time.Duration
	for _, c := range s.Admin {
		h, err := c.Health(ctx)
		if err != nil {
			return 0, fmt.Errorf("replica %s: its db-timeout on /healthz: %w (check it: herdbench testbed status; restart it: herdbench testbed down, then up)", c.URL, err)
		}
		timeout = max(timeout, time.Duration(h.DBTimeoutMS)*time.Millisecond)
	}
	return load.Config{Timeout: timeout, Retry: cfg.DBRetry.Policy}.Bound(), nil
}

// Pools are the replicas' database pools and their deadline, each
// replica's own /healthz answer, for the model's predictions (package
// predict); a replica that does not answer them leaves them 0, which
// the predictions refuse, saying so.
func (s *Testbed) Pools(ctx context.Context) *predict.Pools {
	p := &predict.Pools{Replicas: len(s.Admin)}
	for _, c := range s.Admin {
		h, err := c.Health(ctx)
		if err != nil || h.DBPool <= 0 {
			return &predict.Pools{Replicas: len(s.Admin)}
		}
		p.Connections += int(h.DBPool)
		p.DBTimeout = max(p.DBTimeout, time.Duration(h.DBTimeoutMS)*time.Millisecond)
	}
	return p
}

// Fill flushes the cache, fills it through the replicas (every key of the
// key space once, so the arm measures the herd rather than first-time
// loads of a cold tail), leaves the replicas configured with the arm's
// effective config and resets them with the plan's seed.
func (s *Testbed) Fill(ctx context.Context, p plan.Plan, arm plan.Applied, trig triggers.Trigger, hot []string) (result.Warm, error) {
	for _, c := range s.flushers() { // Redis and the items' cache when it is another
		if err := c.(store.Flusher).Flush(ctx, handles(s.Target), *c.Addr(&s.Status.Addrs)); err != nil {
			return result.Warm{}, err
		}
	}
	if err := s.fillAll(ctx, p, arm, trig, hot); err != nil {
		return result.Warm{}, err
	}
	// every load the fill started ends before the counters reset: a load
	// still running would be the database's in the warm-up and the
	// replicas' in the load (seen once on MariaDB: 20 loads, 19 queries)
	if err := s.drain(ctx); err != nil {
		return result.Warm{}, fmt.Errorf("warm: %w", err)
	}
	if err := s.Admin.Reset(ctx, p.Seed); err != nil {
		return result.Warm{}, err
	}
	if s.Edges != nil {
		var patch edge.Patch
		if err := arm.Edge.Decode(&patch); err != nil {
			return result.Warm{}, fmt.Errorf("arm %s: edge settings: %w", arm.Name, err)
		}
		if _, err := s.Edges.SetConfig(ctx, patch); err != nil {
			return result.Warm{}, err
		}
		if err := s.Edges.Reset(ctx, p.Seed); err != nil {
			return result.Warm{}, err
		}
	}
	return result.Warm{Keys: p.Keys}, nil
}

// fillAll caches the tail in bulk (POST /admin/fill: batches of rows,
// stored as a miss of the arm's config stores them) and loads the hot keys
// through the arm's own path at its query cost, so what the replicas store
// about them (xfetch's load time) is real, with the trigger's TTL.
func (s *Testbed) fillAll(ctx context.Context, p plan.Plan, arm plan.Applied, trig triggers.Trigger, hotKeys []string) error {
	hot := make([]int64, 0, len(hotKeys))
	for _, k := range hotKeys {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return fmt.Errorf("warm: the testbed's key %q is not an item id", k)
		}
		hot = append(hot, id)
	}
	// the fill is setup: what protects the database (ratelimit, breaker,
	// shed) applies from the load on, and so does a lease: its token rate
	// limits its key for lease_interval (2 s), so a warm's token would
	// still hold at T and turn every miss after it into a waiter
	var cfg replica.Config
	if err := json.Unmarshal(arm.Config, &cfg); err != nil {
		return fmt.Errorf("arm %s: not applied: %w", arm.Name, err)
	}
	base := cfg
	base.Strategy = forWarm(base.Strategy)
	hotCfg := base
	if al, ok := trig.(triggers.Aligner); ok {
		hotCfg.TTL = herd.Duration(al.WarmTTL(p.T()))
		if hotCfg.StaleTTL <= hotCfg.TTL {
			hotCfg.StaleTTL = hotCfg.TTL * 10
		}
	}
	tail := func(ctx context.Context) error {
		if _, err := s.Admin.Fill(ctx, int64(p.HotKeys+1), int64(p.Keys)); err != nil {
			return fmt.Errorf("fill the cache: %w", err)
		}
		return nil
	}
	if err := s.Admin.SetConfig(ctx, base); err != nil {
		return err
	}
	if hotCfg == base {
		// one config for both: the tail fills while the hot keys load
		if err := all(ctx, tail, func(ctx context.Context) error { return s.warm(ctx, hot) }); err != nil {
			return err
		}
	} else {
		if err := tail(ctx); err != nil {
			return err
		}
		if err := s.Admin.SetConfig(ctx, hotCfg); err != nil {
			return err
		}
		if err := s.warm(ctx, hot); err != nil {
			return err
		}
	}
	return s.Admin.SetConfig(ctx, cfg)
}

// all runs fns at once and returns their first error, after all ended.
func all(ctx context.Context, fns ...func(context.Context) error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = fn(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// forWarm is strategy without the mitigations that refuse loads, and
// without the lease, whose token outlives the warm's load: the warm stands
// for loads long before T.
func forWarm(strategy string) string {
	var keep []string
	for _, part := range strings.Split(strategy, "+") {
		if !slices.Contains(replica.Protections, part) && part != replica.Lease {
			keep = append(keep, part)
		}
	}
	if len(keep) == 0 {
		return replica.None
	}
	return strings.Join(keep, "+")
}

// warm requests ids through the replicas, as many at once as their
// database pools serve: each is a miss, so each is one load.
func (s *Testbed) warm(ctx context.Context, ids []int64) error {
	fleet := s.Admin
	work := make(chan int64)
	g, ctx := errgroup.WithContext(ctx)
	for w := range warmConcurrency * len(fleet) {
		c := fleet[w%len(fleet)] // a worker asks one replica: each is asked its pool's worth at once
		g.Go(func() error {
			for id := range work {
				code, err := c.Item(ctx, id)
				if err == nil && code != 200 {
					err = fmt.Errorf("status %d", code)
				}
				if err != nil {
					return fmt.Errorf("warm item %d: %w", id, err)
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(work)
		for _, id := range ids {
			select {
			case work <- id:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	return g.Wait()
}

// Drain waits until no replica runs a load, serves an item request or has
// one's background load still to start: under overload a request the
// client gave up on may still be in a replica's hands, and its load would
// land in the next arm or in none.
func (s *Testbed) Drain(ctx context.Context) (*result.DrainWaits, error) {
	return nil, s.drain(ctx)
}

func (s *Testbed) drain(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var e edge.Counters // the edges first: they may still call the replicas
		var err error
		if s.Edges != nil {
			e, err = s.Edges.Counters(ctx)
		}
		var c admin.Counters
		if err == nil && e.InFlight == 0 {
			c, err = s.Admin.Counters(ctx)
		}
		if err == nil && e.InFlight == 0 && c.LoadsInFlight == 0 && c.Busy == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replicas still busy after %s (last: %d edge requests, %d loads, %d requests in flight, %v)", drainTimeout, e.InFlight, c.LoadsInFlight, c.Busy, err)
		case <-tick.C:
		}
	}
}

func (s *Testbed) FillPlan(p plan.Plan, _ []string) string {
	var flush []string
	for _, c := range s.flushers() {
		flush = append(flush, c.Title())
	}
	return fmt.Sprintf("flush the testbed's %s, load every key once through the replicas (%d)", strings.Join(flush, " and "), p.Keys)
}

// flushers are the stores the fill empties.
func (s *Testbed) flushers() []store.Store {
	var out []store.Store
	for _, k := range store.In(s.Status.Addrs).Running() {
		if _, ok := k.(store.Flusher); ok {
			out = append(out, k)
		}
	}
	return out
}

// FillRequests is none of the load's: the replicas are filled directly.
func (s *Testbed) FillRequests(plan.Plan, []string) int64 { return 0 }

// WriteQueue is the replicas' write stream and its consumers' group.
func (s *Testbed) WriteQueue() observe.Queue {
	return observe.Queue{Stream: replica.WriteStream, Group: replica.WriteGroup}
}

// WriteStatements reads the write statements' calls and rows so far: in
// pg_stat_statements, or on MariaDB in its digest table (whose statements
// apply a write in two or three, in a transaction; see docs/testbed.md).
func (s *Testbed) WriteStatements(ctx context.Context) (calls, rows int64, err error) {
	db, ok := store.In(s.Status.Addrs).DB.(store.Writable)
	if !ok {
		return 0, 0, fmt.Errorf("the testbed's %s counts no write statements", store.In(s.Status.Addrs).DB.Title())
	}
	return db.WriteStatements(ctx, handles(s.Target), s.Role)
}

// WriteLag reads the replicas' herdbench_api_write_lag_seconds, summed.
func (s *Testbed) WriteLag(ctx context.Context) (result.WriteLag, error) {
	l, err := s.Admin.WriteLag(ctx)
	return result.WriteLag{Count: l.Count, P50MS: l.P50MS, P99MS: l.P99MS}, err
}

// Servers reads the testbed's own counters for a row: the replicas' loads
// and pools (the loop, loop.go) and, on a call chain, each layer's.
func (s *Testbed) Servers(ctx context.Context) (observe.Servers, error) {
	var out observe.Servers
	if s.Edges != nil {
		e, err := s.Edges.Counters(ctx)
		if err != nil {
			return out, err
		}
		out.Edge, out.EdgeAttempts = e.Requests, e.Attempts
	}
	var b admin.Counters
	out.Replicas = make(map[string]int64, len(s.Admin))
	for i, c := range s.Admin { // each replica's, then their sum
		r, err := c.Counters(ctx)
		if err != nil { // restarting: the others' stand, the sums cannot
			out.Partial = true
			continue
		}
		out.Replicas[fmt.Sprintf("api-%d", i+1)] = r.Requests
		b = b.Plus(r)
	}
	if out.Partial {
		return observe.Servers{Replicas: out.Replicas, Partial: true}, nil
	}
	if s.Edges != nil {
		out.API, out.DBAttempts = b.Requests, b.Loads+b.LoadErrors
	}
	out.Counts = make(map[string]int64, len(rowCounters))
	for _, c := range rowCounters {
		out.Counts[c.Name] = c.of(&b)
	}
	return out, nil
}

// Tier is the edge replicas' policy and counters; nil without an edge tier.
func (s *Testbed) Tier(ctx context.Context) (*result.EdgeTier, error) {
	if s.Edges == nil {
		return nil, nil
	}
	cfg, err := s.Edges.Config(ctx)
	if err != nil {
		return nil, fmt.Errorf("edge policy: %w", err)
	}
	c, err := s.Edges.Counters(ctx)
	if err != nil {
		return nil, fmt.Errorf("edge counters: %w", err)
	}
	return &result.EdgeTier{Config: cfg, Counters: result.EdgeCounters{Requests: c.Requests, Attempts: c.Attempts, Outcomes: c.Outcomes}}, nil
}
