package reporters

import (
	"math"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// Chart geometry, in SVG units; the SVG scales to the page's width.
const (
	chartWidth  = 760
	chartHeight = 240
	plotLeft    = 64
	plotRight   = chartWidth - 16
	plotTop     = 12
	plotBottom  = chartHeight - 28
	rowMS       = 100 // a timeline row's length
)

// chartSpec says what one chart plots: value reads a row, and ok is false
// for a row with nothing to show (no requests), which breaks the line.
type chartSpec struct {
	key, title, source string
	value              func(result.Row) (v float64, ok bool)
	label              func(float64) string
}

// charts draws the timelines of every arm of rep: each row a step 100 ms
// wide at its value, all arms on one x range (from the earliest row to the
// end of the latest, in ms from T) and one y scale per chart.
func charts(rep *experiment.Report) []chart {
	specs := []chartSpec{
		{"db_qps", "DB queries per second", "db_qps of each 100 ms row: pg_stat_statements calls of the item query",
			func(r result.Row) (float64, bool) { return r.DBQPS, true }, number},
		{"p99_ms", "p99 latency (ms)", "p99_ms of each row: requests intended in the row, from their intended send time",
			func(r result.Row) (float64, bool) { return r.P99MS, r.Requests > 0 }, number},
		{"drop_rate", "Drop rate (%)", "(requests - ok) / requests of each row; rows without requests are gaps",
			func(r result.Row) (float64, bool) {
				if r.Requests == 0 {
					return 0, false
				}
				return float64(r.Requests-r.OK) / float64(r.Requests) * 100, true
			}, func(v float64) string { return number(v) + "%" }},
	}
	out := append(drawCharts(rep.Arms, specs), classCharts(rep)...)
	return append(append(out, lbCharts(rep)...), replicaCharts(rep)...)
}

// classCharts are the p99 of each request class of rep over the
// timeline, every arm's on one chart: the herd's blast radius, class by
// class. None for a target of one request.
func classCharts(rep *experiment.Report) []chart {
	var out []chart
	for _, c := range rep.Environment.Requests {
		arms := make([]result.ArmResult, 0, len(rep.Arms))
		for _, a := range rep.Arms {
			f := a.Requests[c.Name]
			if f == nil {
				continue
			}
			rows := make([]result.Row, len(f.Timeline))
			for i, r := range f.Timeline {
				rows[i] = result.Row{TMS: r.TMS, Requests: r.Requests, OK: r.OK, Unsent: r.Unsent, P99MS: r.P99MS}
			}
			arms = append(arms, result.ArmResult{Name: a.Name, Aborted: a.Aborted, Timeline: rows})
		}
		role := "a bystander"
		if c.Herd {
			role = "the herd's"
		}
		out = append(out, drawCharts(arms, []chartSpec{{"p99_ms-" + c.Name, "p99 latency of " + c.Name + ", " + role + " class (ms)",
			"p99_ms of each row of requests." + c.Name + ".timeline: the class's requests intended in the row, from their intended send time",
			func(r result.Row) (float64, bool) { return r.P99MS, r.Requests > 0 }, number}})...)
	}
	return out
}

// xRange is the x range of the arms' timelines, T always on it, and the
// x of an instant in ms from T.
func xRange(arms []result.ArmResult) (xmin, xmax int64, x func(ms int64) float64) {
	first := true
	for _, a := range arms {
		for _, row := range a.Timeline {
			if first || row.TMS < xmin {
				xmin = row.TMS
			}
			if first || row.TMS+rowMS > xmax {
				xmax = row.TMS + rowMS
			}
			first = false
		}
	}
	xmin, xmax = min(xmin, 0), max(xmax, rowMS)
	return xmin, xmax, func(ms int64) float64 {
		return plotLeft + float64(ms-xmin)/float64(xmax-xmin)*(plotRight-plotLeft)
	}
}

// drawCharts draws each spec over the arms' timelines.
func drawCharts(arms []result.ArmResult, specs []chartSpec) []chart {
	xmin, xmax, x := xRange(arms)
	var out []chart
	for _, sp := range specs {
		ymax := 0.0
		for _, a := range arms {
			for _, row := range a.Timeline {
				if v, ok := sp.value(row); ok && v > ymax {
					ymax = v
				}
			}
		}
		top, step := niceScale(ymax)
		y := func(v float64) float64 { return plotBottom - v/top*(plotBottom-plotTop) }
		c := chart{
			Key: sp.key, Title: sp.title, Source: sp.source, Width: chartWidth, Height: chartHeight,
			Left: coord(plotLeft), Right: coord(plotRight), Top: coord(plotTop), Bottom: coord(plotBottom),
			TX: coord(x(0)),
		}
		for v := 0.0; v <= top+step/2; v += step {
			c.YTicks = append(c.YTicks, tick{coord(y(v)), sp.label(v)})
		}
		xstep := niceXStep(xmax - xmin)
		for ms := (xmin / xstep) * xstep; ms <= xmax; ms += xstep {
			if ms >= xmin {
				c.XTicks = append(c.XTicks, tick{coord(x(ms)), tLabel(ms)})
			}
		}
		for i, a := range arms {
			color, dash := armStyle(i)
			if d := stepPath(a.Timeline, sp.value, x, y); d != "" {
				c.Series = append(c.Series, series{a.Name, color, dash, d})
			}
			if ab := a.Aborted; ab != nil && ab.AtMS >= xmin && ab.AtMS <= xmax {
				c.Aborts = append(c.Aborts, abortMark{a.Name, color, coord(x(ab.AtMS)),
					a.Name + " stopped at " + offset(ab.AtMS) + ": " + ab.Reason})
			}
		}
		out = append(out, c)
	}
	return out
}

// stepPath is the SVG path of one arm's rows: a horizontal step per row,
// vertical joins between adjacent rows (rows at the same value merge into
// one step), a new subpath after a gap.
func stepPath(rows []result.Row, value func(result.Row) (float64, bool), x func(int64) float64, y func(float64) float64) string {
	var b strings.Builder
	var end int64 // the end of the step being drawn, in ms
	var level string
	open := false
	flush := func() {
		if open {
			b.WriteString(" H" + coord(x(end)))
		}
	}
	for _, r := range rows {
		v, ok := value(r)
		if !ok {
			flush()
			open = false
			continue
		}
		yv := coord(y(v))
		switch {
		case open && r.TMS == end && yv == level:
		case open && r.TMS == end:
			b.WriteString(" H" + coord(x(end)) + " V" + yv)
		default:
			flush()
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString("M" + coord(x(r.TMS)) + " " + yv)
		}
		end, level, open = r.TMS+rowMS, yv, true
	}
	flush()
	return b.String()
}

// niceScale is the top of a y axis from 0 that holds highest, and its tick
// step: 1, 2, 2.5 or 5 times a power of ten, at most 6 steps.
func niceScale(highest float64) (top, step float64) {
	if !(highest > 0) || math.IsInf(highest, 0) {
		return 1, 0.2
	}
	raw := highest / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	top = math.Ceil(highest/step-1e-9) * step
	return top, step
}

// niceXStep is the x ticks' step for a span in ms: at most about 12 ticks.
func niceXStep(span int64) int64 {
	for _, s := range []int64{100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000} {
		if span/s <= 12 {
			return s
		}
	}
	return 60000 * (span/60000/12 + 1)
}

// tLabel is a time relative to T on the x axis: -2s, T, +1.5s.
func tLabel(ms int64) string {
	if ms == 0 {
		return "T"
	}
	s := strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"
	if ms > 0 {
		return "+" + s
	}
	return s
}

// coord formats an SVG coordinate with one decimal.
func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// number formats an axis value without float noise: 0.30000000000000004
// reads 0.3.
func number(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}
