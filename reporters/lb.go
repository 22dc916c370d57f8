package reporters

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/experiment"
)

// lbTable is the load balancer in front of the service, arm by arm, by its
// own counters (lb.*): what entered it, what it sent to the servers, its
// retries and redispatches, the 5xx it made itself, every layer's
// amplification multiplied, and each server's attempts and busiest
// second. Nil without one.
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
			servers = append(servers, fmt.Sprintf("%s %s (peak %s/s)", name, thousands(s.Attempts), strconv.FormatFloat(s.PeakRPS, 'f', 0, 64)))
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
