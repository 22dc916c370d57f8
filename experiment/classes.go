package experiment

import (
	"cmp"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// A target's traffic may be classes of requests (its file's requests:),
// one of them the herd's: every figure of a class is its own, so what the
// herd on one endpoint does to the others (the blast radius) shows beside
// the herd.

// RequestFigures are one request class's figures in an arm, from the
// clients' records of that class alone (intended from T, as http.*), and
// its verdict: the arm's rule (verdict.go) on the class's own timeline,
// against its own before window, on its p99 and goodput (the database is
// the arm's, not a class's).
type RequestFigures struct {
	Herd       bool    `json:"herd"` // the herd's class: its keys are the ones the trigger hits
	Requests   int64   `json:"requests"`
	OK         int64   `json:"ok"`
	Errors     Errors  `json:"errors"`
	DropRate   float64 `json:"drop_rate"`   // (requests - ok) / requests
	GoodputRPS float64 `json:"goodput_rps"` // ok answers a second, from T
	P50MS      float64 `json:"p50_ms"`
	P90MS      float64 `json:"p90_ms"`
	P99MS      float64 `json:"p99_ms"`
	MaxMS      float64 `json:"max_ms"`
	// BaselineP99MS is the before window's p99 of the class: what the
	// herd did to it is p99_ms beside it
	BaselineP99MS float64 `json:"baseline_p99_ms"`
	Verdict       string  `json:"verdict"`
	RecoveryMS    *int64  `json:"recovery_ms"` // from the trigger's end; null: not recovered
	// Timeline is the class's rows, as the arm's (t_ms from T)
	Timeline []ClassRow `json:"timeline"`
}

// ClassRow is 100 ms of a class's timeline.
type ClassRow struct {
	TMS      int64   `json:"t_ms"`
	Requests int64   `json:"requests"` // intended in this row
	OK       int64   `json:"ok"`
	Unsent   int64   `json:"unsent"`
	P99MS    float64 `json:"p99_ms"`
}

// ClassInfo is one class of what the target sends, for reports: its name,
// its share of the rate, and its request.
type ClassInfo struct {
	Name    string  `json:"name"`
	Share   float64 `json:"share"` // of the rate
	Herd    bool    `json:"herd"`
	Request string  `json:"request"` // method and path, as its template has them
}

// classesOf describes a target's classes; none for a target of one.
func classesOf(cs []targets.Class) []ClassInfo {
	total := 0
	for _, c := range cs {
		total += c.Weight
	}
	out := make([]ClassInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, ClassInfo{Name: c.Name, Share: round4(float64(c.Weight) / float64(max(total, 1))),
			Herd: c.Herd, Request: cmp.Or(c.Request.Method, "GET") + " " + c.Request.Path})
	}
	return out
}

// loadClasses are cs as the load sends them, each bystander's keys seeded
// apart from the herd's (seed) and from each other's.
func loadClasses(cs []targets.Class, seed uint64) []load.Class {
	out := make([]load.Class, len(cs))
	for i, c := range cs {
		out[i] = c.Load(seed + uint64(i) + 1)
	}
	return out
}

// classRec is one class's records, filed as the Recorder files them all.
type classRec struct {
	rows     map[int64]*clientRow
	after    *hdrhistogram.Histogram
	baseline *hdrhistogram.Histogram
	outcomes map[load.Outcome]int64
}

// fileClasses makes the recorder count each of n classes on its own.
func (r *Recorder) fileClasses(n int) {
	if n < 2 {
		return
	}
	r.classes = make([]*classRec, n)
	for i := range r.classes {
		r.classes[i] = &classRec{rows: map[int64]*clientRow{}, after: newHist(3), baseline: newHist(3), outcomes: map[load.Outcome]int64{}}
	}
}

// add files one record intended in the timeline (its latency us).
func (c *classRec) add(rec load.Record, us int64, t time.Time) {
	i := rowIndex(rec.Intended, t)
	row := c.rows[i]
	if row == nil {
		row = &clientRow{hist: newHist(2)}
		c.rows[i] = row
	}
	row.requests++
	after := !rec.Intended.Before(t)
	if after {
		c.outcomes[rec.Outcome]++
	}
	if rec.Outcome == load.Unsent {
		row.unsent++
		return
	}
	if rec.Outcome == load.OK {
		row.ok++
	}
	_ = row.hist.RecordValue(us)
	if after {
		_ = c.after.RecordValue(us)
	} else {
		_ = c.baseline.RecordValue(us)
	}
}

// requestFigures are each class's figures in res, judged as res is; nil
// for a load of one class.
func (r *Recorder) requestFigures(classes []ClassInfo, res *ArmResult) map[string]*RequestFigures {
	if len(r.classes) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*RequestFigures{}
	for i, c := range r.classes {
		if i >= len(classes) {
			break
		}
		h := httpOf(c.outcomes, c.after)
		f := &RequestFigures{Herd: classes[i].Herd, Requests: h.Requests, OK: h.OK, Errors: h.Errors, DropRate: round4(h.DropRate),
			P50MS: h.P50MS, P90MS: h.P90MS, P99MS: h.P99MS, MaxMS: h.MaxMS, BaselineP99MS: ms(c.baseline.ValueAtQuantile(99))}
		judgeClass(f, res, c)
		out[classes[i].Name] = f
	}
	return out
}

// judgeClass gives f the arm's verdict rule on the class's own rows: those
// of res's timeline, cut where res's was.
func judgeClass(f *RequestFigures, res *ArmResult, c *classRec) {
	cr := &ArmResult{Trigger: res.Trigger, SettleMS: res.SettleMS, Aborted: res.Aborted}
	for _, row := range res.Timeline {
		x := Row{TMS: row.TMS}
		var hist *hdrhistogram.Histogram
		if cc := c.rows[row.TMS/RowWidth.Milliseconds()]; cc != nil {
			x.Requests, x.OK, x.Unsent, x.P99MS = cc.requests, cc.ok, cc.unsent, ms(cc.hist.ValueAtQuantile(99))
			hist = cc.hist
		}
		cr.Timeline, cr.rowHists = append(cr.Timeline, x), append(cr.rowHists, hist)
		f.Timeline = append(f.Timeline, ClassRow{TMS: x.TMS, Requests: x.Requests, OK: x.OK, Unsent: x.Unsent, P99MS: x.P99MS})
	}
	var after time.Duration // the timeline's from T
	for _, row := range res.Timeline {
		if row.TMS >= 0 {
			after += RowWidth
		}
	}
	if after > 0 {
		f.GoodputRPS = round2(float64(f.OK) / after.Seconds())
	}
	cr.Windows = windowsOf(cr.Timeline, res.Trigger.EndedMS)
	judge(cr, f.BaselineP99MS)
	f.Verdict, f.RecoveryMS = cr.Verdict, cr.RecoveryMS
}

// ClassFigurePaths are the paths a gate may name of a class's figures,
// after requests.NAME.
var ClassFigurePaths = figurePaths(&RequestFigures{})

// classGates splits gs into the gates on a request class's figures
// (requests.NAME.FIGURE) and the rest.
func classGates(gs []gates.Gate) (classes, rest []gates.Gate) {
	for _, g := range gs {
		if strings.HasPrefix(g.Path, "requests.") {
			classes = append(classes, g)
		} else {
			rest = append(rest, g)
		}
	}
	return classes, rest
}

// ClassPaths are the gate paths of classes' figures, and their word
// paths (requests.NAME.verdict).
func ClassPaths(names []string) ([]string, map[string][]string) {
	var paths []string
	words := map[string][]string{}
	for _, n := range names {
		for _, p := range ClassFigurePaths {
			paths = append(paths, "requests."+n+"."+p)
		}
		words["requests."+n+".verdict"] = Verdicts
	}
	return paths, words
}

// classGatesFor checks the plan's gates on request classes against tg's
// classes: a class it does not send, or a figure a class does not have,
// is refused with the accepted ones.
func (p Plan) classGatesFor(gs []gates.Gate, tg *targets.Target) herd.FieldErrors {
	onClasses, _ := classGates(gs)
	if len(onClasses) == 0 {
		return nil
	}
	names := make([]string, len(tg.Classes))
	for i, c := range tg.Classes {
		names[i] = c.Name
	}
	arms := make([]string, len(p.Arms))
	for i, a := range p.Arms {
		arms[i] = a.Name
	}
	if len(names) == 0 {
		var errs herd.FieldErrors
		for _, g := range onClasses {
			errs = append(errs, &herd.FieldError{Field: "gates", Elem: g.Expr, Msg: fmt.Sprintf(
				"%s names a request class, and %s sends one request (accepted: requests: in a target file, each class a name)", g.Path, tg.Name)})
		}
		return errs
	}
	paths, words := ClassPaths(names)
	return gates.Validate(onClasses, arms, paths, words, "gates")
}

// GatePaths are the number and word paths a gate may name on r: every
// arm's, its schema's words, and its request classes'.
func (r *Report) GatePaths() ([]string, map[string][]string) {
	names := make([]string, len(r.Environment.Requests))
	for i, c := range r.Environment.Requests {
		names[i] = c.Name
	}
	paths, words := ClassPaths(names)
	maps.Copy(words, GateWordsOf(r.Schema))
	return append(append(GatePaths(), paths...), r.lbServerPaths()...), words
}

// classRuns are runs seen as request class name's alone (its verdict), for
// the verdict of a repeated arm's class.
func classRuns(runs []ArmResult, name string) []ArmResult {
	out := make([]ArmResult, 0, len(runs))
	for _, r := range runs {
		if f := r.Requests[name]; f != nil {
			out = append(out, ArmResult{Verdict: f.Verdict})
		}
	}
	return out
}
