package reporters

import (
	"fmt"
	"strconv"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
)

// layersTable is the call chain of a two-tier testbed, one row per arm:
// what each layer received and sent, each from its own counters, and the
// end-to-end amplification (database attempts per client request),
// compared with the first arm's. Empty when no arm has an edge tier.
func layersTable(rep *experiment.Report) (head []string, rows [][]string) {
	var first *result.Layers
	for _, a := range rep.Arms {
		l := a.Layers
		if l == nil {
			continue
		}
		if first == nil {
			first = l
		}
		policy := ""
		if a.Edge != nil {
			policy = a.Edge.Config.String()
		}
		vs := ""
		if l != first && first.EndToEnd > 0 {
			vs = fmt.Sprintf(" (%+.0f%%)", (l.EndToEnd/first.EndToEnd-1)*100)
		}
		rows = append(rows, []string{a.Name, thousands(l.Requests), thousands(l.ClientAttempts),
			thousands(l.Edge), thousands(l.EdgeAttempts), thousands(l.API), thousands(l.DBAttempts), thousands(l.DBQueries),
			times(l.ClientAmp), times(l.EdgeAmp), times(l.APIAmp), strconv.FormatFloat(l.EndToEnd, 'f', 3, 64) + vs, policy})
	}
	if rows == nil {
		return nil, nil
	}
	head = []string{"layers", "client requests", "client attempts", "at A", "A to B", "at B", "B to DB", "DB done",
		"x clients", "x A", "x B", "DB per request", "A's policy"}
	return head, rows
}

// times is an amplification: "1.00x".
func times(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) + "x" }
