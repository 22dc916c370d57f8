package reporters

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// The service's parts one by one: the servers behind its load balancer
// (their table and charts, by HAProxy's counters) and the testbed's
// replicas (their charts, by their own).

// lbTable is the load balancer in front of the service, arm by arm, by its
// own counters (lb.*): what entered it, what it sent to the servers, its
// retries and redispatches, the 5xx it made itself, every layer's
// amplification multiplied, and each server's attempts, busiest second
// and return. Nil without one.
func lbTable(rep *experiment.Report) ([]string, [][]string) {
	var rows [][]string
	for _, a := range rep.Arms {
		lb := a.LB
		if lb == nil {
			continue
		}
		var servers []string
		for _, name := range slices.Sorted(maps.Keys(lb.Servers)) {
			s := lb.Servers[name]
			servers = append(servers, fmt.Sprintf("%s %s (peak %s/s%s)", name, thousands(s.Attempts), strconv.FormatFloat(s.PeakRPS, 'f', 0, 64), returnText(s)))
		}
		rows = append(rows, []string{a.Name, thousands(lb.Requests), thousands(lb.ServerAttempts), thousands(lb.Retries),
			thousands(lb.Redispatches), thousands(lb.Own5xx), strconv.FormatFloat(lb.Amplification, 'f', 2, 64),
			strconv.FormatFloat(lb.EndToEnd, 'f', 2, 64), strings.Join(servers, ", ")})
	}
	if rows == nil {
		return nil, nil
	}
	return []string{"arm", "lb requests", "server attempts", "retries", "redispatches", "own 5xx", "sent per request", "end to end", "per server"}, rows
}

// lbCharts are, for each arm behind a load balancer, each server's
// attempts per second over the timeline (its lb_servers rows), and its
// weight (lb_weights: a level, plotted as it is, a gap where a row has
// none), T and the trigger's end marked: the herd a returning server
// takes, or slowstart's ramp.
func lbCharts(rep *experiment.Report) []chart {
	var out []chart
	for _, a := range rep.Arms {
		if a.LB == nil {
			continue
		}
		names := slices.Sorted(maps.Keys(a.LB.Servers))
		out = append(out, partCharts(a, "lb_servers", "Attempts per second at each server behind the load balancer",
			"lb_servers of each 100 ms row: HAProxy's stot of each server", names,
			func(r result.Row, name string) (float64, bool) { return perSecond(r.LBServers[name]), true })...)
		if slices.ContainsFunc(a.Timeline, func(r result.Row) bool { return r.LBWeights != nil }) {
			out = append(out, partCharts(a, "lb_weights", "Weight of each server behind the load balancer",
				"lb_weights of each 100 ms row: HAProxy's weight of each server at the row's last reading while it lists it UP, 0 otherwise; a level, not a rate",
				names, func(r result.Row, name string) (float64, bool) { w, ok := r.LBWeights[name]; return float64(w), ok })...)
		}
	}
	return out
}

// returnText is a server's first return in the table's per-server
// column: when HAProxy listed it UP again, its first second's rate, and
// when it took its full share (lb.servers.NAME.return.*), and when it was
// back again after flapping (returns); "" when it did not return.
func returnText(s *result.LBServer) string {
	r := s.Return
	if r == nil {
		return ""
	}
	full := "full share not reached"
	if r.FullShareMS != nil {
		full = fmt.Sprintf("full share +%d ms", *r.FullShareMS)
	}
	var again []string
	for _, later := range s.Returns[min(1, len(s.Returns)):] {
		again = append(again, strconv.FormatInt(later.BackMS, 10))
	}
	if again != nil {
		full += "; back again at " + strings.Join(again, ", ") + " ms"
	}
	return fmt.Sprintf("; back at %d ms, %s/s its first second, %s", r.BackMS, strconv.FormatFloat(r.FirstSecondRPS, 'f', 0, 64), full)
}

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
			func(r result.Row, name string) (float64, bool) { return perSecond(r.Replicas[name]), true })...)
	}
	return out
}

// perSecond is a row's count at a second's rate.
func perSecond(n int64) float64 { return float64(n) / (rowMS / 1000.0) }

// partCharts draws one chart of arm a: a series per name, each row's
// value (a gap where ok is false), and the trigger's end marked beside T.
func partCharts(a result.ArmResult, key, title, source string, names []string, value func(result.Row, string) (v float64, ok bool)) []chart {
	parts := make([]result.ArmResult, len(names))
	legend := make([]string, len(names))
	for i, n := range names {
		var rows []result.Row // a row left out is a gap in its series
		for _, r := range a.Timeline {
			if v, ok := value(r, n); ok {
				rows = append(rows, result.Row{TMS: r.TMS, DBQPS: v})
			}
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
