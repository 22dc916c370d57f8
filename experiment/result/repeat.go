package result

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// Spread is one figure of a repeated arm over its runs: its least and its
// greatest; a figure no run had a value of has none. A run without a value (recovery_ms of a run that never
// recovered) counts above every value, so Max is null when one had none;
// on escape.rps and escape.share (missingLowest) below every value, so
// Min is null when one had none.
type Spread struct {
	Path string   `json:"path"` // the figure's gate path: db.queries
	Min  *float64 `json:"min"`
	Max  *float64 `json:"max"`
}

// SpreadOf is the spread of path over a's runs; false when a ran once.
func (a ArmResult) SpreadOf(path string) (Spread, bool) {
	i := slices.IndexFunc(a.Spread, func(s Spread) bool { return s.Path == path })
	if i < 0 {
		return Spread{}, false
	}
	return a.Spread[i], true
}

// Overlaps says whether two spreads share a value: a difference between
// their medians the runs do not support. A missing bound counts as above
// every value.
func (s Spread) Overlaps(o Spread) bool {
	if s.Min == nil || o.Min == nil {
		return false
	}
	le := func(lo, hi *float64) bool { return hi == nil || *lo <= *hi }
	return le(s.Min, o.Max) && le(o.Min, s.Max)
}

// verdictRank orders the verdicts from worst, to break a tie between the
// most common ones: metastable, relapsed, recovering (degraded, in v1
// files), overloaded, recovered.
var verdictRank = []string{Metastable, Relapsed, Recovering, Degraded, Overloaded, Recovered}

// Aggregate is one arm of several runs (in run order): every number its
// runs' median, each with its spread, the most common verdict, and every
// run kept in Runs. One run is returned as it is.
//
// The median of an even count is the mean of the middle two, rounded half
// up when the figure is a whole number in its type (a count); a run
// without a value counts above every value (below, on escape.rps and
// escape.share: an escape not found is under every rate stepped to), so a
// median that falls on one has none. What is not a number (the timeline, the trigger's detail
// words, the config) is the representative's: the run whose figures lie
// closest to the medians, each figure's distance scaled by its spread,
// the earliest on a tie (marked Representative in Runs). The verdict is the
// most common over the runs; a tie goes to the worst, in the order
// metastable, relapsed, recovering, overloaded, recovered; loop.held_by is named
// from the medians when it is metastable. Load.Saturated holds when it
// held in any run.
func Aggregate(runs []ArmResult) (ArmResult, error) {
	if len(runs) == 1 {
		return runs[0], nil
	}
	return OverRuns(runs)
}

// OverRuns is Aggregate for a plan that repeats its arms, one run too (an
// interrupted run's arm): the arm then says it had one run.
func OverRuns(runs []ArmResult) (ArmResult, error) {
	if len(runs) == 0 {
		return ArmResult{}, fmt.Errorf("aggregate: no runs")
	}
	figs := make([]map[string]*float64, len(runs))
	whole := map[string]bool{}
	for i := range runs {
		figs[i] = map[string]*float64{}
		for _, f := range FiguresOf(&runs[i]) {
			figs[i][f.Path] = f.Value()
			whole[f.Path] = whole[f.Path] || f.Whole
		}
	}
	medians, spread := mediansOf(figs, whole)
	k := representative(figs, medians, spread)
	out := medianRun(runs[k], medians)
	out.Verdict = MostCommon(runs)
	for name, f := range out.Requests { // each class's verdict by the same rule, over its runs
		f.Verdict = MostCommon(classRuns(runs, name))
	}
	if out.Loop != nil { // what held the arm is its medians', when it was stuck
		out.Loop.HeldBy = ""
		if out.Verdict == Metastable {
			out.Loop.HeldBy = HeldBy(out.Loop)
		}
	}
	out.Runs, out.Spread = slices.Clone(runs), spread
	out.Runs[k].Representative = true
	for _, r := range runs {
		out.Load.Saturated = out.Load.Saturated || r.Load.Saturated
	}
	return out, nil
}

// mediansOf are the median of each figure of the runs' figs, and the
// spread of each that some run has a value of, by path; whole: the
// figures that are counts.
func mediansOf(figs []map[string]*float64, whole map[string]bool) (map[string]*float64, []Spread) {
	medians := map[string]*float64{}
	var spread []Spread
	for _, p := range slices.Sorted(maps.Keys(whole)) {
		vals := make([]*float64, len(figs))
		for i, m := range figs {
			vals[i] = m[p]
		}
		if missingLowest[p] {
			slices.SortStableFunc(vals, cmpMissingFirst)
		} else {
			sortMissingLast(vals)
		}
		medians[p] = median(vals, whole[p])
		if vals[0] != nil || vals[len(vals)-1] != nil { // a figure no run has (aborted: null) has no spread
			spread = append(spread, Spread{Path: p, Min: vals[0], Max: vals[len(vals)-1]})
		}
	}
	return medians, spread
}

// medianRun is a copy of r with each of its figures set to its median.
// A figure r does not have (under a pointer nil in r, or left out as
// omitempty) is left as r has it.
func medianRun(r ArmResult, medians map[string]*float64) ArmResult {
	r.Runs, r.Spread, r.Representative = nil, nil, false
	r.BaselineP99, r.RowHists = 0, nil // judged: as a results file reads back
	out := r
	for _, f := range ownFigures(&out) { // out's own copies of what r holds them in
		f.Set(medians[f.Path])
	}
	return out
}

// sortMissingLast sorts vals ascending, nil after every number.
// missingLowest are the figures a run without a value has the lowest of,
// not the highest: an escape load not found lies under every rate stepped
// to (escape.rps, escape.share). Their runs without one sort first.
var missingLowest = map[string]bool{"escape.rps": true, "escape.share": true}

// cmpMissingFirst orders nil before every value.
func cmpMissingFirst(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return cmpFloat(*a, *b)
}

func sortMissingLast(vals []*float64) {
	slices.SortStableFunc(vals, func(a, b *float64) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return 1
		case b == nil:
			return -1
		}
		return cmpFloat(*a, *b)
	})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// median of sorted vals (nil last): nil when it falls on a missing value;
// rounded half up when the figure is a whole number (a count).
func median(vals []*float64, whole bool) *float64 {
	n := len(vals)
	if n%2 == 1 {
		return vals[n/2]
	}
	lo, hi := vals[n/2-1], vals[n/2]
	if lo == nil || hi == nil {
		return nil
	}
	m := (*lo + *hi) / 2
	if whole {
		m = math.Floor(m + 0.5)
	}
	return &m
}

// representative is the index of the run whose figures lie closest to the
// medians: the sum over the figures that vary of each one's distance to
// its median over its spread (a missing value where the median has one,
// or the reverse, is 1), the earliest on a tie.
func representative(figs []map[string]*float64, medians map[string]*float64, spread []Spread) int {
	best, bestD := 0, math.Inf(1)
	for i, m := range figs {
		d := 0.0
		for _, s := range spread {
			v, med := m[s.Path], medians[s.Path]
			switch {
			case (v == nil) != (med == nil):
				d++
			case v == nil || s.Min == nil || s.Max == nil || *s.Max == *s.Min:
			default:
				d += math.Abs(*v-*med) / (*s.Max - *s.Min)
			}
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// MostCommon is the verdict most runs had; a tie goes to the worst.
func MostCommon(runs []ArmResult) string {
	count := map[string]int{}
	for _, r := range runs {
		count[r.Verdict]++
	}
	best := ""
	for v, n := range count {
		if best == "" || n > count[best] || n == count[best] && worse(v, best) {
			best = v
		}
	}
	return best
}

// worse says whether verdict a ranks before b in verdictRank; a word it
// does not list ranks last, by name.
func worse(a, b string) bool {
	ia, ib := slices.Index(verdictRank, a), slices.Index(verdictRank, b)
	if ia < 0 {
		ia = len(verdictRank)
	}
	if ib < 0 {
		ib = len(verdictRank)
	}
	if ia != ib {
		return ia < ib
	}
	return a < b
}

// VerdictCount is how many of a's runs had its verdict: n of len(a.Runs),
// or 1 of 1 for an arm that ran once.
func (a ArmResult) VerdictCount() (n, of int) {
	if len(a.Runs) == 0 {
		return 1, 1
	}
	for _, r := range a.Runs {
		if r.Verdict == a.Verdict {
			n++
		}
	}
	return n, len(a.Runs)
}
