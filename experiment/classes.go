package experiment

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/targets"
)

// LoadClasses are cs as the load sends them, each bystander's keys seeded
// apart from the herd's (seed) and from each other's.
func LoadClasses(cs []targets.Class, seed uint64) []load.Class {
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

// FileClasses makes the recorder count each of n request classes on its
// own (a target's requests:, Record.Class); fewer than two: one class,
// nothing apart. A recorder a worker's bins are merged into files as
// many as the worker's.
func (r *Recorder) FileClasses(n int) {
	if n < 2 {
		return
	}
	r.classes = make([]*classRec, n)
	for i := range r.classes {
		r.classes[i] = &classRec{rows: map[int64]*clientRow{}, after: result.NewHist(BinDigits), baseline: result.NewHist(BinDigits), outcomes: map[load.Outcome]int64{}}
	}
}

// add files one record intended in the timeline (its latency us).
func (c *classRec) add(rec load.Record, us int64, t time.Time) {
	i := result.RowIndex(rec.Intended, t)
	row := c.rows[i]
	if row == nil {
		row = &clientRow{hist: result.NewHist(RowDigits)}
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
func (r *Recorder) requestFigures(classes []result.ClassInfo, res *result.ArmResult) map[string]*result.RequestFigures {
	if len(r.classes) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*result.RequestFigures{}
	for i, c := range r.classes {
		if i >= len(classes) {
			break
		}
		h := httpOf(c.outcomes, c.after)
		f := &result.RequestFigures{Herd: classes[i].Herd, Requests: h.Requests, OK: h.OK, Errors: h.Errors, DropRate: result.Round4(h.DropRate),
			P50MS: h.P50MS, P90MS: h.P90MS, P99MS: h.P99MS, MaxMS: h.MaxMS, BaselineP99MS: result.Millis(c.baseline.ValueAtQuantile(99))}
		judgeClass(f, res, c)
		out[classes[i].Name] = f
	}
	return out
}

// judgeClass gives f the arm's verdict rule on the class's own rows: those
// of res's timeline, cut where res's was.
func judgeClass(f *result.RequestFigures, res *result.ArmResult, c *classRec) {
	cr := &result.ArmResult{Trigger: res.Trigger, SettleMS: res.SettleMS, Aborted: res.Aborted}
	for _, row := range res.Timeline {
		x := result.Row{TMS: row.TMS}
		var hist *hdrhistogram.Histogram
		if cc := c.rows[row.TMS/result.RowWidth.Milliseconds()]; cc != nil {
			x.Requests, x.OK, x.Unsent, x.P99MS = cc.requests, cc.ok, cc.unsent, result.Millis(cc.hist.ValueAtQuantile(99))
			hist = cc.hist
		}
		cr.Timeline, cr.RowHists = append(cr.Timeline, x), append(cr.RowHists, hist)
		f.Timeline = append(f.Timeline, result.ClassRow{TMS: x.TMS, Requests: x.Requests, OK: x.OK, Unsent: x.Unsent, P99MS: x.P99MS})
	}
	var after time.Duration // the timeline's from T
	for _, row := range res.Timeline {
		if row.TMS >= 0 {
			after += result.RowWidth
		}
	}
	if after > 0 {
		f.GoodputRPS = result.Round2(float64(f.OK) / after.Seconds())
	}
	cr.Windows = result.WindowsOf(cr.Timeline, res.Trigger.EndedMS)
	verdict.Judge(cr, f.BaselineP99MS)
	f.Verdict, f.RecoveryMS, f.RelapseFromTMS = cr.Verdict, cr.RecoveryMS, cr.RelapseFromTMS
}

// GatePaths are the number and word paths a gate may name on r: every
// arm's, its schema's words, and its request classes'.
func (r *Report) GatePaths() ([]string, map[string][]string) {
	paths, words := result.ClassPaths(r.classNames())
	maps.Copy(words, result.GateWordsOf(r.Schema))
	return append(append(result.GatePaths(), paths...), r.lbServerPaths()...), words
}

// SecondPaths are the paths a gate over seconds may name on r: every
// arm's, and its request classes'.
func (r *Report) SecondPaths() []string {
	return append(result.SecondPaths(), result.ClassSecondPaths(r.classNames())...)
}

// classNames are the names of r's request classes, in the target file's
// order.
func (r *Report) classNames() []string {
	names := make([]string, len(r.Environment.Requests))
	for i, c := range r.Environment.Requests {
		names[i] = c.Name
	}
	return names
}

// ClassesState is one request class's share of a RecorderState, by its
// index in the target's requests: (Record.Class): what requestFigures
// reads of it, as the recorder files it.
type ClassesState struct {
	Rows     map[int64]RowState     `json:"rows"`     // requests, ok, unsent, latency (RowDigits)
	Latency  string                 `json:"latency"`  // from T
	Baseline string                 `json:"baseline"` // [T - before, T)
	Outcomes map[load.Outcome]int64 `json:"outcomes"` // from T
}

// state is c as it travels.
func (c *classRec) state() ClassesState {
	st := ClassesState{Rows: make(map[int64]RowState, len(c.rows)), Latency: encode(c.after), Baseline: encode(c.baseline),
		Outcomes: maps.Clone(c.outcomes)}
	for i, row := range c.rows {
		st.Rows[i] = RowState{Requests: row.requests, OK: row.ok, Unsent: row.unsent, Latency: encode(row.hist)}
	}
	return st
}

// classesDecoded are a state's classes' histograms, decoded before any
// is added (Merge).
type classesDecoded struct {
	after, baseline *hdrhistogram.PackedHistogram
	rows            map[int64]*hdrhistogram.PackedHistogram
}

// decodeClasses decodes st's classes for r, or says why they do not
// merge: another number of classes, or a histogram that does not decode.
func (r *Recorder) decodeClasses(st []ClassesState) ([]classesDecoded, error) {
	if len(st) != len(r.classes) {
		return nil, fmt.Errorf("%d request classes counted apart; want %d, this recorder's", len(st), len(r.classes))
	}
	var errs []error
	dec := func(what string, s string, like *hdrhistogram.Histogram) *hdrhistogram.PackedHistogram {
		h, err := decode(s, like)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
		return h
	}
	out := make([]classesDecoded, len(st))
	for i, c := range st {
		out[i] = classesDecoded{after: dec(fmt.Sprintf("class %d latency", i), c.Latency, r.classes[i].after),
			baseline: dec(fmt.Sprintf("class %d baseline", i), c.Baseline, r.classes[i].baseline), rows: map[int64]*hdrhistogram.PackedHistogram{}}
		for j, row := range c.Rows {
			out[i].rows[j] = dec(fmt.Sprintf("class %d timeline row %d", i, j), row.Latency, rowLike)
		}
	}
	return out, errors.Join(errs...)
}

// addClasses adds st's classes, decoded as d, to r's.
func (r *Recorder) addClasses(st []ClassesState, d []classesDecoded) {
	for i, c := range st {
		mine := r.classes[i]
		mergeInto(mine.after, d[i].after)
		mergeInto(mine.baseline, d[i].baseline)
		for o, n := range c.Outcomes {
			mine.outcomes[o] += n
		}
		for j, row := range c.Rows {
			x := mine.rows[j]
			if x == nil {
				x = &clientRow{hist: result.NewHist(RowDigits)}
				mine.rows[j] = x
			}
			x.requests += row.Requests
			x.ok += row.OK
			x.unsent += row.Unsent
			mergeInto(x.hist, d[i].rows[j])
		}
	}
}

// reset empties c, its histograms kept, for another bin.
func (c *classRec) reset() {
	clear(c.rows)
	clear(c.outcomes)
	c.after.Reset()
	c.baseline.Reset()
}
