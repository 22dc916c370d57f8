package sweep

import (
	"strconv"
	"strings"
	"time"
)

// Preview is what a sweep may do at most, worked out without running
// anything: what a dry run prints.
type Preview struct {
	What   string   // the axis or the grid and the rule
	Arms   []string // the arms, each swept on its own
	Probes int      // the most probes one arm may take
	First  []string // the probes every arm starts with: both ends, or every cell
	Runs   int      // the most runs the sweep may make, its caps applied
	PerRun time.Duration
	// Worst is Runs runs of PerRun of load, or MaxTime and one more run
	// when that is shorter; every run also fills and drains
	Worst time.Duration
}

// Preview works out what s may do at most.
func (s Sweep) Preview() Preview {
	pv := Preview{Probes: s.WorstProbes(), PerRun: s.Plan.Duration()}
	for _, a := range s.Plan.Arms {
		pv.Arms = append(pv.Arms, a.Name)
	}
	if ax := s.Vary; ax != nil {
		pv.What = ax.Name + "=" + Format(ax.From, ax.Unit) + ".." + Format(ax.To, ax.Unit) + ", bisection on a log scale to " + percent(s.Settings.Resolution)
		pv.First = []string{Format(ax.From, ax.Unit), Format(ax.To, ax.Unit)}
	} else {
		var axes []string
		for _, g := range s.Grid {
			vals := make([]string, len(g.Values))
			for i, v := range g.Values {
				vals[i] = Format(v, g.Unit)
			}
			axes = append(axes, g.Name+"="+strings.Join(vals, ","))
		}
		pv.What = "grid " + strings.Join(axes, " ") + ", every cell"
		for _, c := range Cells(s.Grid) {
			pv.First = append(pv.First, atText(c))
		}
	}
	pv.Runs = min(len(pv.Arms)*pv.Probes*s.Settings.Repeat, s.Settings.MaxRuns)
	pv.Worst = min(time.Duration(pv.Runs)*pv.PerRun, time.Duration(s.Settings.MaxTime)+pv.PerRun)
	return pv
}

// percent is a ratio as a percentage: 0.1 as 10%.
func percent(r float64) string { return strconv.FormatFloat(r*100, 'g', 6, 64) + "%" }
