package plan

import (
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
)

// lbServerGates splits gs into the gates on one server's figures and the
// rest; a gate on a figure a server does not have stays in rest, for
// Validate to name the accepted paths.
func lbServerGates(gs []gates.Gate) (servers, rest []gates.Gate) {
	for _, g := range gs {
		if result.IsLBServerPath(g.Path) {
			servers = append(servers, g)
		} else {
			rest = append(rest, g)
		}
	}
	return servers, rest
}

// lbServerPathsOf are the paths of the servers gs name, every figure of
// each: what a gate on one server is checked against before the run (its
// arm, its operator, a percentage on a count).
func lbServerPathsOf(gs []gates.Gate) []string {
	var paths []string
	for _, g := range gs {
		server, _, _ := result.LBServerPath(g.Path)
		for _, f := range result.LBServerFigures {
			paths = append(paths, server+f)
		}
	}
	return paths
}
