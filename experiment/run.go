// Package experiment runs a Plan against a target once per arm, from the
// same starting state each time, and turns what the clients, Postgres and
// Redis saw into a Report.
//
// Per arm on the testbed: flush the cache and fill it the same way (every
// key once, the hot ones with the arm's config), reset the replicas,
// snapshot, then load (warmup, before), fire the trigger at T, load on
// (after), wait until no load runs in the replicas, and snapshot again. On
// a service herdbench does not control, the arm's hooks run, the hot keys
// are warmed with one request each, and nothing is flushed or reset. Arms
// run one after another: at once, each arm's load would hit the others.
//
// While an arm runs, stop conditions are checked every 100 ms on the last
// second; after all arms, gates on every arm's results.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/triggers"
)

// Env is what Run works with.
type Env struct {
	Target   *targets.Target
	Version  string         // herdbench's, for the report
	Progress func(Progress) // called a few times a second; may be nil
	Observer Observer       // sees every request and T as they happen; may be nil
}

// Progress is where a run is, for a progress line.
type Progress struct {
	Arm, Arms int // 1-based
	Name      string
	Phase     string // warm, warmup, before, after, drain
	Elapsed   time.Duration
	DBQPS     float64
	Requests  int64
}

// apiScrapeLead is how long before T the replicas' counters are read.
const apiScrapeLead = 100 * time.Millisecond

// sleepUntil waits until at, or returns false when ctx ends first.
func sleepUntil(ctx context.Context, at time.Time) bool {
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// drainTimeout bounds the wait for the replicas' loads to finish.
const drainTimeout = 15 * time.Second

// Run runs every arm of p and returns the report. When ctx ends or an arm
// fails, the report holds the arms that finished, is marked partial, and
// the error says why.
func Run(ctx context.Context, p Plan, env Env) (_ *Report, retErr error) {
	// the triggers are built from the plan, so the report shows what ran
	p.TriggerOptions = p.TriggerOptions.OrDefaults()
	reg := triggers.Default(p.TriggerOptions)
	if err := p.Validate(reg.Names()); err != nil {
		return nil, err
	}
	trig, _ := reg.Get(p.Trigger)
	if err := triggers.Supported(trig, env.Target.Caps()); err != nil {
		return nil, fmt.Errorf("target %s: %w", env.Target.Name, err)
	}
	if err := env.Target.CheckLimits(p.Load()); err != nil {
		return nil, err
	}
	st := env.Target.Status
	rep := &Report{
		Schema:    Schema,
		Version:   env.Version,
		Seed:      p.Seed,
		StartedAt: time.Now().UTC(),
		Plan:      p,
		Arms:      []ArmResult{},
		Environment: Environment{
			Provider: st.Provider, Replicas: len(st.API), Target: env.Target.Name,
			Redis: st.Versions["redis"], Postgres: st.Versions["postgres"],
			CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH,
			Herdbench: env.Version,
		},
	}
	if !env.Target.Testbed() {
		rep.Environment.Provider, rep.Environment.Replicas = env.Target.Kind, len(env.Target.Endpoints)
	}
	// a fault whose undo failed, or an arm that failed mid-fault, must not
	// outlive the run: undo what a trigger may have left, on every path
	defer func() {
		if err := env.Target.Rollback(); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("undo the faults the run may have left: %w", err))
		}
	}()
	// leave the testbed's replicas as they were found
	if env.Target.Testbed() {
		if orig, err := env.Target.Config(ctx); err == nil {
			defer func() {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				_ = env.Target.Configure(rctx, orig)
			}()
		}
	}
	for i, arm := range p.Arms {
		res, err := runArm(ctx, p, i, arm, trig, env)
		if err != nil {
			rep.Partial = true
			rep.Error = fmt.Sprintf("arm %s: %v", arm.Name, err)
			rep.Gates = CheckGates(p.Gates, rep.Arms)
			return rep, fmt.Errorf("arm %s: %w", arm.Name, err)
		}
		rep.Arms = append(rep.Arms, *res)
	}
	rep.Gates = CheckGates(p.Gates, rep.Arms)
	return rep, nil
}

type fired struct {
	at     time.Time
	atT    observe.Sample     // the snapshot just before firing
	apiT   map[string]float64 // the replicas' counters just before firing
	detail triggers.Detail
	err    error
}

func runArm(ctx context.Context, p Plan, idx int, arm Arm, trig triggers.Trigger, env Env) (_ *ArmResult, retErr error) {
	tg := env.Target
	interval := observe.DefaultInterval
	src := observe.Source{DB: tg.DB, Redis: tg.Redis, Statements: tg.Statements, Role: tg.Role}
	armStart := time.Now()
	progress := func(phase string, dbqps float64, reqs int64) {
		if env.Progress != nil {
			env.Progress(Progress{Arm: idx + 1, Arms: len(p.Arms), Name: arm.Name, Phase: phase,
				Elapsed: time.Since(armStart), DBQPS: dbqps, Requests: reqs})
		}
	}
	progress("warm", 0, 0)

	// on a service herdbench does not control, the arm is selected by its
	// hooks, headers and query values
	if sel := arm.Select; sel != nil {
		if err := hooks(ctx, "before", sel.Before); err != nil {
			return nil, err
		}
		defer func() {
			hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hookTimeout)
			defer cancel()
			if err := hooks(hctx, "after", sel.After); err != nil && retErr == nil {
				retErr = err
			}
		}()
	}

	// the same starting state for every arm: an empty cache filled the same
	// way, replicas reset
	w0, err := src.Read(ctx)
	if err != nil {
		return nil, err
	}
	if err := tg.Rollback(); err != nil { // a run killed mid-fault leaves its toxics and closed proxies
		return nil, fmt.Errorf("undo the faults a run left: %w", err)
	}
	hot := tg.Hot(p.HotKeys)
	warmStart := time.Now()
	if tg.Testbed() {
		if err := tg.Redis.FlushDB(ctx).Err(); err != nil {
			return nil, fmt.Errorf("flush cache: %w", err)
		}
		if err := warmAll(ctx, tg, p, arm, trig, hot); err != nil {
			return nil, err
		}
	} else if err := warmRequests(ctx, tg, arm, hot); err != nil {
		return nil, err
	}
	warmTook := time.Since(warmStart)
	if tg.Testbed() {
		if err := tg.Reset(ctx, p.Seed); err != nil {
			return nil, err
		}
	}
	s0, err := src.Read(ctx) // db.queries_total counts from here
	if err != nil {
		return nil, err
	}

	tenv := triggers.Env{Redis: tg.Redis, Pattern: tg.Pattern, Owned: tg.Testbed(), Channel: tg.Channel,
		Toxiproxy: tg.Toxiproxy, Proxies: tg.Proxies, DB: tg.DB, Role: tg.Role,
		HotKeys: hot, API: tg.Endpoints, Request: armRequester(tg, arm)}
	if tg.RedisKey != "" {
		tenv.RedisKey = tg.KeyOf
	}
	if tg.Testbed() {
		tenv.Restarter = tg
	}
	if pr, ok := trig.(triggers.Preparer); ok {
		if err := pr.Prepare(ctx, tenv); err != nil {
			return nil, fmt.Errorf("trigger %s: %w", trig.Name(), err)
		}
	}
	if r, ok := trig.(triggers.Releaser); ok {
		defer r.Release() // when Fire never ran
	}

	// load, with the trigger at T
	loadStart := time.Now()
	t := loadStart.Add(p.T())
	src.Since = t
	tenv.T = t
	if al, ok := trig.(triggers.Aligner); ok {
		if err := al.Align(ctx, tenv); err != nil {
			return nil, fmt.Errorf("trigger %s: %w", trig.Name(), err)
		}
	}
	cl := p.ClientsOf(arm)
	rec := newRecorder(t, time.Duration(p.Before), time.Duration(p.After), cl.Critical > 0)
	rec.liveOn = len(p.Abort) > 0 // only stop conditions read the live window
	if env.Observer != nil {
		env.Observer.Arm(arm.Name, true)
		defer env.Observer.Arm(arm.Name, false)
	}
	sampler := observe.Start(ctx, src, interval)
	// a stop condition that holds ends the load and the trigger, which
	// undoes its fault, through armCtx; the arm then ends as usual
	armCtx, abortArm := context.WithCancelCause(ctx)
	defer abortArm(nil)
	firedc := make(chan fired, 1)
	go func() {
		ctx := armCtx
		f := fired{}
		// the replicas' counters, read just before T so T stays exact: a
		// restart of the replicas starts them again
		if !sleepUntil(ctx, t.Add(-apiScrapeLead)) {
			firedc <- fired{err: ctx.Err()}
			return
		}
		if tg.Testbed() {
			f.apiT, _ = tg.Metrics(ctx)
		}
		if !sleepUntil(ctx, t) {
			firedc <- fired{err: ctx.Err()}
			return
		}
		if f.atT, f.err = src.Read(ctx); f.err == nil {
			f.at = time.Now()
			if env.Observer != nil {
				env.Observer.Trigger(arm.Name, f.at)
			}
			f.detail, f.err = trig.Fire(ctx, tenv)
		}
		firedc <- f
	}()
	stopWatch := watch(ctx, sampler, rec, t, time.Duration(p.Warmup), loadStart, progress, p.Abort, abortArm, tg.DB != nil)
	header, query := arm.Select.apply(tg.Header)
	_, attackErr := load.Attack(armCtx, load.Config{
		Targets: tg.Endpoints, Rate: p.Rate, Duration: p.Duration(),
		Request: tg.Request, Source: tg.Source(p.Seed), Header: header, Query: query,
		Keys: p.Keys, Zipf: p.Zipf, Seed: p.Seed, Timeout: time.Duration(p.Timeout),
		Clients: cl.Count, Retry: cl.Retry, Budget: cl.Budget, Throttle: cl.Throttle,
		Hedge: cl.Hedge, Breaker: cl.Breaker, Critical: cl.Critical,
	}, observed(rec, env.Observer, arm.Name))
	stopWatch()
	f := <-firedc
	var stopped *aborted
	if errors.As(context.Cause(armCtx), &stopped) && ctx.Err() == nil {
		// the load and the trigger ended on purpose
		attackErr = nil
		if errors.Is(f.err, context.Canceled) {
			f.err = nil // never fired
		}
	}
	if err := errors.Join(attackErr, ctx.Err()); err != nil {
		sampler.Stop()
		return nil, err
	}
	if f.err != nil {
		sampler.Stop()
		return nil, fmt.Errorf("trigger %s: %w", trig.Name(), f.err)
	}

	// let the replicas finish what they started, then take the last snapshot
	progress("drain", 0, rec.requests())
	if tg.Testbed() {
		if err := drain(ctx, tg); err != nil {
			sampler.Stop()
			return nil, err
		}
	}
	end, err := src.Read(ctx)
	samples, missed, serr := sampler.Stop()
	if err = errors.Join(err, serr); err != nil {
		return nil, err
	}
	res := summarize(p, arm, t, s0, f.atT, end, samples, rec)
	res.Clients = cl
	if stopped != nil {
		// the arm ended early: it did not recover, and the rows after the
		// stop are load that never ran
		res.Aborted, res.RecoveryMS = &stopped.Abort, nil
		res.Timeline = slices.DeleteFunc(res.Timeline, func(r Row) bool { return r.TMS > stopped.AtMS })
	}
	res.MissedSamples = missed
	res.Warm = Warm{Keys: p.Keys, Queries: s0.Calls - w0.Calls, TookMS: warmTook.Milliseconds()}
	if !tg.Testbed() { // a service is warmed with its hot keys only
		res.Warm.Keys = len(hot)
	}
	if b, ok := f.detail["burst"].(triggers.BurstResult); ok {
		res.Burst = &b
		delete(f.detail, "burst")
	}
	if tg.Testbed() {
		metrics, err := tg.Metrics(ctx)
		if err != nil { // the replicas' own counters are lost; the rest stands
			res.Warnings = append(res.Warnings, fmt.Sprintf("replica counters: %v", err))
			metrics = nil
		}
		// counted since the reset before the load: up to T, then from T on,
		// read as a reset if the replicas restarted
		counter := func(name string) int64 {
			atT := int64(f.apiT[name])
			return atT + delta(atT, int64(metrics[name]))
		}
		api := &APICounters{
			Loads:       counter("herdbench_api_loads_total"),
			LoadErrors:  counter("herdbench_api_load_errors_total"),
			EarlyLoads:  counter("herdbench_api_early_loads_total"),
			Coalesced:   counter("herdbench_api_coalesced_total"),
			StaleServed: counter("herdbench_api_stale_served_total"),
			LockWaits:   counter("herdbench_api_lock_waits_total"),
		}
		if metrics != nil {
			res.API = api
		}
	}
	// the service's own metrics over the timeline, as its Prometheus has
	// them; the arm is measured either way
	if tg.Prometheus != nil {
		series, err := tg.Series(ctx, t.Add(-time.Duration(p.Before)), t.Add(time.Duration(p.After)), t)
		if err != nil {
			res.Warnings = append(res.Warnings, err.Error())
		}
		res.Prometheus = series
	}
	// what the target does not let herdbench observe has no figures
	if tg.DB == nil {
		res.DB, res.Warm.Queries = nil, 0
	}
	if tg.Redis == nil {
		res.Cache = nil
	}
	res.Trigger = TriggerResult{Name: trig.Name(), Detail: f.detail}
	if !f.at.IsZero() {
		at := f.at.UTC()
		res.Trigger.FiredAt = &at
	}
	return res, nil
}

// warmAll fills the cache through the replicas: every key of the key space
// once, so the arm measures the herd rather than first-time loads of a cold
// tail. The tail is loaded at no query cost, to take a second rather than
// minutes; the hot keys at the arm's cost, so what the replicas store about
// them (xfetch's load time) is real, and with the trigger's warm config.
func warmAll(ctx context.Context, tg *targets.Target, p Plan, arm Arm, trig triggers.Trigger, hotKeys []string) error {
	hot := make([]int64, 0, len(hotKeys))
	for _, k := range hotKeys {
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return fmt.Errorf("warm: the testbed's key %q is not an item id", k)
		}
		hot = append(hot, id)
	}
	// the fill is setup: what protects the database (ratelimit, breaker,
	// shed) applies from the load on
	base := arm.Config
	base.Strategy = unprotected(base.Strategy)
	tail := base
	tail.QueryCost = 0
	if err := tg.Configure(ctx, tail); err != nil {
		return err
	}
	tailIDs := make([]int64, 0, p.Keys-p.HotKeys)
	for id := int64(p.HotKeys + 1); id <= int64(p.Keys); id++ {
		tailIDs = append(tailIDs, id)
	}
	if err := warm(ctx, tg, tailIDs); err != nil {
		return err
	}
	hotCfg := base
	if wc, ok := trig.(triggers.WarmConfigurer); ok {
		hotCfg = wc.WarmConfig(base, p.T())
	}
	if err := tg.Configure(ctx, hotCfg); err != nil {
		return err
	}
	if err := warm(ctx, tg, hot); err != nil {
		return err
	}
	return tg.Configure(ctx, arm.Config)
}

// unprotected is strategy without the mitigations that refuse loads.
func unprotected(strategy string) string {
	var keep []string
	for _, part := range strings.Split(strategy, "+") {
		if !slices.Contains(api.Protections, part) {
			keep = append(keep, part)
		}
	}
	if len(keep) == 0 {
		return api.None
	}
	return strings.Join(keep, "+")
}

// warm requests ids through the replicas, a few at a time: each is a miss,
// so each is one load.
func warm(ctx context.Context, tg *targets.Target, ids []int64) error {
	return each(ctx, len(ids), 16, func(ctx context.Context, w, i int) error {
		code, err := tg.Get(ctx, w, ids[i])
		if err == nil && code != 200 {
			err = fmt.Errorf("status %d", code)
		}
		if err != nil {
			return fmt.Errorf("warm item %d: %w", ids[i], err)
		}
		return nil
	})
}

// each runs fn for 0..n-1 on workers goroutines (fn learns which worker it
// runs on), and returns the first error, after which the rest is skipped.
func each(ctx context.Context, n, workers int, fn func(ctx context.Context, worker, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range work {
				if err := fn(ctx, w, i); err != nil {
					select {
					case errc <- err:
					default:
					}
					cancel()
				}
			}
		})
	}
	for i := range n {
		select {
		case work <- i:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return ctx.Err()
	}
}

// drain waits until no replica runs a load, so none of this arm's loads
// lands in the next arm's figures.
func drain(ctx context.Context, tg *targets.Target) error {
	ctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		m, err := tg.Metrics(ctx)
		if err == nil && m["herdbench_api_loads_in_flight"] == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("replicas still loading after %s (last: %v, %v)", drainTimeout, m["herdbench_api_loads_in_flight"], err)
		case <-tick.C:
		}
	}
}

// aborted is the cause an arm's context ends with when a stop condition
// held.
type aborted struct{ Abort }

func (a *aborted) Error() string { return "aborted: " + a.Reason }

// watch reports progress and checks the stop conditions every RowWidth
// until the returned stop is called. When a condition holds on the live
// figures it ends the arm through abort, once.
func watch(ctx context.Context, s *observe.Sampler, rec *recorder, t time.Time, warmup time.Duration,
	loadStart time.Time, progress func(string, float64, int64), conds []gates.Gate, abort context.CancelCauseFunc, observesDB bool) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(RowWidth)
		defer tick.Stop()
		var recent []observe.Sample // the last LiveWindow of samples, and one before
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := time.Now()
			phase := "after"
			switch {
			case now.Before(loadStart.Add(warmup)):
				phase = "warmup"
			case now.Before(t):
				phase = "before"
			}
			if cur, ok := s.Latest(); ok && (len(recent) == 0 || cur.At.After(recent[len(recent)-1].At)) {
				recent = append(recent, cur)
				for len(recent) > 2 && cur.At.Sub(recent[1].At) > LiveWindow {
					recent = recent[1:]
				}
			}
			qps, haveQPS := dbRate(recent)
			progress(phase, qps, rec.requests())
			if len(conds) == 0 {
				continue
			}
			figures := rec.liveFigures(now)
			if haveQPS && observesDB {
				figures["db.qps"] = &qps
			}
			if c, v, ok := checkAbort(conds, figures); ok {
				abort(&aborted{Abort{AtMS: now.Sub(t).Milliseconds(), Gate: c.Expr,
					Reason: fmt.Sprintf("%s held: %s was %s over the last %s", c.Expr, c.Path, strconv.FormatFloat(v, 'g', 4, 64), LiveWindow)}})
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// warmRequests fills the cache of a service herdbench does not control the
// only way it can: one request for each hot key, with the arm's headers
// and query values, a few at a time.
func warmRequests(ctx context.Context, tg *targets.Target, arm Arm, hot []string) error {
	build := armRequester(tg, arm)
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: load.NoRedirects}
	return each(ctx, len(hot), 8, func(ctx context.Context, _, i int) error {
		base := tg.Endpoints[i%len(tg.Endpoints)]
		req, err := build(ctx, base, hot[i])
		if err == nil {
			var resp *http.Response
			if resp, err = client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 300 {
					err = fmt.Errorf("status %s", resp.Status)
				}
			}
		}
		if err != nil {
			return fmt.Errorf("warm key %s on %s: %w (the hot keys are the first keys.hot of the target's key space: are they keys the service serves?)", hot[i], base, err)
		}
		return nil
	})
}

// armRequester builds the target's request for a key with the arm's
// headers and query values.
func armRequester(tg *targets.Target, arm Arm) triggers.Requester {
	return func(ctx context.Context, base, key string) (*http.Request, error) {
		req, err := tg.NewRequest(ctx, base, key)
		if err != nil || arm.Select == nil {
			return req, err
		}
		for k, v := range arm.Select.Headers {
			req.Header.Set(k, v)
		}
		if len(arm.Select.Query) > 0 {
			q := req.URL.Query()
			for k, v := range arm.Select.Query {
				q.Set(k, v)
			}
			req.URL.RawQuery = q.Encode()
		}
		return req, nil
	}
}

// hookTimeout bounds each hook command.
const hookTimeout = time.Minute

// hooks runs an arm's commands in order with sh -c; the first that fails
// ends the arm, with its output.
func hooks(ctx context.Context, when string, cmds []string) error {
	for _, c := range cmds {
		hctx, cancel := context.WithTimeout(ctx, hookTimeout)
		out, err := exec.CommandContext(hctx, "sh", "-c", c).CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("%s hook %q: %v: %s", when, c, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
