package reporters

import (
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/experiment"
)

// lbTable is the load balancer in front of the service, arm by arm, by its
// own counters (lb.*): what entered it, what it sent to the servers, its
// retries and redispatches, and each server's attempts. Nil without one.
func lbTable(rep *experiment.Report) ([]string, [][]string) {
	var rows [][]string
	for _, a := range rep.Arms {
		lb := a.LB
		if lb == nil {
			continue
		}
		var servers []string
		for _, s := range lb.Servers {
			servers = append(servers, s.Name+" "+thousands(s.Attempts))
		}
		rows = append(rows, []string{a.Name, thousands(lb.Requests), thousands(lb.ServerAttempts), thousands(lb.Retries),
			thousands(lb.Redispatches), strconv.FormatFloat(lb.Amplification, 'f', 2, 64), strings.Join(servers, ", ")})
	}
	if rows == nil {
		return nil, nil
	}
	return []string{"arm", "lb requests", "server attempts", "retries", "redispatches", "amplification", "per server"}, rows
}
