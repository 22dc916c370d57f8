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
	AttemptsPerRequest *LoopFigure `json:"attempts_per_request"` // the clients' attempts sent per request intended
	DBQPS              *LoopFigure `json:"db_qps"`               // item queries Postgres completed a second (pg_stat_statements)
	// Counts are the subject's row counters a second, by the names its
	// kind declared (DeclareRowCounters), written at NAME_rps, null where
	// the subject does not count them (the testbed's replicas count
	// their loads, failed loads, new connections and given-up waits)
	Counts    map[string]*LoopFigure `json:"-"`
	MissesRPS *LoopFigure            `json:"misses_rps"` // cache misses a second (Redis keyspace_misses; Memcached get_misses)
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
	type named struct {
		name string
		fig  *LoopFigure
	}
	figs := []named{{"attempts", l.AttemptsPerRequest}, {"db q/s", l.DBQPS}}
	for _, c := range DeclaredRowCounters() {
		figs = append(figs, named{c.Label, l.Counts[c.Name]})
	}
	for _, f := range append(figs, named{"misses", l.MissesRPS}) {
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
