package experiment

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
)

// liveFire is what the trigger left for the live judge: the snapshot at T
// and when its cause was over.
type liveFire struct {
	atT   observe.Sample
	ended time.Time
}

// ending is how an arm may end on its verdict, and how it did.
type ending struct {
	auto  bool         // --after auto
	conds []gates.Gate // stop conditions on the verdict
	bound time.Duration
	cut   load.Cut
	heard func(now time.Time) time.Time // the requests are filed up to it (Hearer); nil: now

	escape *escaping // --escape's steps; nil without

	mu      sync.Mutex
	fire    *liveFire     // nil until the trigger's cause is over
	stopped *result.Abort // the verdict stop condition that held; nil without
	decided time.Duration // the rows the arm ended on, from T; 0: none
}

// newEnding is p's ending for an arm whose requests take at most bound;
// nil when the arm runs its fixed after window.
func newEnding(p plan.Plan, bound time.Duration) *ending {
	e := &ending{auto: p.AfterAuto, bound: bound}
	for _, c := range p.Abort {
		if _, ok := plan.LiveWords[c.Path]; ok {
			e.conds = append(e.conds, c)
		}
	}
	if p.Escape != nil {
		e.escape = &escaping{plan: *p.Escape, rate: float64(p.Rate)}
	}
	if !e.auto && len(e.conds) == 0 && e.escape == nil {
		return nil
	}
	return e
}

// numberConds are conds without those on words: the live figures'.
func numberConds(conds []gates.Gate) []gates.Gate {
	return slices.DeleteFunc(slices.Clone(conds), func(c gates.Gate) bool { _, ok := plan.LiveWords[c.Path]; return ok })
}

// cutter is the cut of an arm that may end on its verdict; nil otherwise.
func (e *ending) cutter() *load.Cut {
	if e == nil {
		return nil
	}
	return &e.cut
}

// fired notes the trigger's end, for the live judge.
func (e *ending) fired(atT observe.Sample, ended time.Time) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fire = &liveFire{atT: atT, ended: ended}
}

// check judges a's rows answered by now and cuts the load when the arm is
// over; it says whether it is. With an escape, an arm judged metastable
// steps its load down instead (escape_live.go).
func (e *ending) check(a *armRun, now time.Time, sampler *observe.Sampler, rec *Recorder, t time.Time) bool {
	began := time.Now()
	res, after, ok := e.answered(a, now, sampler, rec, t)
	if !ok {
		return false
	}
	if x := e.escape; x != nil && (x.started() || res.Verdict == result.Metastable) {
		return e.stepDown(x, a, res, now, t, after)
	}
	over := e.auto && (res.Verdict == result.Recovered || res.Verdict == result.Overloaded)
	for _, c := range e.conds {
		if c.HoldsWord(res.Verdict) {
			over = true
			e.mu.Lock()
			e.stopped = &result.Abort{AtMS: now.Sub(t).Milliseconds(), Gate: c.Expr,
				Reason: fmt.Sprintf("%s held on the rows answered by T%+.1fs", c.Expr, after.Seconds())}
			e.mu.Unlock()
			break
		}
	}
	if !over {
		return false
	}
	e.decide(after)
	e.cutNext(a, now.Add(time.Since(began)), t) // judging took time: the cut is set now
	return true
}

// answered is a's result on the rows answered by now, judged, and the
// end of those rows from T; ok is false before the trigger's end, or
// before a row after it is answered.
func (e *ending) answered(a *armRun, now time.Time, sampler *observe.Sampler, rec *Recorder, t time.Time) (*result.ArmResult, time.Duration, bool) {
	e.mu.Lock()
	f := e.fire
	e.mu.Unlock()
	if f == nil {
		return nil, 0, false
	}
	answered := e.answeredBy(now, rec.filedUpTo())
	after := min(answered.Sub(t).Truncate(result.RowWidth), time.Duration(a.p.After)) // no row past the schedule's end
	endMS := max(f.ended.Sub(t).Milliseconds(), 0)
	if after <= time.Duration(endMS)*time.Millisecond {
		return nil, 0, false
	}
	p := a.p
	p.After = herd.Duration(after)
	samples := sampler.Samples()
	last := f.atT
	if len(samples) > 0 {
		last = samples[len(samples)-1]
	}
	res := summarize(p, a.arm, t, f.atT, f.atT, last, samples, rec)
	res.Trigger.EndedMS = &endMS
	res.Windows = result.WindowsOf(res.Timeline, res.Trigger.EndedMS)
	res.SettleMS = a.settleMS()
	verdict.Judge(res, res.BaselineP99)
	return res, after, true
}

// answeredBy is the instant the rows before which are answered at now,
// every request of theirs filed and their samples taken: a request
// intended at i has its record by i + bound when its generator keeps
// time, and no later than the schedule's requests are all filed up to
// (filed, Recorder.filedUpTo) when it runs late; a row's last sample
// comes a row later.
func (e *ending) answeredBy(now, filed time.Time) time.Time {
	bound := heardAt(e.heard, now).Add(-e.bound - 2*result.RowWidth)
	if filed = filed.Add(-result.RowWidth); filed.Before(bound) {
		return filed
	}
	return bound
}

// decide notes the rows the arm's verdict was decided on, from T.
func (e *ending) decide(after time.Duration) {
	e.mu.Lock()
	e.decided = after
	e.mu.Unlock()
}

// cutNext cuts the load at the next row's edge, a moment before it: the
// last row is whole, and no request falls on the edge itself; past the
// schedule's end there is nothing left to cut. now is the moment the cut
// is set: check passes the instant it read the rows plus the time it took
// to judge them, which on a busy machine once ran past the edge after the
// instant, and the generator had sent what it intended since, counted
// beyond the cut (4 requests of 1,484, at -p 4).
func (e *ending) cutNext(a *armRun, now, t time.Time) {
	if edge := t.Add(now.Sub(t).Truncate(result.RowWidth) + result.RowWidth); edge.Before(t.Add(time.Duration(a.p.After))) {
		e.cut.At(edge.Add(-time.Nanosecond))
	}
}

// cutAfter is how long the load ran after T when the arm ended on its
// verdict, and whether it did.
func (e *ending) cutAfter(t time.Time) (time.Duration, bool) {
	if e == nil {
		return 0, false
	}
	at, ok := e.cut.When()
	if !ok {
		return 0, false
	}
	return at.Add(time.Nanosecond).Sub(t), true
}

// judgeOn is the rows of res an arm that ended on its verdict is judged
// on, the rows it was decided on, then puts the whole timeline back: the
// rows after them are the cut's, not the arm's (a recovery held to the
// rows it was decided on, as the rule asks of the arm's end), and would
// shift the last hold a metastable arm was stopped on.
func (e *ending) judgeOn(res *result.ArmResult) {
	rows, hists := res.Timeline, res.RowHists
	if e != nil {
		e.mu.Lock()
		d := e.decided
		e.mu.Unlock()
		if d > 0 {
			n, _ := slices.BinarySearchFunc(rows, d.Milliseconds(), func(r result.Row, ms int64) int { return cmp.Compare(r.TMS, ms) })
			res.Timeline, res.RowHists = rows[:n], hists[:min(n, len(hists))]
		}
	}
	verdict.Judge(res, res.BaselineP99)
	res.Timeline, res.RowHists = rows, hists
}

// stop is the verdict stop condition that held, or nil.
func (e *ending) stop() *result.Abort {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}
