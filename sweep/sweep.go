package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
)

// Runner runs plan, which holds one arm with the settings at applied
// (PlanAt), once: a whole experiment, from the same starting state as any
// arm. Its error ends the sweep.
type Runner func(ctx context.Context, plan plan.Plan, at []Setting) (*result.ArmResult, error)

// Progress is where a sweep is, before each run.
type Progress struct {
	Arm      string
	ArmIndex int // from 1
	Arms     int
	At       string // the probe's magnitude(s), as flags write them
	Bracket  string // the arm's bracket so far
	RunsDone int
	RunsLeft int           // at most
	ETA      time.Duration // RunsLeft at the mean run's time so far; 0 before the first
}

// Sweep is a bisection (Vary) or a grid (Grid) over every arm of Plan.
type Sweep struct {
	Plan     plan.Plan
	Vary     *Axis
	Grid     []GridAxis
	Settings Settings
	Run      Runner
	Progress func(Progress) // may be nil
	Now      func() time.Time
}

// sweeper is one Do: its counts and clock.
type sweeper struct {
	Sweep
	started time.Time
	runs    int
	spent   time.Duration // in runs
	stopped string
	err     error
	arm     int
	left    []int // worst-case runs left of each arm
}

// Do sweeps every arm in turn. When a cap is reached, the context ends or
// a run fails, the results hold what was found so far, marked partial (and
// the error says why for the last two).
func (s Sweep) Do(ctx context.Context) (*Results, error) {
	if s.Now == nil {
		s.Now = time.Now
	}
	w := &sweeper{Sweep: s, started: s.Now()}
	res := &Results{Schema: Schema, Seed: s.Plan.Seed, StartedAt: w.started.UTC(), Settings: s.Settings, Vary: s.Vary, Grid: s.Grid,
		Plan: s.Plan, Arms: []ArmSweep{}, Gates: []GateResult{}}
	for range s.Plan.Arms {
		w.left = append(w.left, s.WorstProbes()*s.Settings.Repeat)
	}
	for i, arm := range s.Plan.Arms {
		w.arm = i
		start := s.Now()
		var a ArmSweep
		if s.Vary != nil {
			a = w.bisect(ctx, arm)
		} else {
			a = w.grid(ctx, arm)
		}
		a.TookMS = s.Now().Sub(start).Milliseconds()
		res.Arms = append(res.Arms, a)
		w.left[i] = 0
		if w.stopped != "" {
			break
		}
	}
	res.TookMS = s.Now().Sub(w.started).Milliseconds()
	res.Stopped, res.Partial = w.stopped, w.stopped != ""
	if w.err != nil {
		res.Error = w.err.Error()
	}
	return res, w.err
}

// WorstProbes is the most probes one arm may take: every grid cell, or
// the bisection's two ends and its deepest path.
func (s Sweep) WorstProbes() int {
	if s.Vary == nil {
		n := 1
		for _, g := range s.Grid {
			n *= len(g.Values)
		}
		return n
	}
	memo := map[[2]float64]int{}
	var depth func(lo, hi float64) int
	depth = func(lo, hi float64) int {
		if narrow(lo, hi, s.Settings.Resolution) {
			return 0
		}
		if d, ok := memo[[2]float64{lo, hi}]; ok {
			return d
		}
		m := mid(lo, hi)
		d := 1 + max(depth(lo, m), depth(m, hi))
		memo[[2]float64{lo, hi}] = d
		return d
	}
	return 2 + depth(s.Vary.From, s.Vary.To)
}

// narrow says whether a bracket is done: adjacent whole numbers, or ends
// within 1+res of each other.
func narrow(lo, hi, res float64) bool { return hi-lo <= 1 || hi/lo <= 1+res }

// mid is the geometric mean of lo and hi, rounded, strictly between them
// (which a bracket not narrow has room for).
func mid(lo, hi float64) float64 {
	return min(max(math.Round(math.Sqrt(lo*hi)), lo+1), hi-1)
}

// bisect finds arm's tipping point over s.Vary.
func (w *sweeper) bisect(ctx context.Context, arm arm.Arm) ArmSweep {
	ax := w.Vary
	a := ArmSweep{Name: arm.Name, Probed: []Probe{}, Bracket: &Bracket{Unit: ax.Unit}}
	b := a.Bracket
	probe := func(v float64) (tipped, ok bool) {
		p, ok := w.probe(ctx, arm, []Setting{setting(ax.Name, v, ax.Unit)}, bracketText(b))
		if len(p.Runs) > 0 {
			a.Probed = append(a.Probed, p)
			a.Probes, a.Runs = a.Probes+1, a.Runs+len(p.Runs)
		}
		if ok {
			if p.Tipped {
				b.Tipped = &v
			} else {
				b.Survived = &v
			}
		}
		return p.Tipped, ok
	}
	tip := func(state string) ArmSweep {
		a.Tipping = tippingOf(state, *ax, b)
		a.Stopped = w.stopped
		return a
	}
	if tipped, ok := probe(ax.From); !ok {
		return tip(TipUnknown)
	} else if tipped {
		return tip(TipBelow)
	}
	if tipped, ok := probe(ax.To); !ok {
		return tip(TipUnknown)
	} else if !tipped {
		return tip(TipNone)
	}
	for !narrow(*b.Survived, *b.Tipped, w.Settings.Resolution) {
		if _, ok := probe(mid(*b.Survived, *b.Tipped)); !ok {
			return tip(TipUnknown)
		}
	}
	return tip(TipFound)
}

// tippingOf is the tipping point a bracket on ax says, in state.
func tippingOf(state string, ax Axis, b *Bracket) *Tipping {
	t := &Tipping{State: state, Unit: ax.Unit, Value: b.Tipped}
	switch state {
	case TipNone:
		t.Text = "none"
	case TipBelow:
		t.Text = "<= " + Format(ax.From, ax.Unit)
	case TipFound:
		t.Text = Format(*b.Tipped, ax.Unit)
	default:
		t.Text = "unknown"
	}
	return t
}

// bracketText is a bracket as the progress line and the table show it:
// [largest survived, smallest tipped], - where there is none yet.
func bracketText(b *Bracket) string {
	end := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return Format(*v, b.Unit)
	}
	return "[" + end(b.Survived) + ", " + end(b.Tipped) + "]"
}

// BracketText is b as the reports show it.
func BracketText(b *Bracket) string {
	if b == nil {
		return ""
	}
	return bracketText(b)
}

// grid probes every cell for arm, the first axis varying slowest.
func (w *sweeper) grid(ctx context.Context, arm arm.Arm) ArmSweep {
	a := ArmSweep{Name: arm.Name, Probed: []Probe{}}
	for _, cell := range Cells(w.Grid) {
		p, ok := w.probe(ctx, arm, cell, "")
		if len(p.Runs) > 0 {
			a.Probed = append(a.Probed, p)
			a.Probes, a.Runs = a.Probes+1, a.Runs+len(p.Runs)
		}
		if !ok {
			break
		}
	}
	a.Stopped = w.stopped
	return a
}

// Cells are every combination of the grid's values, the first axis
// varying slowest.
func Cells(grid []GridAxis) [][]Setting {
	cells := [][]Setting{nil}
	for _, g := range grid {
		var next [][]Setting
		for _, c := range cells {
			for _, v := range g.Values {
				next = append(next, append(append([]Setting(nil), c...), setting(g.Name, v, g.Unit)))
			}
		}
		cells = next
	}
	return cells
}

// probe runs arm at the settings up to Repeat times, until the majority
// is decided; ok is false when the sweep must stop (a cap, the context, a
// failed run), the probe then undecided.
func (w *sweeper) probe(ctx context.Context, arm arm.Arm, at []Setting, bracket string) (Probe, bool) {
	p := Probe{At: at, Runs: []Run{}}
	n := w.Settings.Repeat
	var tips int
	for len(p.Runs) < n {
		if !w.mayRun(ctx) {
			return p, false
		}
		w.report(arm, at, bracket)
		plan, err := PlanAt(w.Plan, arm, at)
		start := w.Now()
		var res *result.ArmResult
		if err == nil {
			res, err = w.Run(ctx, plan, at)
		}
		took := w.Now().Sub(start)
		if err != nil || res == nil {
			w.stopped, w.err = StoppedFailed, fmt.Errorf("arm %s at %s: %w", arm.Name, atText(at), cmpErr(err))
			if ctx.Err() != nil {
				w.stopped, w.err = StoppedInterrupted, ctx.Err()
			}
			return p, false
		}
		w.runs, w.spent = w.runs+1, w.spent+took
		w.left[w.arm] = max(w.left[w.arm]-1, 0)
		p.Runs = append(p.Runs, Run{Verdict: res.Verdict, RecoveryMS: res.RecoveryMS, TookMS: took.Milliseconds(), Result: *res})
		if res.Verdict != result.Recovered {
			tips++
		}
		if 2*tips >= n || 2*(len(p.Runs)-tips) > n {
			break // the majority is decided
		}
	}
	p.Tipped = 2*tips >= len(p.Runs)
	p.Verdict = majority(p.Runs)
	p.escapeOf()
	return p, true
}

func cmpErr(err error) error {
	if err == nil {
		return errors.New("no result")
	}
	return err
}

// mayRun says whether another run fits the caps and the context, noting
// why not.
func (w *sweeper) mayRun(ctx context.Context) bool {
	switch {
	case ctx.Err() != nil:
		w.stopped, w.err = StoppedInterrupted, ctx.Err()
	case w.runs >= w.Settings.MaxRuns:
		w.stopped = StoppedMaxRuns
	case w.Now().Sub(w.started) >= time.Duration(w.Settings.MaxTime):
		w.stopped = StoppedMaxTime
	default:
		return true
	}
	return false
}

// report sends the progress before a run.
func (w *sweeper) report(arm arm.Arm, at []Setting, bracket string) {
	if w.Progress == nil {
		return
	}
	left := 0
	for _, l := range w.left {
		left += l
	}
	left = min(left, w.Settings.MaxRuns-w.runs)
	p := Progress{Arm: arm.Name, ArmIndex: w.arm + 1, Arms: len(w.Plan.Arms), At: atText(at), Bracket: bracket, RunsDone: w.runs, RunsLeft: left}
	if w.runs > 0 {
		p.ETA = w.spent / time.Duration(w.runs) * time.Duration(left)
	}
	w.Progress(p)
}

// atText is settings as flags write them: burst=120 rate=300.
func atText(at []Setting) string {
	s := ""
	for i, x := range at {
		if i > 0 {
			s += " "
		}
		s += x.Name + "=" + x.Text
	}
	return s
}

// AtText is a probe's settings as the reports show them.
func AtText(at []Setting) string { return atText(at) }

// severity orders verdicts for majority's ties: the worse first.
var severity = []string{result.Metastable, result.Relapsed, result.Overloaded, result.Recovering, result.Degraded, result.Recovered}

// majority is the runs' most common verdict, a tie to the worse.
func majority(runs []Run) string {
	best, count := "", 0
	for _, v := range severity {
		n := 0
		for _, r := range runs {
			if r.Verdict == v {
				n++
			}
		}
		if n > count {
			best, count = v, n
		}
	}
	return best
}
