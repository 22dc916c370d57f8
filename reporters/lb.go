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
			servers = append(servers, fmt.Sprintf("%s %s (peak %s/s%s)", name, thousands(s.Attempts), strconv.FormatFloat(s.PeakRPS, 'f', 0, 64), returnText(s.Return)))
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
// attempts per second over the timeline (its lb_servers rows), T and the
// trigger's end marked: the herd a returning server takes, or
// slowstart's ramp.
func lbCharts(rep *experiment.Report) []chart {
	var out []chart
	for _, a := range rep.Arms {
		if a.LB == nil {
			continue
		}
		out = append(out, partCharts(a, "lb_servers", "Attempts per second at each server behind the load balancer",
			"lb_servers of each 100 ms row: HAProxy's stot of each server", slices.Sorted(maps.Keys(a.LB.Servers)),
			func(r result.Row, name string) int64 { return r.LBServers[name] })...)
	}
	return out
}

// returnText is a server's return in the table's per-server column: when
// HAProxy listed it UP again, its first second's rate, and when it took
// its full share (lb.servers.NAME.return.*); "" when it did not return.
func returnText(r *result.LBReturn) string {
	if r == nil {
		return ""
	}
	full := "full share not reached"
	if r.FullShareMS != nil {
		full = fmt.Sprintf("full share +%d ms", *r.FullShareMS)
	}
	return fmt.Sprintf("; back at %d ms, %s/s its first second, %s", r.BackMS, strconv.FormatFloat(r.FirstSecondRPS, 'f', 0, 64), full)
}
