package reporters

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/gates"
)

// Header writes what is about to run: the testbed, the load and the
// trigger, triggerLine saying what it does to the target's stores
// (plan.TriggerLine).
func Header(w io.Writer, rep *experiment.Report, triggerLine string) {
	e, p := rep.Environment, rep.Plan
	var first arm.Arm
	if len(p.Arms) > 0 {
		first = p.Arms[0]
	}
	c := configOf(e.Replica, first.Knobs) // the first arm's knobs, over the replicas'
	if e.Service() {
		fmt.Fprintf(w, "target    %s (%s), %d endpoints        seed %d\n", e.Target, e.Provider, e.Replicas, rep.Seed)
		fmt.Fprintf(w, "load      %s req/s open model over %s keys, client timeout %s\n",
			thousands(int64(p.Rate)), thousands(int64(p.Keys)), p.Timeout)
	} else {
		fmt.Fprintf(w, "testbed   %s, %d replicas, %s, %d CPUs        seed %d\n",
			e.Provider, e.Replicas, stores(e), e.CPUs, rep.Seed)
		fmt.Fprintf(w, "load      %s req/s open model, Zipf(%g) over %s keys, TTL %s, query %s, client timeout %s\n",
			thousands(int64(p.Rate)), p.Zipf, thousands(int64(p.Keys)), c.ttl(), c.query(), p.Timeout)
	}
	fmt.Fprintf(w, "clients   %d, retry %s, retry budget %s, adaptive throttling K %g, hedge %s, breaker %s",
		max(p.Clients, 1), p.Retry, p.Budget, p.Throttle, p.Hedge, p.Breaker)
	if p.Critical > 0 {
		fmt.Fprintf(w, ", %g%% critical", p.Critical*100)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "timeline  warmup %s, before %s, T, after %s per arm%s\n", p.Warmup, p.Before, plan.AfterValue{P: &p}, repeatLine(p))
	// the hot keys it touches, where it touches them, are in it: wrapped
	// under the value's column, as the help is, at headerWidth
	fmt.Fprintf(w, "trigger   %s\n", wrapUnder(triggerLine, len("trigger   "), headerWidth))
}

// headerWidth is the most columns a header line takes when its value can
// be wrapped.
const headerWidth = 100

// wrapUnder wraps s at spaces so that no line, indented by indent, passes
// width; the lines after the first are indented under the first. A word
// longer than the width stays whole.
func wrapUnder(s string, indent, width int) string {
	var b strings.Builder
	col := indent
	for i, word := range strings.Split(s, " ") {
		switch {
		case i == 0:
		case col+1+len(word) > width:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += len(word)
	}
	return b.String()
}

// Table writes the arms side by side, each compared with the first arm, and
// says which arm did best.
func Table(w io.Writer, rep *experiment.Report) error {
	s := summarize(rep)
	if err := columns(w, s.head, s.rows); err != nil {
		return err
	}
	if s := repeatNote(rep); s != "" {
		fmt.Fprintln(w, s)
	}
	if s := verdict(rep); s != "" {
		fmt.Fprintln(w, s)
	}
	for _, l := range dbLines(rep) {
		fmt.Fprintf(w, "%-10s%s\n", l.label, l.text)
	}
	for _, a := range rep.Arms {
		if m := a.Model; m.Disagrees(a) { // the rule: result.ModelExpectation.Disagrees
			predicted := "none: it tips"
			if m.RecoveryMS != nil {
				predicted = msString(float64(*m.RecoveryMS))
			}
			fmt.Fprintf(w, "model     %s: verdict %s, recovery %s; the model expects %s, recovery %s\n",
				a.Name, a.Verdict, recoveryString(a), *m.Expect, predicted)
		}
	}
	for _, d := range details(rep) {
		fmt.Fprintln(w)
		if err := columns(w, d.head, d.rows); err != nil {
			return err
		}
	}
	if s := workersLine(rep); s != "" {
		fmt.Fprintln(w, "workers   "+s)
	}
	if s := saturation(rep); s != "" {
		fmt.Fprintln(w, "warning   "+s)
	}
	if s := lateness(rep); s != "" {
		fmt.Fprintln(w, "warning   "+s)
	}
	for _, a := range aborted(rep) {
		fmt.Fprintf(w, "aborted   %s at %s: %s\n", a.Name, offset(a.Aborted.AtMS), a.Aborted.Reason)
	}
	return Gates(w, rep)
}

// columns writes a table as aligned columns.
func columns(w io.Writer, head []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// gateHead heads a table of gates' results.
var gateHead = []string{"gate", "arm", "measured", "result"}

// passFail is a gate's result as a table shows it.
func passFail(pass bool) string {
	if pass {
		return "pass"
	}
	return "FAIL"
}

// mdPass is a gate's or a limit's result as a Markdown table shows it.
func mdPass(pass bool) string {
	if pass {
		return "✅ pass"
	}
	return "❌ **FAIL**"
}

// Gates writes each gate on each arm with the value it measured and
// whether it passed, then the count of failures.
func Gates(w io.Writer, rep *experiment.Report) error {
	if len(rep.Gates) == 0 {
		return nil
	}
	var rows [][]string
	for _, g := range rep.Gates {
		rows = append(rows, []string{g.Gate, g.Arm, Measured(g), passFail(g.Pass)})
	}
	if err := columns(w, gateHead, rows); err != nil {
		return err
	}
	if failed := gates.Failed(rep.Gates); failed > 0 {
		fmt.Fprintf(w, "gates     %d of %d failed\n", failed, len(rep.Gates))
	} else {
		fmt.Fprintf(w, "gates     all %d passed\n", len(rep.Gates))
	}
	return nil
}

// Measured is a gate result's measured value as its path reads: a ratio
// as a percentage, null as "no value".
func Measured(g gates.Result) string {
	m := "no value"
	switch {
	case g.Seconds != nil:
		m = secondsMeasured(g.Seconds)
	case g.Word == "":
		m = figure(g.Path, g.Measured)
	case g.MeasuredWord != nil:
		m = *g.MeasuredWord
	}
	if of := g.Of(); of != "" {
		m += " (" + of + ")"
	}
	return m
}

// figure formats a value as its path reads: a ratio as a percentage, null
// as "no value".
func figure(path string, v *float64) string {
	switch {
	case v == nil:
		return "no value"
	case gates.IsRatio(path):
		return strconv.FormatFloat(*v*100, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// offset is a time relative to T: +1.5s, -200ms.
func offset(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d >= 0 {
		return "T+" + d.String()
	}
	return "T" + d.String()
}

func firstName(rep *experiment.Report) string {
	if len(rep.Arms) > 0 {
		return rep.Arms[0].Name
	}
	return "first"
}

// verdict names the arm with the fewest DB queries after T and the one with
// the lowest p99.
func verdict(rep *experiment.Report) string {
	fewest, fastest, dropped, ok := best(rep)
	if !ok {
		return ""
	}
	line := fmt.Sprintf("fewest db queries after T: %s (%s); lowest p99: %s (%s)",
		fewest.Name, thousands(fewest.DB.Queries), fastest.Name, msString(fastest.HTTP.P99MS))
	if n := droppedNote(dropped); n != "" {
		line += "; " + n
	}
	return line
}

// drained says, for each arm whose drain added DB queries, how many of
// its db queries after T the database counted after the load's end
// (db.drain_queries), their share, and how long the drain took; nothing
// when no drain added any, so the table reads as before.
func drained(rep *experiment.Report) []string {
	var out []string
	for _, a := range rep.Arms {
		if a.DB == nil || a.DB.DrainQueries == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s of %s db queries after T (%s) came in the %s drain, after the load's end",
			a.Name, thousands(a.DB.DrainQueries), thousands(a.DB.Queries), pct(a.DB.DrainShare), msString(float64(a.Timing.DrainMS))))
	}
	return out
}

// dbLine is a line under the arms' table about their database: the
// table, the Markdown and the HTML each show it with its label.
type dbLine struct{ label, text string }

// dbLines are the drain's lines, then the db work line.
func dbLines(rep *experiment.Report) []dbLine {
	var out []dbLine
	for _, s := range drained(rep) {
		out = append(out, dbLine{"drain", s})
	}
	if s := aboveBaseline(rep); s != "" {
		out = append(out, dbLine{"db work", s})
	}
	return out
}

// aboveBaseline says how long from T each arm's database stayed above its
// baseline's work (db.above_baseline_ms), "to the end" when its last
// second was; nothing when no arm has the figure.
func aboveBaseline(rep *experiment.Report) string {
	var out []string
	for _, a := range rep.Arms {
		if a.DB == nil || a.DB.AboveBaselineMS == nil {
			continue
		}
		ms, n := *a.DB.AboveBaselineMS, len(a.Timeline)
		s := a.Name + " " + msString(float64(ms))
		if ms == 0 {
			s = a.Name + " 0s"
		}
		if ms > 0 && n > 0 && ms == a.Timeline[n-1].TMS+result.RowWidth.Milliseconds() {
			s += " (to the end)"
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return ""
	}
	return "above its baseline's db q/s from T: " + strings.Join(out, ", ")
}

func versus(v, base int64) string {
	switch {
	case base == 0 && v == 0:
		return "="
	case base == 0:
		return "n/a"
	}
	d := float64(v-base) / float64(base) * 100
	if d > -0.5 && d < 0.5 {
		return "="
	}
	return fmt.Sprintf("%+.0f%%", d)
}

func recoveryString(a result.ArmResult) string {
	switch {
	case a.Aborted != nil:
		return "aborted"
	case a.RecoveryMS == nil && a.RelapseFromTMS != nil:
		return "relapsed at T+" + msString(float64(*a.RelapseFromTMS))
	case a.RecoveryMS == nil:
		return "not recovered"
	case a.RelapseFromTMS != nil: // back again after a relapse
		return msString(float64(*a.RecoveryMS)) + " (relapsed at T+" + msString(float64(*a.RelapseFromTMS)) + ")"
	}
	return msString(float64(*a.RecoveryMS))
}

func msString(ms float64) string {
	if ms >= 1000 {
		return (time.Duration(ms * float64(time.Millisecond))).Round(10 * time.Millisecond).String()
	}
	return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
}

func pct(r float64) string { return strconv.FormatFloat(r*100, 'f', 2, 64) + "%" }

// thousands formats n with commas: 12,345.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
