package experiment

import (
	"cmp"
	"slices"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/load"
)

// escaping is an arm's escape while its load runs: the load's steps, and
// those begun. Only the watcher's goroutine touches it until the load is
// over (watch's stop waits for it); collect reads it after.
type escaping struct {
	plan  verdict.Escape
	rate  float64    // the arm's: the rate that tipped it
	steps load.Steps // the load's schedule's
	// lead is how long before its instant a step from a rate must be
	// set (StepLeader); nil: one interval of the rate, the pacer's lead
	lead  func(rps float64) time.Duration
	begun []result.EscapeStep
	over  bool
}

func (x *escaping) started() bool { return len(x.begun) > 0 }

// stepsOf are the load steps of e's escape; nil without one.
func (e *ending) stepsOf() *load.Steps {
	if e == nil || e.escape == nil {
		return nil
	}
	return &e.escape.steps
}

// stepDown runs the escape on res, the rows answered by after: the first
// metastable verdict begins it (its rows are those the verdict was
// decided on); then the current step is read, and the load steps down
// again once the step's rows reach the limit without coming back. It says
// whether the arm is over: back at a step, or out of steps (or of the
// arm's after window), and then cuts the load.
func (e *ending) stepDown(x *escaping, a *armRun, res *result.ArmResult, now, t time.Time, after time.Duration) bool {
	if x.over {
		return true
	}
	if !x.started() {
		e.decide(after)
		if x.next(now, t, time.Duration(a.p.After)) {
			a.observeStep(x, t)
			return false
		}
		return e.escaped(x, a, now, t)
	}
	b, goodput, ok := verdict.BandOfResult(res)
	if !ok {
		return false
	}
	cur := x.begun[len(x.begun)-1]
	limitEnd := cur.StartMS + time.Duration(x.plan.Limit).Milliseconds()
	to := min(after.Milliseconds(), limitEnd)
	if s := verdict.StepOf(res.Timeline, res.RowHists, b, goodput, cur, to); s.Read == result.StepRecovered {
		return e.escaped(x, a, now, t)
	}
	if to < limitEnd {
		return false // still judging this step
	}
	if x.next(now, t, time.Duration(a.p.After)) {
		a.observeStep(x, t)
		return false // on to the next
	}
	return e.escaped(x, a, now, t)
}

// escaped ends the escape and the arm's load.
func (e *ending) escaped(x *escaping, a *armRun, now, t time.Time) bool {
	x.over = true
	e.cutNext(a, now, t)
	return true
}

// next begins the next step at a row's edge far enough ahead that no
// request due after it was paced yet (the generator's lead at the current
// rate, and a row), a moment before the edge, so the row from the edge holds the
// new rate's requests alone. It says whether it did: false when no step
// is left, or none fits before the schedule's end (T + after).
func (x *escaping) next(now, t time.Time, after time.Duration) bool {
	i := len(x.begun)
	if i >= len(x.plan.Shares) {
		return false
	}
	cur := x.rate
	if i > 0 {
		cur = x.begun[i-1].RPS
	}
	lead := intervalAt(cur)
	if x.lead != nil {
		lead = x.lead(cur)
	}
	edge := t.Add(now.Sub(t).Truncate(result.RowWidth) + result.RowWidth)
	for edge.Before(now.Add(lead + result.RowWidth)) {
		edge = edge.Add(result.RowWidth)
	}
	if !edge.Before(t.Add(after)) {
		return false
	}
	share := x.plan.Shares[i]
	rps := result.Round2(share * x.rate)
	if err := x.steps.Step(edge.Add(-time.Nanosecond), rps); err != nil {
		return false // a step at or before the last: never, as edges only grow
	}
	x.begun = append(x.begun, result.EscapeStep{Share: share, RPS: rps, StartMS: edge.Sub(t).Milliseconds()})
	return true
}

// observeStep tells the observer the step x began last, if it listens
// for them.
func (a *armRun) observeStep(x *escaping, t time.Time) {
	if eo, ok := a.env.Observer.(EscapeObserver); ok {
		s := x.begun[len(x.begun)-1]
		eo.EscapeStep(a.arm.Name, len(x.begun), s.RPS, t.Add(time.Duration(s.StartMS)*time.Millisecond))
	}
}

// leadOf takes how far ahead gen needs a step set, when it says
// (StepLeader); nil e or no escape: nothing to take.
func (e *ending) leadOf(gen Prepared) {
	if l, ok := gen.(StepLeader); ok && e != nil && e.escape != nil {
		e.escape.lead = l.StepLead
	}
}

// intervalAt is the time between two requests at rps.
func intervalAt(rps float64) time.Duration { return time.Duration(float64(time.Second) / rps) }

// stuckRows are the rows of an arm whose verdict was decided on rows
// before its escape: those rows, for its windows and its loop, which say
// what held it down, not what the lower load did; rows otherwise.
func (e *ending) stuckRows(rows []result.Row) []result.Row {
	if e == nil || e.escape == nil || !e.escape.started() {
		return rows
	}
	e.mu.Lock()
	d := e.decided
	e.mu.Unlock()
	n, _ := slices.BinarySearchFunc(rows, d.Milliseconds(), func(r result.Row, ms int64) int { return cmp.Compare(r.TMS, ms) })
	return rows[:n]
}

// escapeResult is res's escape, read on its whole timeline: each step
// begun, what its rows read up to its limit (or its end, when the arm's
// load ended first), and the escape load. Nil without --escape.
func (e *ending) escapeResult(res *result.ArmResult) *result.EscapeResult {
	if e == nil || e.escape == nil {
		return nil
	}
	x := e.escape
	r := &result.EscapeResult{FromRPS: x.rate, Steps: []result.EscapeStep{}}
	if !x.started() {
		return r
	}
	start := x.begun[0].StartMS
	r.StartMS = &start
	b, goodput, ok := verdict.BandOfResult(res)
	var loadEnd int64
	if n := len(res.Timeline); n > 0 {
		loadEnd = res.Timeline[n-1].TMS + result.RowWidth.Milliseconds()
	}
	limit := time.Duration(x.plan.Limit).Milliseconds()
	for i, s := range x.begun {
		s.EndMS = loadEnd
		if i+1 < len(x.begun) {
			s.EndMS = x.begun[i+1].StartMS
		}
		to := min(s.StartMS+limit, s.EndMS)
		if ok {
			s = verdict.StepOf(res.Timeline, res.RowHists, b, goodput, s, to)
		}
		if s.Read == "" {
			s.Read = result.StepUnfinished
			if to == s.StartMS+limit {
				s.Read = result.StepStuck
			}
		}
		r.Steps = append(r.Steps, s)
	}
	r.EscapeFound()
	return r
}
