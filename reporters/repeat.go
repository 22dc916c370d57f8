package reporters

import (
	"fmt"
	"strconv"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
)

// A repeated run's arms are each the median of their runs (--repeat). Every
// figure of the summary then shows the median with the runs' least and
// greatest in brackets, "412 (398–430)", and a figure whose range overlaps
// the first arm's carries notSupported: the runs do not support a
// difference between the two.
const notSupported = "≈"

// runsOf is how many runs the arms of rep are the medians of: the most any
// has, 0 when every arm ran once.
func runsOf(rep *experiment.Report) int {
	n := 0
	for _, a := range rep.Arms {
		n = max(n, len(a.Runs))
	}
	return n
}

// withSpread is cell, the median of path in a as its column shows it,
// with a's spread shown the same way ("every run" when all its runs show
// as the median does) and notSupported when the first arm's spread
// overlaps it; cell alone when a ran once.
func withSpread(cell string, a, first result.ArmResult, isFirst bool, path string, show func(*float64) string) string {
	s, ok := a.SpreadOf(path)
	if !ok {
		return cell
	}
	if lo, hi := show(s.Min), show(s.Max); lo != cell || hi != cell {
		cell = fmt.Sprintf("%s (%s–%s)", cell, lo, hi)
	} else {
		cell += " (every run)" // not recovered (not recovered–not recovered) says it less well
	}
	return cell + mark(a, first, isFirst, path)
}

// mark is " ≈" when the spread of path in a overlaps the first arm's.
func mark(a, first result.ArmResult, isFirst bool, path string) string {
	s, ok := a.SpreadOf(path)
	f, fok := first.SpreadOf(path)
	if isFirst || !ok || !fok || !s.Overlaps(f) {
		return ""
	}
	return " " + notSupported
}

// shown formats a spread's bound with the column's own format; none is
// what a bound without a value reads.
func shown(format func(float64) string, none string) func(*float64) string {
	return func(v *float64) string {
		if v == nil {
			return none
		}
		return format(*v)
	}
}

var (
	showCount = shown(func(v float64) string { return thousands(int64(v + 0.5)) }, "-")
	showMS    = shown(msString, "-")
	showPct   = shown(pct, "-")
	showRatio = shown(func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }, "-")
)

// verdictCell is an arm's verdict, with how many of its runs had it when
// not all did: "metastable (2 of 3)".
func verdictCell(a result.ArmResult, verdict string) string {
	if n, of := a.VerdictCount(); n < of {
		return fmt.Sprintf("%s (%d of %d)", verdict, n, of)
	}
	return verdict
}

// repeatNote explains a repeated run's summary under it: what the figures
// are and what the mark says; "" when every arm ran once.
func repeatNote(rep *experiment.Report) string {
	n := runsOf(rep)
	if n == 0 {
		return ""
	}
	runs := fmt.Sprintf("%d runs", n)
	for _, a := range rep.Arms {
		if len(a.Runs) != n {
			runs = fmt.Sprintf("up to %d runs (partial: each arm over the runs that finished)", n)
			break
		}
	}
	return fmt.Sprintf("Each figure is the median of %s of its arm, interleaved, with the least and the greatest in brackets; "+
		"%s: its range overlaps %s's, so the runs do not support a difference between the two. Gates read the medians.", runs, notSupported, firstName(rep))
}

// repeatLine is what the timeline line adds for a plan that repeats its
// arms: ", 3 runs of each, interleaved"; "" for one run.
func repeatLine(p plan.Plan) string {
	if n := p.Repeat.N(); n > 1 {
		return fmt.Sprintf(", %d runs of each, interleaved", n)
	}
	return ""
}
