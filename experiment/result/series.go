package result

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/targets"
)

// A target's own series (its file's prometheus: section, read into each
// arm's prometheus) are figures a gate may name, so a service herdbench
// cannot read directly (MySQL behind its exporter, a CDN's metrics) can be
// gated in CI: prometheus.NAME.AGG, AGG one of SeriesAggs over the points
// of the arm's after window (from T on). Stop conditions cannot: the
// series are read once the arm is over.

// SeriesAggs are how a series' after window becomes one figure.
var SeriesAggs = []string{"max", "min", "mean", "sum", "last"}

// seriesPath splits prometheus.NAME.AGG; ok is false for any other path.
func seriesPath(path string) (name, agg string, ok bool) {
	rest, ok := strings.CutPrefix(path, "prometheus.")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, ".")
	if i <= 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// seriesFigures are every series' aggregates over its points from T on; a
// series without such points has none (a gate on it fails, measured
// nothing).
func seriesFigures(series map[string][]targets.Point) map[string]*float64 {
	out := map[string]*float64{}
	for name, points := range series {
		var vals []float64
		for _, p := range points {
			if p.TMS >= 0 {
				vals = append(vals, p.Value)
			}
		}
		if len(vals) == 0 {
			continue
		}
		var sum float64
		for _, v := range vals {
			sum += v
		}
		for agg, v := range map[string]float64{"max": slices.Max(vals), "min": slices.Min(vals), "mean": sum / float64(len(vals)),
			"sum": sum, "last": vals[len(vals)-1]} {
			out["prometheus."+name+"."+agg] = &v
		}
	}
	return out
}

// SeriesGates splits gs into the gates on a target's series and the rest.
func SeriesGates(gs []gates.Gate) (series, rest []gates.Gate) {
	for _, g := range gs {
		if _, _, ok := seriesPath(g.Path); ok {
			series = append(series, g)
		} else {
			rest = append(rest, g)
		}
	}
	return series, rest
}

// SeriesForm checks the gates on series that need no target: the
// arms they name, a number, and how the series becomes a figure.
func SeriesForm(gs []gates.Gate, arms []string) herd.FieldErrors {
	paths := make([]string, len(gs))
	for i, g := range gs {
		paths[i] = g.Path
	}
	errs := gates.Validate(gs, arms, paths, nil, nil, "gates")
	for _, g := range gs {
		if _, agg, _ := seriesPath(g.Path); !slices.Contains(SeriesAggs, agg) {
			errs = append(errs, &herd.FieldError{Field: "gates", Elem: g.Expr, Msg: fmt.Sprintf(
				"%q is not how a series becomes a figure (accepted: prometheus.NAME.AGG, AGG one of %s, over the after window)", agg, strings.Join(SeriesAggs, ", "))})
		}
	}
	return errs
}

// SeriesDeclared checks that the gates on series name series the target
// declares.
func SeriesDeclared(gs []gates.Gate, tg *targets.Target) herd.FieldErrors {
	var declared map[string]string
	if tg.Prometheus != nil {
		declared = tg.Prometheus.Series
	}
	names := slices.Sorted(maps.Keys(declared))
	var errs herd.FieldErrors
	for _, g := range gs {
		name, agg, _ := seriesPath(g.Path)
		if _, ok := declared[name]; ok || !slices.Contains(SeriesAggs, agg) {
			continue // declared, or its form was said wrong already
		}
		msg := fmt.Sprintf("%s names a series %s does not declare (accepted: prometheus.NAME.AGG, NAME one of %s)", g.Path, tg.Name, strings.Join(names, ", "))
		if len(names) == 0 {
			msg = fmt.Sprintf("%s names a series, and %s declares none (accepted: a target file whose prometheus: section names its series)", g.Path, tg.Name)
		}
		errs = append(errs, &herd.FieldError{Field: "gates", Elem: g.Expr, Msg: msg})
	}
	return errs
}
