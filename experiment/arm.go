package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// armRun is one arm of a run, step by step: select, fill, prepare the
// trigger, load with the trigger at T, drain, collect.
type armRun struct {
	p    plan.Plan
	idx  int
	arm  arm.Arm
	trig triggers.Trigger
	env  Env
	sub  plan.Subject
	tg   *targets.Target

	applied plan.Applied // the arm as the subject applied it

	src   observe.Source
	start time.Time
	hot   []string

	clock     *clock
	phase     string        // the phase progress last reported
	since     time.Time     // when it began
	loadStart time.Time     // when the load's schedule began
	writes0   [2]int64      // a write herd's write statements (calls, rows) after the fill
	ending    *ending       // how the arm may end on its verdict; nil: it runs its after window
	settle    time.Duration // the longest timeout on the arm's path (settleOf), for judge
}

// scheduleLead is how long before its schedule starts a load is set up:
// what a late start costs shows as the generator's lag.
const scheduleLead = 50 * time.Millisecond

// apiScrapeLead is how long before T the service's counters are read.
const apiScrapeLead = 100 * time.Millisecond

// HookTimeout bounds each hook command.
const HookTimeout = time.Minute

func (a *armRun) run(ctx context.Context) (_ *result.ArmResult, retErr error) {
	a.start = time.Now()
	a.src = observe.Source{DB: a.tg.DB, MySQL: a.tg.MySQL, Redis: a.tg.Redis, Memcached: a.tg.Memcached,
		Statements: a.tg.Statements, Role: a.tg.Role, HAProxy: plan.LBFor(a.tg, a.arm)}
	if s, ok := a.sub.(plan.ServerCounter); ok { // the replicas' own counters, and a call chain's layers, every row
		a.src.Servers = s.Servers
	}
	if a.writeHerd() { // the write queue's depth, every row
		a.src.Queue = a.sub.(WriteObserver).WriteQueue()
	}
	a.hot = a.tg.Hot(a.p.HotKeys)
	a.progress(PhaseFill, 0, 0)
	applied, err := a.sub.Apply(ctx, a.arm, plan.ArmAt{Index: a.idx, ResultsDir: a.env.ResultsDir})
	if err != nil {
		return nil, err
	}
	a.applied = applied
	defer func() {
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), HookTimeout)
		defer cancel()
		if err := applied.After(hctx); err != nil && retErr == nil {
			retErr = err
		}
	}()
	filling := time.Now()
	warm, w0, s0, err := a.fill(ctx)
	if err != nil {
		return nil, err
	}
	fillTook := time.Since(filling)
	if err := a.tg.Filled(ctx, a.hot, w0, s0); err != nil { // a cache key or series that reads nothing: refused before T
		return nil, err
	}
	if a.writeHerd() {
		if a.writes0[0], a.writes0[1], err = a.writeStatements(ctx); err != nil {
			return nil, err
		}
	}
	tenv := a.triggerEnv()
	fire, release, err := a.prepare(ctx, tenv)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := release(ctx); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("trigger %s: %w", a.trig.Name(), err))
		}
	}()
	if obs := a.env.Observer; obs != nil {
		obs.Arm(a.arm.Name, true)
		defer obs.Arm(a.arm.Name, false)
		observeClasses(obs, a.arm.Name, a.tg.Classes)
	}
	ld, err := a.load(ctx, tenv, fire)
	if err != nil {
		return nil, err
	}
	res, err := a.collect(ctx, warm, s0, ld)
	if err == nil {
		res.Timing.FillMS = fillTook.Milliseconds()
		observeJudged(a.env.Observer, a.arm.Name, res)
	}
	return res, err
}

// progress reports where the arm is, noting when its phase began.
func (a *armRun) progress(phase string, dbqps float64, reqs int64) {
	now := time.Now()
	if phase != a.phase {
		a.phase, a.since = phase, now
		switch phase { // the load's phases begin on its schedule, not when noticed
		case PhaseWarmup:
			a.since = a.loadStart
		case PhaseBefore:
			a.since = a.loadStart.Add(time.Duration(a.p.Warmup))
		case PhaseAfter:
			a.since = a.loadStart.Add(a.p.T())
		}
		observePhase(a.env.Observer, a.arm.Name, phase, a.since)
	}
	if a.env.Progress == nil {
		return
	}
	if a.clock == nil {
		a.clock = newClock()
	}
	a.env.Progress(Progress{Arm: a.idx + 1, Arms: len(a.p.Arms), Name: a.arm.Name, Phase: phase, PhaseStarted: a.since,
		RunStarted: a.clock.started, Ends: a.clock.ends(now, a.idx, len(a.p.Arms), phase, a.since, a.loadStart, a.p.Duration()),
		DBQPS: dbqps, Requests: reqs})
}

// fill brings the service to the arm's starting state, the same for every
// arm, and returns what the fill cost and the snapshot the arm's figures
// count from.
func (a *armRun) fill(ctx context.Context) (warm result.Warm, w0, s0 observe.Sample, err error) {
	if w0, err = a.src.Read(ctx); err != nil {
		return result.Warm{}, w0, s0, err
	}
	if err := a.tg.Rollback(); err != nil { // a run killed mid-fault leaves its toxics and closed proxies
		return result.Warm{}, w0, s0, fmt.Errorf("undo the faults a run left: %w", err)
	}
	start := time.Now()
	if warm, err = a.sub.Fill(ctx, a.p, a.applied, a.trig, a.hot); err != nil {
		return result.Warm{}, w0, s0, err
	}
	warm.TookMS = time.Since(start).Milliseconds()
	if s0, err = a.src.Read(ctx); err != nil { // db.queries_total counts from here
		return result.Warm{}, w0, s0, err
	}
	warm.Queries = s0.Calls - w0.Calls + s0.FillCalls - w0.FillCalls
	return warm, w0, s0, nil
}

// triggerEnv is what the trigger may touch of the target.
func (a *armRun) triggerEnv() triggers.Env {
	return plan.TriggerEnv(a.tg, a.arm, a.hot, a.p.Seed, a.env.ResultsDir)
}

// fireFunc fires the trigger at T.
type fireFunc func(ctx context.Context, env triggers.Env) (triggers.Fired, error)

// releaseFunc runs after the arm, on every path: it undoes what the
// trigger has an undo for (triggers.Undoer) and frees what it held.
type releaseFunc func(ctx context.Context) error

func noRelease(context.Context) error { return nil }

// prepare sets up what the trigger needs before the load, so nothing of
// it takes time at T; release undoes what the trigger did, when it has an
// undo of its own, and frees what it held. A burst released by the
// workers (splitBurst) is theirs to prepare and fire: here it fires
// nothing, and its figures come with their results.
func (a *armRun) prepare(ctx context.Context, env triggers.Env) (fireFunc, releaseFunc, error) {
	if a.splitBurst() > 0 {
		return func(context.Context, triggers.Env) (triggers.Fired, error) {
			return triggers.Fired{Detail: &triggers.BurstDetail{}}, nil
		}, noRelease, nil
	}
	pr, ok := a.trig.(triggers.Preparer)
	if !ok {
		return a.trig.Fire, noRelease, nil
	}
	armed, err := pr.Prepare(ctx, env)
	if err != nil {
		return nil, nil, fmt.Errorf("trigger %s: %w", a.trig.Name(), err)
	}
	return armed.Fire, func(ctx context.Context) error {
		defer armed.Close()
		if u, ok := armed.(triggers.Undoer); ok {
			return u.Undo(ctx) // also when ctx ended: an undo puts things back
		}
		return nil
	}, nil
}

// splitBurst is the burst trigger's clients when the generator releases
// them (its workers, each a share); 0 otherwise.
func (a *armRun) splitBurst() int {
	if b, ok := a.trig.(triggers.Splitter); ok && sendsBursts(a.env.generator()) {
		return b.BurstClients()
	}
	return 0
}

// fired is what happened at T.
type fired struct {
	at   time.Time
	atT  observe.Sample  // the snapshot just before firing
	apiT result.Counters // the service's counters just before T; nil without
	triggers.Fired
	err error
}

// loaded is what the load left for collect.
type loaded struct {
	t       time.Time
	rec     *Recorder
	sampler *observe.Sampler
	fired   fired
	stopped *aborted        // the stop condition that ended the arm, or nil
	ending  *ending         // how it may end on its verdict; nil: it runs its after window
	workers *result.Workers // how the workers kept the herd; nil without
	steady  *steady         // the trigger's steady load; nil without
}

// sampled is what the arm's sampler reads: its source, each reading of
// the load balancer shown to the observer as it is taken.
func (a *armRun) sampled() observe.Source {
	src := a.src
	if a.tg.HAProxy != nil {
		src.Seen = lbSeen(a.env.Observer, a.arm.Name)
	}
	return src
}

// job is what the arm's generator sends: the plan's load with the arm's
// clients cl, selection and endpoints.
func (a *armRun) job(cl arm.Clients) Job {
	p := a.p
	header, query := a.arm.Select.Apply(a.tg.Header)
	return Job{Arm: a.arm.Name, Cut: a.ending.cutter(), Steps: a.ending.stepsOf(), Load: load.Config{
		Targets: plan.EndpointsFor(a.tg, a.arm), Rate: p.Rate, Duration: p.Duration(),
		Request: a.tg.Request, Header: header, Query: query,
		Keys: p.Keys, Zipf: p.Zipf, Seed: p.Seed, Timeout: time.Duration(p.Timeout),
		Clients: cl.Count, Retry: cl.Retry, Budget: cl.Budget, Throttle: cl.Throttle,
		Hedge: cl.Hedge, Breaker: cl.Breaker, Critical: cl.Critical, ShedStatuses: a.tg.ShedStatuses, FailStatuses: a.tg.FailStatuses,
	}, Space: a.tg.Space, Classes: a.tg.Classes, Seed: p.Seed, Before: time.Duration(p.Before), After: time.Duration(p.After), Critical: cl.Critical > 0,
		Live: len(p.Abort) > 0, Burst: a.splitBurst(), HotKeys: a.hot}
}

// load runs the arm's load from start to end with the trigger at T, the
// samplers and the stop conditions.
func (a *armRun) load(ctx context.Context, tenv triggers.Env, fire fireFunc) (*loaded, error) {
	p := a.p
	cl := p.ClientsOf(a.arm)
	lc := load.Config{Timeout: time.Duration(p.Timeout), Retry: cl.Retry}
	a.ending = newEnding(p, lc.Bound())
	a.settle = verdict.SettleOf(lc.Bound(), a.applied.Bound)
	gen, err := a.env.generator().Prepare(ctx, a.job(cl))
	if err != nil {
		return nil, err
	}
	heard := heardOf(gen)
	if a.ending != nil {
		a.ending.heard = heard
	}
	a.ending.leadOf(gen)
	// the load's schedule starts a moment from now, once everything below
	// is ready, so that T falls on it
	loadStart := time.Now().Add(gen.Lead())
	a.loadStart = loadStart
	t := loadStart.Add(p.T())
	a.src.Since, tenv.T = t, t
	if al, ok := a.trig.(triggers.Aligner); ok {
		if err := al.Align(ctx, tenv); err != nil {
			return nil, fmt.Errorf("trigger %s: %w", a.trig.Name(), err)
		}
	}
	rec := NewRecorder(t, time.Duration(p.Before), time.Duration(p.After), cl.Critical > 0)
	rec.liveOn = len(p.Abort) > 0 // only stop conditions read the live window
	rec.FileClasses(len(a.tg.Classes))
	observeBins(rec, a.env.Observer, a.arm.Name)
	ld := &loaded{t: t, rec: rec, sampler: observe.Start(ctx, a.sampled(), observe.DefaultInterval), ending: a.ending}
	// a stop condition that holds ends the load and the trigger, which
	// undoes its fault, through armCtx; the arm then ends as usual
	armCtx, abortArm := context.WithCancelCause(ctx)
	defer abortArm(nil)
	firedc := a.fireAt(armCtx, abortArm, t, tenv, fire)
	w := watcher{sampler: ld.sampler, rec: rec, t: t, loadStart: loadStart, warmup: time.Duration(p.Warmup), progress: a.progress,
		conds: numberConds(p.Abort), abort: abortArm, observesDB: a.tg.DB != nil || a.tg.MySQL != nil, judgeEvery: judgeEvery, heard: heard}
	if e := a.ending; e != nil {
		w.judge = func(now time.Time) bool { return e.check(a, now, ld.sampler, rec, t) }
	}
	stopWatch := watch(ctx, w)
	ld.steady = a.startSteady(armCtx, tenv, loadStart, t)
	var attackErr error
	ld.workers, attackErr = gen.Run(armCtx, loadStart, t, rec, observed(rec, a.env.Observer, a.arm.Name))
	attackErr = errors.Join(attackErr, ld.steady.wait())
	stopWatch()
	ld.fired = <-firedc
	if ws := ld.workers; ws != nil && ws.Burst != nil {
		ld.fired.Burst = ws.Burst
	}
	if refused := new(*herd.FieldError); errors.As(ld.fired.err, refused) {
		// the target's file refused at T (targets.Counted): it says why
		ld.sampler.Stop()
		return nil, ld.fired.err
	}
	if err := ld.fired.err; err != nil && ctx.Err() == nil && errors.Is(context.Cause(armCtx), err) {
		// the trigger failed and ended the load: its error says why
		ld.sampler.Stop()
		return nil, fmt.Errorf("trigger %s: %w", a.trig.Name(), err)
	}
	if errors.As(context.Cause(armCtx), &ld.stopped) && ctx.Err() == nil {
		// the load and the trigger ended on purpose
		attackErr = nil
		if errors.Is(ld.fired.err, context.Canceled) {
			ld.fired.err = nil // never fired
		}
	}
	if err := errors.Join(attackErr, ctx.Err()); err != nil {
		ld.sampler.Stop()
		return nil, err
	}
	if ld.fired.err != nil {
		ld.sampler.Stop()
		return nil, fmt.Errorf("trigger %s: %w", a.trig.Name(), ld.fired.err)
	}
	return ld, nil
}

// fireAt reads the service's counters just before T (so T stays exact: a
// restart of the replicas starts them again), then at T snapshots the
// sources and fires the trigger. A trigger that fails ends the load
// through abort: the arm has failed, and nothing after T would count.
func (a *armRun) fireAt(ctx context.Context, abort context.CancelCauseFunc, t time.Time, tenv triggers.Env, fire fireFunc) <-chan fired {
	firedc := make(chan fired, 1)
	go func() {
		var f fired
		if !load.SleepUntil(ctx, t.Add(-apiScrapeLead)) {
			firedc <- fired{err: ctx.Err()}
			return
		}
		f.apiT, _ = a.sub.Counters(ctx) // lost, they count from zero
		if !load.SleepUntil(ctx, t) {
			firedc <- fired{err: ctx.Err()}
			return
		}
		stores := a.src
		stores.Servers = nil // their scrapes would delay T; the timeline has them
		if f.atT, f.err = stores.Read(ctx); f.err == nil {
			f.err = a.tg.Counted(f.atT) // statements that matched nothing: refused before firing
		}
		if f.err == nil {
			f.at = time.Now()
			if a.env.Observer != nil {
				a.env.Observer.Trigger(a.arm.Name, f.at)
			}
			f.Fired, f.err = fire(ctx, tenv)
			// a trigger that does not say ended when Fire returned; a burst
			// the workers release ends with them, unknown here
			if f.err == nil && f.Ended.IsZero() && a.splitBurst() == 0 {
				f.Ended = time.Now()
			}
			if f.err == nil {
				a.ending.fired(f.atT, cmp.Or(f.Ended, f.at))
			}
		}
		if f.err != nil && ctx.Err() == nil {
			abort(f.err)
		}
		firedc <- f
	}()
	return firedc
}
