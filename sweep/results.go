package sweep

import (
	"slices"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
)

// Schema names the sweep's results format; it changes when a field
// changes meaning. docs/sweep.md documents every field. v2: its runs'
// verdicts are herdbench.results/v2's (recovering in place of degraded,
// metastable by v2's rule).
const Schema = "herdbench.sweep/v2"

// Why a sweep ended before its last probe (Results.Stopped,
// ArmSweep.Stopped).
const (
	StoppedMaxRuns     = "max_runs"    // --max-runs runs were made
	StoppedMaxTime     = "max_time"    // --max-time had passed
	StoppedInterrupted = "interrupted" // the context ended (Ctrl-C)
	StoppedFailed      = "failed"      // a run failed: Results.Error says why
)

// The states of a tipping point.
const (
	TipFound   = "found"   // the bracket is within the resolution: the tipping point is its smallest tipped magnitude
	TipNone    = "none"    // the high end survived: no tipping point in range
	TipBelow   = "below"   // the low end tipped: at or below FROM
	TipUnknown = "unknown" // the sweep stopped first (stopped says why): the bracket is what it knew
)

// Results are a sweep's: the contract reports and gates read.
type Results struct {
	Schema    string    `json:"schema"`
	Version   string    `json:"version"` // herdbench's
	Seed      uint64    `json:"seed"`    // the plan's, as every run used it
	StartedAt time.Time `json:"started_at"`
	TookMS    int64     `json:"took_ms"`
	// Partial: the sweep stopped before its last probe; Stopped says why
	Partial  bool     `json:"partial"`
	Stopped  string   `json:"stopped,omitempty"`
	Error    string   `json:"error,omitempty"`
	Settings Settings `json:"settings"`
	// Vary is the bisected axis; Grid the axes of a grid instead
	Vary        *Axis                  `json:"vary,omitempty"`
	Grid        []GridAxis             `json:"grid,omitempty"`
	Plan        plan.Plan              `json:"plan"`
	Environment experiment.Environment `json:"environment"`
	Arms        []ArmSweep             `json:"arms"`
	Gates       []GateResult           `json:"gates"`
}

// Settings bound a sweep.
type Settings struct {
	// Resolution: bisection stops when the bracket's ends are within
	// 1+Resolution of each other
	Resolution float64       `json:"resolution"`
	Repeat     int           `json:"repeat"` // runs per probe, at most: a probe stops once its majority is decided
	MaxRuns    int           `json:"max_runs"`
	MaxTime    herd.Duration `json:"max_time"`
}

// DefaultSettings: a 10% bracket, three runs a probe, at most 60 runs and
// one hour.
var DefaultSettings = Settings{Resolution: 0.1, Repeat: 3, MaxRuns: 60, MaxTime: herd.Duration(time.Hour)}

// ArmSweep is one arm's: its tipping point and bracket (a bisection), and
// every probe with every run.
type ArmSweep struct {
	Name    string   `json:"name"`
	Tipping *Tipping `json:"tipping,omitempty"` // null for a grid
	Bracket *Bracket `json:"bracket,omitempty"` // null for a grid
	// Predicted is the model's tipping point beside the measured one
	// (package predict); null for a grid, and from a sweep before it
	Predicted *Predicted `json:"predicted,omitempty"`
	Probes    int        `json:"probe_count"`
	Runs      int        `json:"runs"`
	TookMS    int64      `json:"took_ms"`
	Stopped   string     `json:"stopped,omitempty"` // the arm's probes ended early: max_runs, max_time, interrupted, failed
	// Probed are the probes in the order run, each with its runs
	Probed []Probe `json:"probes"`
}

// Tipping is an arm's tipping point: the smallest magnitude probed after
// which the service did not recover.
type Tipping struct {
	State string   `json:"state"` // found, none, below or unknown
	Value *float64 `json:"value"` // in Unit: the bracket's smallest tipped; null for none, unknown without a tipped probe
	Unit  Unit     `json:"unit"`  //
	Text  string   `json:"text"`  // 2.5s, none, <= 500ms, unknown
}

// The states of a prediction.
const (
	PredictedFound   = "found"   // the model tips the service at Value
	PredictedNone    = "none"    // no fault up to the axis' TO tips it in the model
	PredictedRefused = "refused" // the model does not cover the arm: Note says why, and there is no number
)

// Predicted is what the model (package model, through package predict)
// says of an arm's tipping point: the shortest fault that tips the
// service, in the axis' unit, and the inputs it was given with their
// sources; or, for an arm the model does not cover, why not, and no
// number.
type Predicted struct {
	State string   `json:"state"` // found, none or refused
	Value *float64 `json:"value"` // in Unit; null unless found
	Unit  Unit     `json:"unit"`
	Text  string   `json:"text"` // 1.67s, none, not modelled
	// VsMeasured is Value over the measured tipping point, less 1: -0.05
	// is 5% short of it; null unless both were found
	VsMeasured *float64 `json:"vs_measured"`
	Note       string   `json:"note,omitempty"`   // why it was refused
	Inputs     []Input  `json:"inputs,omitempty"` // what the model was given
}

// Input is one of the model's inputs: its value and which figure of
// which run (or which setting) it came from.
type Input = result.ModelInput

// Bracket is what the probes established: the largest magnitude that
// survived and the smallest that tipped (null: none did).
type Bracket struct {
	Survived *float64 `json:"survived"`
	Tipped   *float64 `json:"tipped"`
	Unit     Unit     `json:"unit"`
}

// Probe is one magnitude (one cell of a grid) for one arm.
type Probe struct {
	At []Setting `json:"at"`
	// Tipped: at least half the runs ended other than recovered
	Tipped bool `json:"tipped"`
	// Verdict is the runs' most common verdict (a tie goes to the one
	// first in result.Verdicts' order reversed: metastable before
	// recovered)
	Verdict string `json:"verdict"`
	// EscapeRPS is the probe's escape load with --escape: the median of
	// escape.rps over its runs that stepped their load down and came back
	// (the highest stepped rate at which the service did); nil when none
	// stepped down or none came back, EscapeTried telling which
	EscapeRPS *float64 `json:"escape_rps,omitempty"`
	// EscapeTried counts its runs that stepped their load down (judged
	// metastable with --escape); 0 without --escape
	EscapeTried int   `json:"escape_tried,omitempty"`
	Runs        []Run `json:"runs"`
}

// Run is one experiment run of a probe.
type Run struct {
	Verdict    string           `json:"verdict"`
	RecoveryMS *int64           `json:"recovery_ms"`
	TookMS     int64            `json:"took_ms"`
	Result     result.ArmResult `json:"result"`
}

// RecoveryMS is the probe's median recovery_ms over its recovered runs;
// nil when none recovered.
func (p Probe) RecoveryMS() *int64 {
	var ms []int64
	for _, r := range p.Runs {
		if r.RecoveryMS != nil {
			ms = append(ms, *r.RecoveryMS)
		}
	}
	if len(ms) == 0 {
		return nil
	}
	slices.Sort(ms)
	m := ms[len(ms)/2]
	return &m
}

// escapeOf sets p's escape load from its runs' escapes: how many stepped
// down, and the median rate at which those that came back did.
func (p *Probe) escapeOf() {
	var rps []float64
	for _, r := range p.Runs {
		e := r.Result.Escape
		if e == nil || e.StartMS == nil {
			continue
		}
		p.EscapeTried++
		if e.RPS != nil {
			rps = append(rps, *e.RPS)
		}
	}
	if len(rps) == 0 {
		return
	}
	slices.Sort(rps)
	m := rps[len(rps)/2]
	p.EscapeRPS = &m
}

// Caps of a sweep's own limits: beyond them a sweep is not a bench but a
// soak, and the dry run's arithmetic (runs times a run's length) would
// overflow.
const (
	MaxRuns = 10_000
	MaxTime = herd.Duration(7 * 24 * time.Hour)
)

// Validate checks the settings, every problem at once, each naming its
// flag's field and the accepted values.
func (s Settings) Validate() herd.FieldErrors {
	var errs herd.FieldErrors
	if !(s.Resolution > 0 && s.Resolution < 1) {
		errs.Add("resolution", "%v out of range (accepted: above 0 and below 1, such as 0.1 for a 10%% bracket)", s.Resolution)
	}
	if s.Repeat < 1 || s.Repeat > plan.MaxRepeat {
		errs.Add("repeat", "%d out of range (accepted: 1 to %d runs per probe, as the stampede's --repeat)", s.Repeat, plan.MaxRepeat)
	}
	if s.MaxRuns < 1 || s.MaxRuns > MaxRuns {
		errs.Add("max_runs", "%d out of range (accepted: 1 to %d runs in all)", s.MaxRuns, MaxRuns)
	}
	if s.MaxTime <= 0 || s.MaxTime > MaxTime {
		errs.Add("max_time", "%s out of range (accepted: a duration above 0 and at most %s, such as 1h)", s.MaxTime, MaxTime)
	}
	return errs
}
