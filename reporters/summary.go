package reporters

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
)

// summary is the arms side by side, as every format shows them: one row per
// arm, each compared with the first arm. Cells are plain text; each format
// escapes them its own way.
type summary struct {
	head []string
	rows [][]string
}

// summarize builds the summary of rep. Attempts per request appear only when
// some arm retried or hedged, the critical requests' drop rate only when
// some arm counted critical requests ("-" for an arm that counted none),
// what held a stuck arm down only when some arm was stuck, and the escape
// load only when the run had --escape.
func summarize(rep *experiment.Report) summary {
	retried, critical, held := false, false, false
	for _, a := range rep.Arms {
		retried = retried || a.Retries.Amplification > 1
		critical = critical || a.HTTP.Critical != nil
		held = held || heldBy(a) != ""
	}
	s := summary{head: []string{"arm", "db queries", "vs " + firstName(rep), "peak db q/s", "p50", "p99", "drop rate", "recovery", "verdict"}}
	if retried {
		s.head = append(s.head, "attempts/req")
	}
	if critical {
		s.head = append(s.head, "critical drop")
	}
	var base int64 = -1
	for i, a := range rep.Arms {
		s.rows = append(s.rows, summaryRow(a, rep.Arms[0], i == 0, &base, retried, critical))
	}
	if held {
		s.head = append(s.head, "held by")
		for i, a := range rep.Arms {
			s.rows[i] = append(s.rows[i], cmp.Or(heldBy(a), "-"))
		}
	}
	if slices.ContainsFunc(rep.Arms, func(a result.ArmResult) bool { return a.Escape != nil }) { // --escape
		s.head = append(s.head, "escape")
		for i, a := range rep.Arms {
			s.rows[i] = append(s.rows[i], escapeCell(a))
		}
	}
	return s
}

// heldBy is the figure that held a stuck arm down (loop.held_by); "" for
// any other arm.
func heldBy(a result.ArmResult) string {
	if a.Loop == nil {
		return ""
	}
	return a.Loop.HeldBy
}

// summaryRow is one arm's row of the summary: with several runs, each
// figure with its spread (repeat.go).
func summaryRow(a, first result.ArmResult, isFirst bool, base *int64, retried, critical bool) []string {
	spread := func(cell, path string, show func(*float64) string) string {
		return withSpread(cell, a, first, isFirst, path, show)
	}
	// a target without Postgres has no DB figures: "-"
	queries, vs, peak := "-", "-", "-"
	if a.DB != nil {
		if *base < 0 {
			*base = a.DB.Queries
		}
		queries = spread(thousands(a.DB.Queries), "db.queries", showCount)
		vs = versus(a.DB.Queries, *base) + mark(a, first, isFirst, "db.queries")
		peak = spread(thousands(int64(a.DB.PeakQPS+0.5)), "db.peak_qps", showCount)
	}
	row := []string{a.Name, queries, vs, peak, spread(msString(a.HTTP.P50MS), "http.p50_ms", showMS),
		spread(msString(a.HTTP.P99MS), "http.p99_ms", showMS) + lateMark(a), spread(pct(a.HTTP.DropRate), "http.drop_rate", showPct),
		spread(recoveryString(a), "recovery_ms", shown(msString, "not recovered")), verdictCell(a, cmp.Or(a.Verdict, "-"))}
	if retried {
		row = append(row, spread(strconv.FormatFloat(a.Retries.Amplification, 'f', 2, 64), "retries.amplification", showRatio))
	}
	if critical {
		c := "-"
		if a.HTTP.Critical != nil {
			c = spread(pct(a.HTTP.Critical.DropRate), "http.critical.drop_rate", showPct)
		}
		row = append(row, c)
	}
	return row
}

// detail is a table under the summary, one row per arm, as every format
// shows it: key names it (the HTML table's class) and intro says what it
// holds, in plain text that needs no escaping in any format.
type detail struct {
	key, intro string
	head       []string
	rows       [][]string
}

// details are the tables under the summary that rep has rows for, in the
// order every format shows them: the layers of a two-tier testbed, then a
// write herd. Each is left out when no arm has its figures.
func details(rep *experiment.Report) []detail {
	var out []detail
	for _, d := range []struct {
		key, intro string
		table      func(*experiment.Report) ([]string, [][]string)
	}{
		{"requests", "Request class by request class, each from the clients' records of it alone (the herd's blast radius)", classesTable},
		{"layers", "Layer by layer, each from its own counters", layersTable},
		{"lb", "The load balancer in front of the service, by its own counters (HAProxy's stats), from T", lbTable},
		{"writes", "The write herd, from the clients, pg_stat_statements, pg_stat_activity, the queue and the replicas' lag", writesTable},
		{"escape", "The escape load: once the arm was metastable its rate stepped down, each step until a hold of its rows was back in band or its limit passed (--escape), from the timeline's rows", escapeTable},
	} {
		if head, rows := d.table(rep); rows != nil {
			out = append(out, detail{d.key, d.intro, head, rows})
		}
	}
	return out
}

// DropMargin is how far above the lowest drop rate of a run an arm's may be
// and still be named best: a dropped request costs no query and answers
// fast, so an arm that drops more would win both "fewest db queries" and
// "lowest p99" by failing. One percentage point.
const DropMargin = 0.01

// best is the arm with the fewest DB queries after T and the one with the
// lowest p99, among the arms whose drop rate is within DropMargin of the
// run's lowest; dropped are the others, which are never named. ok is
// false with fewer than two arms, where there is nothing to compare.
func best(rep *experiment.Report) (fewest, fastest result.ArmResult, dropped []result.ArmResult, ok bool) {
	if len(rep.Arms) < 2 || rep.Arms[0].DB == nil { // without DB figures there is no fewest
		return fewest, fastest, nil, false
	}
	least := rep.Arms[0].HTTP.DropRate
	for _, a := range rep.Arms[1:] {
		least = min(least, a.HTTP.DropRate)
	}
	first := true
	for _, a := range rep.Arms {
		if a.HTTP.DropRate > least+DropMargin {
			dropped = append(dropped, a)
			continue
		}
		if first {
			fewest, fastest, first = a, a, false
			continue
		}
		if a.DB != nil && (fewest.DB == nil || a.DB.Queries < fewest.DB.Queries) {
			fewest = a
		}
		if a.HTTP.P99MS < fastest.HTTP.P99MS {
			fastest = a
		}
	}
	return fewest, fastest, dropped, fewest.DB != nil
}

// droppedNote says which arms best left out and what they dropped; "" when
// none.
func droppedNote(dropped []result.ArmResult) string {
	if len(dropped) == 0 {
		return ""
	}
	parts := make([]string, len(dropped))
	for i, a := range dropped {
		parts[i] = a.Name + " " + pct(a.HTTP.DropRate)
	}
	return fmt.Sprintf("not named, as they dropped over %g point more than the run's fewest: %s",
		DropMargin*100, strings.Join(parts, ", "))
}

// sentence is s begun with a capital, for a line of its own.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Expected is what a gate result had to satisfy, as its gate reads: the
// operator and the value, a ratio as a percentage ("< 1%", "<= 150"),
// and of a gate over seconds in how many of them ("< 250 in at least 95%
// of seconds").
func Expected(g gates.Result) string {
	if g.Word != "" {
		return g.Op + " " + g.Word
	}
	bound := g.Op + " " + strconv.FormatFloat(g.Value, 'f', -1, 64)
	if gates.IsRatio(g.Path) {
		// rounded so that 0.01 reads 1%, not 1.0000000000000002%
		v := math.Round(g.Value*100*1e9) / 1e9
		bound = g.Op + " " + strconv.FormatFloat(v, 'f', -1, 64) + "%"
	}
	if g.Seconds != nil {
		return secondsExpected(bound, g.Seconds)
	}
	return bound
}

// aborted lists the arms a stop condition ended early, in the report's
// order; of a repeated arm, each run it ended, named "arm, run 2 of 3".
func aborted(rep *experiment.Report) []result.ArmResult {
	var out []result.ArmResult
	for _, a := range rep.Arms {
		if len(a.Runs) == 0 && a.Aborted != nil {
			out = append(out, a)
		}
		for i, r := range a.Runs {
			if r.Aborted != nil {
				r.Name = fmt.Sprintf("%s, run %d of %d", a.Name, i+1, len(a.Runs))
				out = append(out, r)
			}
		}
	}
	return out
}

// saturation says, when the generator was the bottleneck in some arm,
// which arms, how far from its schedule it fell at worst, and what to do;
// "" when it kept up everywhere.
func saturation(rep *experiment.Report) string {
	var names []string
	sent, lag := 1.0, 0.0
	for _, a := range rep.Arms {
		l := a.Load
		if !l.Saturated {
			continue
		}
		names = append(names, a.Name)
		if l.Intended > 0 {
			sent = min(sent, float64(l.Sent)/float64(l.Intended))
		}
		lag = max(lag, l.LagP90MS)
	}
	if len(names) == 0 {
		return ""
	}
	msg := fmt.Sprintf("the load generator, not the service, was the bottleneck in %s: lag p90 %s", strings.Join(names, ", "), msString(lag))
	if sent < 1 {
		msg += fmt.Sprintf(", and it sent only %s of the intended requests (the unsent count as dropped)", pct(sent))
	}
	return msg + fmt.Sprintf(" (saturated past %s of lag at p90 or under %s sent). Lower --rate, give herdbench more cores, or split the load over workers",
		experiment.SaturatedLag, pct(experiment.SaturatedSent))
}

// lateMark marks a p99 that holds a material share of the generator's own
// lag (experiment.MaterialLagShare).
func lateMark(a result.ArmResult) string {
	if a.LagShare() >= experiment.MaterialLagShare {
		return " *"
	}
	return ""
}

// lateness says, when in some arm the generator's lag p99 is a material
// share of the p99, which arms, the worst share and what it means; "" when
// in none.
func lateness(rep *experiment.Report) string {
	var names []string
	var worst result.ArmResult
	for _, a := range rep.Arms {
		if a.LagShare() < experiment.MaterialLagShare {
			continue
		}
		names = append(names, a.Name)
		if a.LagShare() > worst.LagShare() {
			worst = a
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("* herdbench's own sending lag is a material share of the p99 in %s: at worst %s, lag p99 %s of p99 %s (%s). "+
		"The p99 counts from each request's intended send time, so it holds the generator's lateness too (marked from %s). "+
		"Give herdbench more cores, lower --rate, or split the load over workers to see the service's own",
		strings.Join(names, ", "), worst.Name, msString(worst.Load.LagP99MS), msString(worst.HTTP.P99MS),
		pct(worst.LagShare()), pct(experiment.MaterialLagShare))
}

// workersLine says how the workers of a distributed run kept the herd
// together: their number and each arm's start skew. Empty without workers.
func workersLine(rep *experiment.Report) string {
	var parts []string
	n := 0
	for _, a := range rep.Arms {
		if ws := a.Workers; ws != nil {
			n = ws.Count
			parts = append(parts, fmt.Sprintf("%s %s", a.Name, msString(ws.StartSkewMaxMS)))
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d, each sending every %s request; start skew max %s", n, ordinal(n), strings.Join(parts, ", "))
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
