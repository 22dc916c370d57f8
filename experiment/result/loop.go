package result

import (
	"fmt"
	"math"
	"strconv"
)

// The loop: what holds a stuck service down shows as work that grew, or
// fell, after the trigger was over. Each figure of the after window
// (from the trigger's end) stands beside the before window's, summed
// from the timeline's rows, so from their sources: the clients' records,
// pg_stat_statements, Redis INFO and the testbed replicas' own counters.
// HeldBy names the figure furthest from its baseline on a metastable arm.

// Loop is an arm's figures after its trigger beside its baseline's. A
// loopFigure is null where its source is not observed: the replicas' on a
// service, the database's or the cache's on a target without them.
type Loop struct {
	AttemptsPerRequest  *LoopFigure `json:"attempts_per_request"`  // the clients' attempts sent per request intended
	DBQPS               *LoopFigure `json:"db_qps"`                // item queries Postgres completed a second (pg_stat_statements)
	LoadsRPS            *LoopFigure `json:"loads_rps"`             // loads the replicas finished a second: each fills the cache (herdbench_api_loads_total)
	LoadErrorsRPS       *LoopFigure `json:"load_errors_rps"`       // loads that failed a second (herdbench_api_load_errors_total)
	NewConnsRPS         *LoopFigure `json:"new_conns_rps"`         // connections the replicas' pools opened a second (herdbench_api_db_new_conns_total)
	CanceledAcquiresRPS *LoopFigure `json:"canceled_acquires_rps"` // waits for a pooled connection given up a second (herdbench_api_db_canceled_acquires_total)
	MissesRPS           *LoopFigure `json:"misses_rps"`            // cache misses a second (Redis keyspace_misses; Memcached get_misses)
	// HeldBy is the figure furthest from its baseline (the largest ratio
	// or its inverse), as the table shows it: "attempts x4.9"; set on a
	// metastable arm only
	HeldBy string `json:"held_by,omitempty"`
}

// LoopFigure is one figure over the before window and after the trigger's
// end, and their ratio. A rate of 0 counts as one event over the before
// window (each side), so a figure that rose from nothing has a finite
// ratio, a lower bound, and one that stayed at 0 has 1.
type LoopFigure struct {
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Ratio  float64 `json:"ratio"` // after / before, each at least the floor
}

// HeldBy names l's figure furthest from its baseline, by the size of the
// logarithm of its ratio (x4 and x0.25 are as far), the first on a tie in
// the order of Loop's fields; "" when none moved.
func HeldBy(l *Loop) string {
	if l == nil {
		return ""
	}
	best, far := "", 0.0
	for _, f := range []struct {
		name string
		fig  *LoopFigure
	}{
		{"attempts", l.AttemptsPerRequest}, {"db q/s", l.DBQPS}, {"loads", l.LoadsRPS}, {"load errors", l.LoadErrorsRPS},
		{"new conns", l.NewConnsRPS}, {"canceled waits", l.CanceledAcquiresRPS}, {"misses", l.MissesRPS},
	} {
		if f.fig == nil || f.fig.Ratio <= 0 {
			continue
		}
		if d := math.Abs(math.Log(f.fig.Ratio)); d > far {
			best, far = f.name+" x"+ratioText(f.fig.Ratio), d
		}
	}
	return best
}

// ratioText is a ratio with two significant digits: 4.9, 112, 0.05.
func ratioText(r float64) string {
	if r >= 10 {
		return strconv.FormatFloat(math.Round(r), 'f', 0, 64)
	}
	return fmt.Sprintf("%.2g", r)
}
