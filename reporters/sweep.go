package reporters

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/sweep"
)

// sweepFormats are the sweep's reports by name: the same names as a
// stampede's (FormatNames).
var sweepFormats = map[string]func(io.Writer, *sweep.Results) error{
	"table":    SweepTable,
	"json":     SweepJSON,
	"markdown": SweepMarkdown,
	"junit":    SweepJUnit,
	"html":     SweepHTML,
}

// SweepFormatNames are the formats a sweep's results render in.
func SweepFormatNames() []string { return slices.Sorted(maps.Keys(sweepFormats)) }

// RenderSweep writes a sweep's results to w in the named format.
func RenderSweep(w io.Writer, name string, res *sweep.Results) error {
	f, ok := sweepFormats[name]
	if !ok {
		return fmt.Errorf("unknown format %q (accepted: %s)", name, strings.Join(FormatNames(), ", "))
	}
	return f(w, res)
}

// SweepJSON writes the results as indented JSON: the herdbench.sweep/v2
// contract.
func SweepJSON(w io.Writer, res *sweep.Results) error { return indented(w, res) }

// WriteSweepJSONFile writes the results to path, creating its directory.
func WriteSweepJSONFile(path string, res *sweep.Results) error {
	return writeJSONFile(path, "sweep results", res)
}

// sweepLine says what was swept and how, for every report's heading.
func sweepLine(res *sweep.Results) string {
	s := res.Settings
	if ax := res.Vary; ax != nil {
		return fmt.Sprintf("%s=%s..%s, bisection on a log scale to %s, up to %d runs a probe (a tie tips)",
			ax.Name, sweep.Format(ax.From, ax.Unit), sweep.Format(ax.To, ax.Unit), strconv.FormatFloat(s.Resolution*100, 'g', 6, 64)+"%", s.Repeat)
	}
	var axes []string
	for _, g := range res.Grid {
		vals := make([]string, len(g.Values))
		for i, v := range g.Values {
			vals[i] = sweep.Format(v, g.Unit)
		}
		axes = append(axes, g.Name+"="+strings.Join(vals, ","))
	}
	return fmt.Sprintf("grid %s, up to %d runs a cell", strings.Join(axes, " "), s.Repeat)
}

// sweepStatus says why a sweep stopped early, "" when it did not.
func sweepStatus(res *sweep.Results) string {
	if !res.Partial {
		return ""
	}
	s := "partial: stopped by " + res.Stopped
	switch res.Stopped {
	case sweep.StoppedMaxRuns:
		s += fmt.Sprintf(" (--max-runs %d)", res.Settings.MaxRuns)
	case sweep.StoppedMaxTime:
		s += fmt.Sprintf(" (--max-time %s)", res.Settings.MaxTime)
	}
	if res.Error != "" {
		s += ": " + res.Error
	}
	return s + "; the brackets are what was found so far"
}

// tookText is a duration in ms as the tables show it.
func tookText(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// sweepRows are the arms of a bisection: arm, tipping point, the
// model's beside it (when the results have one: a sweep before it had
// none), bracket, probes, runs, time.
func sweepRows(res *sweep.Results) (head []string, rows [][]string) {
	predicted := slices.ContainsFunc(res.Arms, func(a sweep.ArmSweep) bool { return a.Predicted != nil })
	head = []string{"arm", "tipping"}
	if predicted {
		head = append(head, "predicted")
	}
	head = append(head, "bracket [survived, tipped]", "probes", "runs", "time")
	for _, a := range res.Arms {
		tip := ""
		if a.Tipping != nil {
			tip = a.Tipping.Text
			if a.Stopped != "" {
				tip += " (" + a.Stopped + ")"
			}
		}
		row := []string{a.Name, tip}
		if predicted {
			row = append(row, predictedText(a.Predicted))
		}
		rows = append(rows, append(row, sweep.BracketText(a.Bracket), strconv.Itoa(a.Probes), strconv.Itoa(a.Runs), tookText(a.TookMS)))
	}
	return head, rows
}

// predictedText is the model's tipping point as the tables show it: the
// value and how far from the measured one (1.67s (-5%)), none, or - when
// the model does not cover the arm (predictionNotes says why).
func predictedText(p *sweep.Predicted) string {
	switch {
	case p == nil || p.State == sweep.PredictedRefused:
		return "-"
	case p.VsMeasured != nil:
		return fmt.Sprintf("%s (%+.0f%%)", p.Text, *p.VsMeasured*100)
	}
	return p.Text
}

// predictionNotes say, for each arm the model does not cover, why not.
func predictionNotes(res *sweep.Results) []string {
	var notes []string
	for _, a := range res.Arms {
		if p := a.Predicted; p != nil && p.State == sweep.PredictedRefused {
			notes = append(notes, a.Name+": not predicted: "+p.Note)
		}
	}
	return notes
}

// gridRows are one arm's cells: a row per value of the first axis, a
// column per value of the second (or one column), each cell the probe's
// verdict, with its runs' count when more than one.
func gridRows(res *sweep.Results, a sweep.ArmSweep) (head []string, rows [][]string) {
	g0 := res.Grid[0]
	head = []string{g0.Name}
	cols := []string{"verdict"}
	if len(res.Grid) > 1 {
		cols = nil
		for _, v := range res.Grid[1].Values {
			cols = append(cols, res.Grid[1].Name+"="+sweep.Format(v, res.Grid[1].Unit))
		}
	}
	head = append(head, cols...)
	cell := map[string]string{}
	for _, p := range a.Probed {
		cell[sweep.AtText(p.At)] = cellText(p)
	}
	for _, c := range sweep.Cells(res.Grid) {
		if len(rows) == 0 || rows[len(rows)-1][0] != c[0].Text {
			rows = append(rows, []string{c[0].Text})
		}
		v, ok := cell[sweep.AtText(c)]
		if !ok {
			v = "-" // not probed: the sweep stopped first
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], v)
	}
	return head, rows
}

// cellText is a probe's verdict, with how many of its runs had it.
func cellText(p sweep.Probe) string {
	n := 0
	for _, r := range p.Runs {
		if r.Verdict == p.Verdict {
			n++
		}
	}
	text := fmt.Sprintf("%s %d/%d", p.Verdict, n, len(p.Runs))
	if len(p.Runs) == 1 {
		text = p.Verdict
	}
	if e := escapeText(p); e != "" {
		text += ", escape " + e
	}
	return text
}

// escapeText is a probe's escape load: the rate its stuck runs came back
// at, "not back" when they stepped down and none did, "" when none was
// stuck (or the sweep ran without --escape).
func escapeText(p sweep.Probe) string {
	switch {
	case p.EscapeRPS != nil:
		return strconv.FormatFloat(*p.EscapeRPS, 'f', -1, 64) + "/s"
	case p.EscapeTried > 0:
		return "not back"
	}
	return ""
}

// escapeLine is a bisected arm's hysteresis: the escape load of each
// probe whose runs stepped down, in the magnitude's order; "" when none
// did.
func escapeLine(a sweep.ArmSweep) string {
	probed := slices.Clone(a.Probed)
	slices.SortFunc(probed, func(x, y sweep.Probe) int { return cmp.Compare(x.At[0].Value, y.At[0].Value) })
	var parts []string
	for _, p := range probed {
		switch {
		case p.EscapeRPS != nil:
			parts = append(parts, sweep.AtText(p.At)+" came back at "+escapeText(p))
		case p.EscapeTried > 0:
			parts = append(parts, sweep.AtText(p.At)+" never came back")
		}
	}
	return strings.Join(parts, "; ")
}

// SweepTable writes what was swept, then the arms' tipping points (a
// bisection) or each arm's map of verdicts (a grid), then the gates.
func SweepTable(w io.Writer, res *sweep.Results) error {
	e := res.Environment
	fmt.Fprintf(w, "sweep     %s        seed %d\n", sweepLine(res), res.Seed)
	fmt.Fprintf(w, "target    %s (%s), trigger %s\n", e.Target, e.Provider, res.Plan.Trigger)
	if s := sweepStatus(res); s != "" {
		fmt.Fprintln(w, "warning   "+s)
	}
	if res.Vary != nil {
		head, rows := sweepRows(res)
		if err := columns(w, head, rows); err != nil {
			return err
		}
		for _, n := range predictionNotes(res) {
			fmt.Fprintln(w, "model     "+n)
		}
		for _, a := range res.Arms {
			if l := escapeLine(a); l != "" {
				fmt.Fprintf(w, "escape    %s: %s\n", a.Name, l)
			}
		}
	} else {
		for _, a := range res.Arms {
			fmt.Fprintf(w, "\narm %s: %d cells, %d runs, %s\n", a.Name, a.Probes, a.Runs, tookText(a.TookMS))
			head, rows := gridRows(res, a)
			if err := columns(w, head, rows); err != nil {
				return err
			}
		}
	}
	return sweepGates(w, res)
}

// sweepGates writes each gate on each arm, then the count of failures.
func sweepGates(w io.Writer, res *sweep.Results) error {
	if len(res.Gates) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	if err := columns(w, gateHead, gateRows(res)); err != nil {
		return err
	}
	if n := sweep.Failed(res.Gates); n > 0 {
		fmt.Fprintf(w, "%d of %d gates failed\n", n, len(res.Gates))
	}
	return nil
}

// SweepDryRun writes what one run of the sweep's heaviest probe would
// send (the experiment's dry run), then what the sweep may do at most.
func SweepDryRun(w io.Writer, pv sweep.Preview, run plan.Preview) error {
	if err := DryRun(w, run); err != nil {
		return err
	}
	fmt.Fprintf(w, "sweep     %s\n", pv.What)
	fmt.Fprintf(w, "arms      %s, each on its own\n", strings.Join(pv.Arms, ", "))
	fmt.Fprintf(w, "probes    at most %d per arm, beginning with %s\n", pv.Probes, strings.Join(pv.First, "; "))
	fmt.Fprintf(w, "runs      at most %d in all\n", pv.Runs)
	fmt.Fprintf(w, "time      at most %s of load (%d runs of %s each, or --max-time and one more run), plus each run's fill and drain\n",
		pv.Worst, pv.Runs, pv.PerRun)
	return nil
}
