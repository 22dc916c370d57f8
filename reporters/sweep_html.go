package reporters

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/sweep"
)

//go:embed sweep_html.tmpl
var sweepHTMLTemplate string

// SweepHTML writes one self-contained page for a sweep, with the
// stampede's page style (html.tmpl's): for a bisection, one chart per arm
// of every run's recovery time (ms from the trigger's end) against the
// magnitude on a log axis, the runs that did not recover marked at the
// top and the probes that tipped in red, the tipping point marked and the
// model's beside it, dashed; for a grid, a heat map of each
// arm's verdicts. Offline like HTML: inline CSS and SVG, nothing loaded;
// the output depends only on res.
func SweepHTML(w io.Writer, res *sweep.Results) error {
	page := sweepPage{Title: "herdbench sweep: " + res.Plan.Trigger, Style: template.CSS(pageStyle()), Line: sweepLine(res),
		Seed: res.Seed, Target: res.Environment.Target + " (" + res.Environment.Provider + ")", Status: sweepStatus(res)}
	if res.Vary != nil {
		head, rows := sweepRows(res)
		page.Table = htmlTable{Class: "arms", Head: head, Rows: rows}
		page.Notes = predictionNotes(res)
		for i, a := range res.Arms {
			page.Charts = append(page.Charts, tippingChart(res, i, a))
		}
	} else {
		for _, a := range res.Arms {
			page.Maps = append(page.Maps, heatMap(res, a))
		}
	}
	page.Gates = gateRows(res)
	return execute(w, "sweep", sweepHTMLTemplate, page, "sweep html")
}

// pageStyle is the stampede page's CSS, so both pages look alike.
func pageStyle() string {
	_, s, _ := strings.Cut(htmlTemplate, "<style>")
	s, _, _ = strings.Cut(s, "</style>")
	return s
}

type sweepPage struct {
	Title, Line, Target, Status string
	Style                       template.CSS
	Seed                        uint64
	Table                       htmlTable
	Charts                      []tipChart
	Maps                        []heatMapSVG
	Gates                       [][]string
	Notes                       []string // why the model does not cover an arm
}

// tipChart is one arm's runs: recovery time against the magnitude.
type tipChart struct {
	Arm, Tipping, Color string
	TipX                string // x of the tipping point found; "" when none was
	PredX, Predicted    string // x and text of the model's tipping point; "" when it has none in range
	Width, Height       int
	Left, Right         string
	Top, Bottom         string
	XTicks, YTicks      []tick
	Points              []tipPoint
	// Escape is the escape load of each probe whose runs stepped down,
	// drawn under the tipping chart on the same magnitudes; nil when
	// none did (or without --escape)
	Escape *escapeChart
}

// escapeChart is one arm's hysteresis: for each probe whose runs were
// stuck, the load at which they came back (a line through the probes),
// or a cross on the bottom line when none did.
type escapeChart struct {
	YTicks []tick
	Line   string // the polyline's points, in the magnitude's order
	Points []tipPoint
}

// tipPoint is one run: a dot at its recovery, or a cross at the top when
// it did not recover; red when its probe tipped.
type tipPoint struct {
	X, Y, Title string
	Recovered   bool
	Tipped      bool
}

// tippingChart plots arm i's runs on a log x axis from FROM to TO.
func tippingChart(res *sweep.Results, i int, a sweep.ArmSweep) tipChart {
	ax := res.Vary
	color, _ := armStyle(i)
	c := tipChart{Arm: a.Name, Color: color, Width: chartWidth, Height: chartHeight, Left: coord(plotLeft), Right: coord(plotRight),
		Top: coord(plotTop), Bottom: coord(plotBottom)}
	if a.Tipping != nil {
		c.Tipping = a.Tipping.Text
	}
	lo, hi := math.Log(ax.From), math.Log(ax.To)
	x := func(v float64) float64 { return plotLeft + (math.Log(v)-lo)/(hi-lo)*(plotRight-plotLeft) }
	highest := 0.0
	for _, p := range a.Probed {
		for _, r := range p.Runs {
			if r.RecoveryMS != nil {
				highest = max(highest, float64(*r.RecoveryMS))
			}
		}
	}
	top, step := niceScale(highest)
	// the top band, above the scale, holds the runs that did not recover
	band := plotTop + 26.0
	y := func(v float64) float64 { return plotBottom - v/top*(plotBottom-band) }
	for v := 0.0; v <= top+1e-9; v += step {
		c.YTicks = append(c.YTicks, tick{Pos: coord(y(v)), Label: number(v)})
	}
	c.YTicks = append(c.YTicks, tick{Pos: coord(plotTop + 6), Label: "none"})
	if t := a.Tipping; t != nil && t.State == sweep.TipFound && t.Value != nil {
		c.TipX = coord(x(*t.Value))
	}
	if p := a.Predicted; p != nil && p.Value != nil && *p.Value >= ax.From && *p.Value <= ax.To {
		c.PredX, c.Predicted = coord(x(*p.Value)), predictedText(p)
	}
	for _, v := range logTicks(ax.From, ax.To) {
		c.XTicks = append(c.XTicks, tick{Pos: coord(x(v)), Label: sweep.Format(v, ax.Unit)})
	}
	for _, p := range a.Probed {
		v := p.At[0].Value
		for k, r := range p.Runs {
			pt := tipPoint{X: coord(x(v)), Y: coord(plotTop + 6), Tipped: p.Tipped,
				Title: fmt.Sprintf("%s run %d: %s", sweep.AtText(p.At), k+1, r.Verdict)}
			if r.RecoveryMS != nil {
				pt.Recovered, pt.Y = true, coord(y(float64(*r.RecoveryMS)))
				pt.Title += fmt.Sprintf(", recovered in %d ms", *r.RecoveryMS)
			}
			c.Points = append(c.Points, pt)
		}
	}
	c.Escape = escapeOfArm(a, x)
	return c
}

// escapeOfArm is the escape chart of arm a, x placing a magnitude; nil
// when no probe's runs stepped down. Its y axis is the load, from 0 to
// the arm's rate, which the escape stepped down from.
func escapeOfArm(a sweep.ArmSweep, x func(float64) float64) *escapeChart {
	probed := slices.Clone(a.Probed)
	slices.SortFunc(probed, func(p, q sweep.Probe) int { return cmp.Compare(p.At[0].Value, q.At[0].Value) })
	from := 0.0
	for _, p := range probed {
		for _, r := range p.Runs {
			if e := r.Result.Escape; e != nil {
				from = max(from, e.FromRPS)
			}
		}
	}
	if !slices.ContainsFunc(probed, func(p sweep.Probe) bool { return p.EscapeTried > 0 }) || from <= 0 {
		return nil
	}
	top, step := niceScale(from)
	y := func(v float64) float64 { return plotBottom - v/top*(plotBottom-plotTop) }
	e := &escapeChart{}
	for v := 0.0; v <= top+1e-9; v += step {
		e.YTicks = append(e.YTicks, tick{Pos: coord(y(v)), Label: number(v)})
	}
	var line []string
	for _, p := range probed {
		if p.EscapeTried == 0 {
			continue
		}
		pt := tipPoint{X: coord(x(p.At[0].Value)), Y: coord(plotBottom), Tipped: p.Tipped,
			Title: fmt.Sprintf("%s: %d runs stepped down, none came back", sweep.AtText(p.At), p.EscapeTried)}
		if p.EscapeRPS != nil {
			pt.Recovered, pt.Y = true, coord(y(*p.EscapeRPS))
			pt.Title = fmt.Sprintf("%s: came back at %s/s (the median of %d runs stepped down)", sweep.AtText(p.At), number(*p.EscapeRPS), p.EscapeTried)
			line = append(line, pt.X+","+pt.Y)
		}
		e.Points = append(e.Points, pt)
	}
	e.Line = strings.Join(line, " ")
	return e
}

// logTicks are the 1, 2, 5 times powers of ten within [from, to], and
// both ends.
func logTicks(from, to float64) []float64 {
	ticks := []float64{from}
	for p := math.Pow(10, math.Floor(math.Log10(from))); p <= to; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if v := m * p; v > from*1.15 && v < to/1.15 {
				ticks = append(ticks, v)
			}
		}
	}
	return append(ticks, to)
}

// heatMapSVG is one arm's grid: a cell per probe, coloured by its verdict.
type heatMapSVG struct {
	Arm           string
	Width, Height int
	XName, YName  string
	XLabels       []tick
	YLabels       []tick
	Cells         []heatCell
}

type heatCell struct {
	X, Y, W, H, TX, TY string
	Color, Text, Title string
}

// verdictColors are the heat map's: the verdicts from good to bad.
var verdictColors = map[string]string{
	result.Recovered: "#b7e4c7", result.Recovering: "#ffe8a3", result.Relapsed: "#f8c9a0", result.Degraded: "#ffe8a3", result.Overloaded: "#d7b8f3", result.Metastable: "#f4a3a3",
}

// heatMap lays arm's cells out: rows the first axis' values, columns the
// second's (one column for a grid of one axis).
func heatMap(res *sweep.Results, a sweep.ArmSweep) heatMapSVG {
	g0 := res.Grid[0]
	cols := []string{""}
	m := heatMapSVG{Arm: a.Name, YName: g0.Name}
	if len(res.Grid) > 1 {
		cols = nil
		for _, v := range res.Grid[1].Values {
			cols = append(cols, sweep.Format(v, res.Grid[1].Unit))
		}
		m.XName = res.Grid[1].Name
	}
	const left, top, cw, ch = 90.0, 24.0, 110.0, 34.0
	m.Width, m.Height = int(left+cw*float64(len(cols))+10), int(top+ch*float64(len(g0.Values))+10)
	for j, c := range cols {
		m.XLabels = append(m.XLabels, tick{Pos: coord(left + cw*float64(j) + cw/2), Label: c})
	}
	for i, v := range g0.Values {
		m.YLabels = append(m.YLabels, tick{Pos: coord(top + ch*float64(i) + ch/2 + 4), Label: sweep.Format(v, g0.Unit)})
	}
	probed := map[string]sweep.Probe{}
	for _, p := range a.Probed {
		probed[sweep.AtText(p.At)] = p
	}
	for k, cell := range sweep.Cells(res.Grid) {
		i, j := k/len(cols), k%len(cols)
		hc := heatCell{X: coord(left + cw*float64(j)), Y: coord(top + ch*float64(i)), W: coord(cw - 2), H: coord(ch - 2),
			TX: coord(left + cw*float64(j) + cw/2), TY: coord(top + ch*float64(i) + ch/2 + 4), Color: "#eaeef2", Text: "not run"}
		if p, ok := probed[sweep.AtText(cell)]; ok {
			hc.Color, hc.Text = verdictColors[p.Verdict], cellText(p)
		}
		hc.Title = sweep.AtText(cell) + ": " + hc.Text
		m.Cells = append(m.Cells, hc)
	}
	return m
}
