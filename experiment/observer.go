package experiment

import (
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/targets"
)

// Observer watches a run as it happens, such as the harness' live
// Prometheus metrics (livemetrics.Metrics). Run calls it from the load's
// goroutines: its methods must be quick and safe for concurrent use. It
// sees every request the load makes, warmup included, as the results'
// recorder does; it changes nothing.
type Observer interface {
	// Arm is called with running true when an arm's load starts, and with
	// false when the arm ends (after its drain).
	Arm(name string, running bool)
	// Request is called once per request as it ends, with the phase its
	// intended send time falls in: PhaseWarmup, PhaseBefore or PhaseAfter
	// (the schedule's last tick, due at the arm's very end, is in none and
	// not counted, as the results do not count it).
	Request(arm, phase string, r load.Record)
	// Trigger is called at T, just before the trigger fires.
	Trigger(arm string, at time.Time)
}

// The phases of an arm's load, by intended send time.
const (
	PhaseWarmup = "warmup" // before the baseline: not measured
	PhaseBefore = "before" // [T-before, T): the baseline
	PhaseAfter  = "after"  // from T on: what the results measure
)

// Phases lists the phases Observer.Request names.
var Phases = []string{PhaseWarmup, PhaseBefore, PhaseAfter}

// phaseOf is the phase of a request intended at at, for an arm whose
// baseline starts at from and whose trigger fires at t.
func phaseOf(at, from, t time.Time) string {
	switch {
	case at.Before(from):
		return PhaseWarmup
	case at.Before(t):
		return PhaseBefore
	default:
		return PhaseAfter
	}
}

// observed returns the load's record callback: rec's, then obs' when set.
func observed(rec *Recorder, obs Observer, arm string) func(load.Record) {
	if obs == nil {
		return rec.Add
	}
	return func(r load.Record) {
		rec.Add(r)
		if r.Intended.Before(rec.end) { // the schedule's last tick, at the very end, is no phase's
			obs.Request(arm, phaseOf(r.Intended, rec.from, rec.t), r)
		}
	}
}

// BinObserver is an Observer that also takes requests summarised, as a
// worker's bins carry them (--workers): the requests of one phase, their
// outcomes and attempts, and their latencies as HdrHistogram's buckets
// (each at its bucket's value, within LatencyBound of the request's).
type BinObserver interface {
	Requests(arm, phase string, s Summary)
}

// Summary is requests of one phase, summarised.
type Summary struct {
	Outcomes [load.NumOutcomes]int64
	Attempts int64
	// Latencies calls each with a latency and how many requests took it
	Latencies func(each func(latency time.Duration, n int64))
	// Worker is the index of the worker whose bin they are (--workers),
	// in decimal; "" when not told
	Worker string
}

// Observers is several observers as one: each sees every call, in order.
type Observers []Observer

var (
	_ Observer    = Observers(nil)
	_ BinObserver = Observers(nil)
)

// Arm calls every observer's Arm.
func (os Observers) Arm(name string, running bool) {
	for _, o := range os {
		o.Arm(name, running)
	}
}

// Request calls every observer's Request.
func (os Observers) Request(arm, phase string, r load.Record) {
	for _, o := range os {
		o.Request(arm, phase, r)
	}
}

// Trigger calls every observer's Trigger.
func (os Observers) Trigger(arm string, at time.Time) {
	for _, o := range os {
		o.Trigger(arm, at)
	}
}

// ClassObserver is an Observer that is told an arm's request classes
// before its load starts, when its target has them: Record.Class indexes
// names, and herd is the herd's class (-1: none is).
type ClassObserver interface {
	Classes(arm string, names []string, herd int)
}

var _ ClassObserver = Observers(nil)

// Classes calls Classes of every observer that has it.
func (os Observers) Classes(arm string, names []string, herd int) {
	for _, o := range os {
		if co, ok := o.(ClassObserver); ok {
			co.Classes(arm, names, herd)
		}
	}
}

// Requests calls every observer's Requests that takes summaries.
func (os Observers) Requests(arm, phase string, s Summary) {
	for _, o := range os {
		if b, ok := o.(BinObserver); ok {
			b.Requests(arm, phase, s)
		}
	}
}

// observeClasses tells obs the classes cs of arm, if it listens for them.
func observeClasses(obs Observer, arm string, cs []targets.Class) {
	co, ok := obs.(ClassObserver)
	if !ok || len(cs) == 0 {
		return
	}
	names, herd := make([]string, len(cs)), -1
	for i, c := range cs {
		names[i] = c.Name
		if c.Herd {
			herd = i
		}
	}
	co.Classes(arm, names, herd)
}

// observeBins has rec pass the requests of the bins merged into it on to
// obs, when it takes summaries.
func observeBins(rec *Recorder, obs Observer, arm string) {
	if b, ok := obs.(BinObserver); ok {
		rec.observer = func(phase string, s Summary) { b.Requests(arm, phase, s) }
	}
}

// LBObserver is an Observer that is shown every reading of the load
// balancer's counters (HAProxy's, observe.LBStats) the arm's sampler
// takes while its load runs, when its target has one; a reading that
// failed is not shown.
type LBObserver interface {
	LB(arm string, st observe.LBStats)
}

var _ LBObserver = Observers(nil)

// LB calls LB of every observer that has it.
func (os Observers) LB(arm string, st observe.LBStats) {
	for _, o := range os {
		if lo, ok := o.(LBObserver); ok {
			lo.LB(arm, st)
		}
	}
}

// lbSeen is the sampler's Seen that shows obs each reading of the load
// balancer of arm; nil when obs does not listen for them.
func lbSeen(obs Observer, arm string) func(observe.Sample) {
	lo, ok := obs.(LBObserver)
	if !ok {
		return nil
	}
	return func(s observe.Sample) {
		if s.LB != nil {
			lo.LB(arm, *s.LB)
		}
	}
}

// PhaseObserver is an Observer that is told when each phase of an arm
// begins, with Progress' words (PhaseFill, PhaseWarmup, PhaseBefore,
// PhaseAfter, PhaseDrain) and the instant it began: the load's phases on
// its schedule (PhaseAfter at T), the fill and the drain when they began.
// A phase the arm skips (a warmup of 0) is not told.
type PhaseObserver interface {
	Phase(arm, phase string, began time.Time)
}

// JudgedObserver is an Observer shown each arm's result once it is
// judged, at the arm's end: its verdict, loop and escape as the results
// hold them (each run of a repeated arm, not the medians).
type JudgedObserver interface {
	Judged(arm string, res *result.ArmResult)
}

// EscapeObserver is an Observer told each step of an arm's escape
// (--escape) as the load is stepped down: its number from 1, the rate it
// sends and the instant on the schedule it begins, a few rows ahead.
type EscapeObserver interface {
	EscapeStep(arm string, step int, rps float64, begins time.Time)
}

var (
	_ PhaseObserver  = Observers(nil)
	_ JudgedObserver = Observers(nil)
	_ EscapeObserver = Observers(nil)
)

// Phase calls Phase of every observer that has it.
func (os Observers) Phase(arm, phase string, began time.Time) {
	for _, o := range os {
		observePhase(o, arm, phase, began)
	}
}

// Judged calls Judged of every observer that has it.
func (os Observers) Judged(arm string, res *result.ArmResult) {
	for _, o := range os {
		observeJudged(o, arm, res)
	}
}

// EscapeStep calls EscapeStep of every observer that has it.
func (os Observers) EscapeStep(arm string, step int, rps float64, begins time.Time) {
	for _, o := range os {
		if eo, ok := o.(EscapeObserver); ok {
			eo.EscapeStep(arm, step, rps, begins)
		}
	}
}

// observePhase tells obs that arm's phase began, if it listens for them.
func observePhase(obs Observer, arm, phase string, began time.Time) {
	if po, ok := obs.(PhaseObserver); ok {
		po.Phase(arm, phase, began)
	}
}

// observeJudged shows obs arm's judged result, if it listens for them.
func observeJudged(obs Observer, arm string, res *result.ArmResult) {
	if jo, ok := obs.(JudgedObserver); ok {
		jo.Judged(arm, res)
	}
}
