package reporters

import (
	"maps"
	"slices"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// replicaCharts are, for each arm whose trigger restarted the testbed's
// replicas (one of them, or all), each replica's requests per second over
// the timeline (its replicas rows), T and the trigger's end marked: the
// herd a restarted replica takes when it serves again.
func replicaCharts(rep *experiment.Report) []chart {
	var out []chart
	for _, a := range rep.Arms {
		seen := map[string]bool{}
		for _, r := range a.Timeline {
			for name := range r.Replicas {
				seen[name] = true
			}
		}
		if a.Trigger.Name != "restart" || len(seen) == 0 {
			continue
		}
		out = append(out, partCharts(a, "replicas", "Requests per second at each API replica",
			"replicas of each 100 ms row: each replica's herdbench_api_requests_total", slices.Sorted(maps.Keys(seen)),
			func(r result.Row, name string) int64 { return r.Replicas[name] })...)
	}
	return out
}

// partCharts draws one chart of arm a: a series per name, each row's
// count at a second's rate, and the trigger's end marked beside T.
func partCharts(a result.ArmResult, key, title, source string, names []string, count func(result.Row, string) int64) []chart {
	parts := make([]result.ArmResult, len(names))
	legend := make([]string, len(names))
	for i, n := range names {
		rows := make([]result.Row, len(a.Timeline))
		for j, r := range a.Timeline {
			rows[j] = result.Row{TMS: r.TMS, DBQPS: float64(count(r, n)) / (rowMS / 1000.0)}
		}
		parts[i] = result.ArmResult{Name: n, Timeline: rows}
		legend[i] = n + " " + paletteNames[i%len(paletteNames)]
		if i >= len(paletteNames) {
			legend[i] += ", dashed"
		}
	}
	charts := drawCharts(parts, []chartSpec{{key + "-" + a.Name, title + ", arm " + a.Name, source + " (" + strings.Join(legend, ", ") + ")",
		func(r result.Row) (float64, bool) { return r.DBQPS, true }, number}})
	if e := a.Trigger.EndedMS; e != nil && len(charts) == 1 {
		_, xmax, x := xRange(parts)
		if *e <= xmax {
			charts[0].Ends = append(charts[0].Ends, abortMark{a.Name, "#cf222e", coord(x(*e)), "the trigger's cause ended at " + offset(*e)})
		}
	}
	return charts
}
