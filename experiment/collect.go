package experiment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/triggers"
)

// collect lets the service finish what the arm started, takes the last
// snapshot and sums the arm up.
func (a *armRun) collect(ctx context.Context, warm result.Warm, s0 observe.Sample, ld *loaded) (*result.ArmResult, error) {
	a.progress(PhaseDrain, 0, ld.rec.requests())
	draining := time.Now()
	loadEnd, endErr := a.src.Read(ctx) // what the drain adds counts from here
	waits, drainErr := a.sub.Drain(ctx)
	if drainErr != nil && !errors.Is(drainErr, plan.ErrStillRunning) {
		ld.sampler.Stop()
		return nil, drainErr
	}
	end, err := a.settled(ctx, s0)
	samples, missed, serr := ld.sampler.Stop()
	if err = errors.Join(err, serr); err != nil {
		return nil, err
	}
	f := ld.fired
	p := a.p
	after, cut := ld.ending.cutAfter(ld.t)
	if cut { // it ended on its verdict: its after window ends there
		p.After = herd.Duration(after)
	}
	res := summarize(p, a.arm, ld.t, s0, f.atT, end, samples, ld.rec)
	if cut {
		ms := after.Milliseconds()
		res.Timing.AfterMS = &ms
	}
	res.Config = a.applied.Config // what the replicas ran, not only what the arm set
	res.Timing.DrainMS = time.Since(draining).Milliseconds()
	res.Timing.Drain = waits
	if endErr == nil {
		drained(res.DB, loadEnd, end, samples)
	}
	res.DrainedOrNot(drainErr)
	res.Clients = a.p.ClientsOf(a.arm)
	if s := ld.stopped; s != nil {
		// the arm ended early: it did not recover, and the rows after the
		// stop are load that never ran
		res.Aborted = &s.Abort
		res.Timeline = slices.DeleteFunc(res.Timeline, func(r result.Row) bool { return r.TMS > s.AtMS })
		res.RowHists = res.RowHists[:min(len(res.RowHists), len(res.Timeline))]
		aboveOfRowsThatRan(res)
		res.Load = ld.rec.generator(time.Duration(a.p.Before) + time.Duration(s.AtMS)*time.Millisecond)
	}
	res.MissedSamples = missed
	res.Workers = ld.workers
	res.Warm = warm
	res.Burst = f.Burst
	res.Trigger = a.triggerResult(ctx, ld)
	res.Warnings = append(res.Warnings, ld.fired.Warnings...)
	if a.writeHerd() {
		a.writeFigures(ctx, res, a.writes0, samples, ld.steady)
	}
	stuck := ld.ending.stuckRows(res.Timeline) // an escape's lower load is not the loop's
	res.Windows = result.WindowsOf(stuck, res.Trigger.EndedMS)
	res.SettleMS = a.settleMS()
	ld.ending.judgeOn(res)
	res.Escape = ld.ending.escapeResult(res)
	res.Requests = ld.rec.requestFigures(result.ClassesOf(a.tg.Classes), res)
	res.Loop = verdict.LoopOf(stuck, res.Trigger.EndedMS, verdict.Sources{DB: a.tg.DB != nil || a.tg.MySQL != nil,
		Cache: a.tg.Redis != nil || a.tg.Memcached != nil, Replicas: a.counted()})
	if res.Verdict == result.Metastable {
		res.Loop.HeldBy = result.HeldBy(res.Loop)
	}
	if s := ld.ending.stop(); s != nil && res.Aborted == nil {
		res.Aborted = s // after judging: the arm ran whole up to its stop
	}
	a.counters(ctx, res, f.apiT)
	a.layers(ctx, res, ld.rec)
	a.series(ctx, res, ld.t)
	// what the target does not let herdbench observe has no figures
	if a.tg.DB == nil && a.tg.MySQL == nil {
		res.DB, res.Warm.Queries = nil, 0
	}
	if a.tg.Redis == nil && a.tg.Memcached == nil {
		res.Cache = nil
	}
	a.loadBalancer(res, f.atT, end, samples) // after: its end-to-end figure has a database's factor only where one is observed
	return res, nil
}

// triggerResult is what the trigger did: its detail (settled, for a
// trigger whose figures finish after T), when it fired and when its cause
// was over, from T.
func (a *armRun) triggerResult(ctx context.Context, ld *loaded) result.TriggerResult {
	f := ld.fired
	tr := result.TriggerResult{Name: a.trig.Name(), Detail: f.Detail}
	if st, ok := a.trig.(triggers.Settler); ok && f.err == nil && !f.at.IsZero() {
		tr.Detail = st.Settle(ctx, a.triggerEnv(), f.Detail, ld.steady.acknowledged())
	}
	if !f.at.IsZero() {
		at := f.at.UTC()
		tr.FiredAt = &at
	}
	if !f.Ended.IsZero() {
		ms := f.Ended.Sub(ld.t).Milliseconds()
		tr.EndedMS = &ms
	}
	return tr
}

// counters reads the service's own counters at the end: counted since the
// reset before the load, up to T (atT), then from T on, read as a reset
// where they went down (the replicas restarted).
func (a *armRun) counters(ctx context.Context, res *result.ArmResult, atT result.Counters) {
	end, err := a.sub.Counters(ctx)
	switch {
	case err != nil: // the service's own counters are lost; the rest stands
		res.Warnings = append(res.Warnings, fmt.Sprintf("replica counters: %v", err))
	case end != nil:
		res.API = end.Since(atT)
	}
}

// layers reads the edge tier's policy and counters and puts each layer's
// count side by side; without an edge tier there is no call chain to read.
func (a *armRun) layers(ctx context.Context, res *result.ArmResult, rec *Recorder) {
	tiered, ok := a.sub.(plan.Tiered)
	if !ok || res.API == nil {
		return
	}
	tier, err := tiered.Tier(ctx)
	if err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	if tier == nil {
		return
	}
	res.Edge = tier
	c := tier.Counters
	l := result.Layers{Edge: c.Requests, EdgeAttempts: c.Attempts}
	l.API, l.DBAttempts = tiered.Layer(res.API)
	l.Requests, l.ClientAttempts = rec.layer()
	if res.DB != nil {
		l.DBQueries = res.DB.QueriesTotal
	}
	res.Layers = result.LayersOf(l)
}

// series reads the service's own metrics over the timeline, as its
// Prometheus has them; the arm is measured either way.
func (a *armRun) series(ctx context.Context, res *result.ArmResult, t time.Time) {
	if a.tg.Prometheus == nil {
		return
	}
	series, err := a.tg.Series(ctx, t.Add(-time.Duration(a.p.Before)), t.Add(time.Duration(a.p.After)), t)
	if err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	res.Prometheus = series
}

// settleMS is the arm's settle time, as the results say it.
func (a *armRun) settleMS() *int64 {
	ms := a.settle.Milliseconds()
	return &ms
}

// counted says whether the subject's servers count for the rows.
func (a *armRun) counted() bool {
	_, ok := a.sub.(plan.ServerCounter)
	return ok
}

// settleLimit bounds how long the last snapshot waits for the database's
// own count of statements to catch up.
const settleLimit = 2 * time.Second

// settled is the arm's last snapshot, once the database's own count of
// the statements that count has caught up: it holds still between two
// reads 50 ms apart and, where the service counts its own completed loads
// (the testbed's replicas), it has at least as many since s0 as they
// completed; settleLimit at most. A statement the service has finished
// may reach the database's count a moment later (MariaDB's digest table
// is updated after the result is sent: under a loaded machine, once 78
// loads and 77 statements, the 78th in the next arm's warm-up).
func (a *armRun) settled(ctx context.Context, s0 observe.Sample) (observe.Sample, error) {
	end, err := a.src.Read(ctx)
	for deadline := time.Now().Add(settleLimit); err == nil && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // polling, with the deadline above
		next, nerr := a.src.Read(ctx)
		if nerr != nil {
			break
		}
		still := next.Calls == end.Calls
		end = next
		if still && a.caughtUp(ctx, s0, end) {
			break
		}
	}
	return end, err
}

// caughtUp says whether the database counted, from s0 to end, at least
// the loads the service says it completed; true where the service counts
// none (a target) or its counters cannot be read.
func (a *armRun) caughtUp(ctx context.Context, s0, end observe.Sample) bool {
	loader, ok := a.sub.(plan.Loader)
	if !ok {
		return true
	}
	c, err := a.sub.Counters(ctx)
	if err != nil || c == nil {
		return true
	}
	return end.Calls-s0.Calls >= loader.Loads(c)
}

// aboveOfRowsThatRan sets db.above_baseline_ms again from the timeline
// once a stopped arm's rows after its stop are cut.
func aboveOfRowsThatRan(res *result.ArmResult) {
	if res.DB != nil && res.DB.AboveBaselineMS != nil {
		above := result.AboveBaseline(res.Timeline, res.DB.BaselineQPS)
		res.DB.AboveBaselineMS = &above
	}
}
