package result

import (
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/gates"
)

// A gate over seconds ("http.p99_ms < 250 for 95% of seconds",
// gates/seconds.go) judges a figure in each whole second after the arm's
// settle. The seconds are the timeline's rows ten by ten, so only what a
// row carries can be judged over a second, and each figure over a second
// is made from its ten rows alone, as below: a run's gates and `report
// --gate` on its results file read the same seconds.

// MetastableSettle is the least settle time: how long the trigger must
// have been over before an arm can be judged metastable, or its seconds
// counted by a gate over seconds, when no timeout on its path is longer.
const MetastableSettle = 2 * time.Second

// RowsPerSecond are the timeline's rows in one second.
const RowsPerSecond = int(time.Second / RowWidth)

// SettledMS is when the arm's settle is over, from T: the trigger's end
// (trigger.ended_ms; T when it never said or ended before T) plus the
// arm's settle time (settle_ms; MetastableSettle without one). The
// verdict judges an arm stuck from here on, and a gate over seconds
// counts the seconds from here on.
func (a ArmResult) SettledMS() int64 {
	end := int64(0)
	if e := a.Trigger.EndedMS; e != nil {
		end = max(*e, 0)
	}
	settle := MetastableSettle.Milliseconds()
	if a.SettleMS != nil {
		settle = *a.SettleMS
	}
	return end + settle
}

// secondFigure is a figure over one second's rows of an arm; nil when it
// has no value there.
type secondFigure func(a *ArmResult, rows []Row) *float64

// armSeconds are the arm's figures a gate over seconds may name, each
// over one second's rows. Over a second, http.p99_ms is the highest p99
// of its rows that sent a request: the rows keep no histograms (only
// their p99), so it is not the p99 of the second's requests taken
// together, and a second holds p99 < 250 when each of its rows did.
// http.requests, http.errors.unsent: the rows' sums; http.drop_rate:
// (requests - ok) / requests, the rows' ok counting the 4xx answers as
// http.drop_rate does; db.peak_qps: the mean of the rows' db_qps (a 1 s
// window's rate, of which the arm's db.peak_qps is the highest);
// cache.hit_ratio: hits / (hits + misses).
var armSeconds = map[string]secondFigure{
	"http.p99_ms":        func(_ *ArmResult, rows []Row) *float64 { return highestP99(rows) },
	"http.requests":      func(_ *ArmResult, rows []Row) *float64 { return sumOf(rows, func(r Row) int64 { return r.Requests }) },
	"http.errors.unsent": func(_ *ArmResult, rows []Row) *float64 { return sumOf(rows, func(r Row) int64 { return r.Unsent }) },
	"http.drop_rate":     func(_ *ArmResult, rows []Row) *float64 { return dropRate(rows) },
	"db.peak_qps": func(a *ArmResult, rows []Row) *float64 {
		if a.DB == nil {
			return nil
		}
		var sum float64
		for _, r := range rows {
			sum += r.DBQPS
		}
		return value(Round2(sum / float64(len(rows))))
	},
	"cache.hit_ratio": func(a *ArmResult, rows []Row) *float64 {
		hits, misses := sumOf(rows, func(r Row) int64 { return r.Hits }), sumOf(rows, func(r Row) int64 { return r.Misses })
		if a.Cache == nil || *hits+*misses == 0 {
			return nil
		}
		return value(Round4(*hits / (*hits + *misses)))
	},
}

// classSeconds are a request class's figures a gate over seconds may
// name (requests.NAME.FIGURE), over one second of the class's rows: p99_ms
// as http.p99_ms, the sums of requests, ok and unsent, and goodput_rps,
// the second's ok. Its drop_rate cannot be: a class's rows count its 2xx
// answers, not the 4xx its drop_rate leaves out.
var classSeconds = map[string]secondFigure{
	"p99_ms":        func(_ *ArmResult, rows []Row) *float64 { return highestP99(rows) },
	"requests":      func(_ *ArmResult, rows []Row) *float64 { return sumOf(rows, func(r Row) int64 { return r.Requests }) },
	"ok":            func(_ *ArmResult, rows []Row) *float64 { return sumOf(rows, func(r Row) int64 { return r.OK }) },
	"goodput_rps":   func(_ *ArmResult, rows []Row) *float64 { return sumOf(rows, func(r Row) int64 { return r.OK }) },
	"errors.unsent": func(_ *ArmResult, rows []Row) *float64 { return sumOf(rows, func(r Row) int64 { return r.Unsent }) },
}

// SecondPaths are the arm's paths a gate over seconds may name, sorted.
func SecondPaths() []string {
	out := make([]string, 0, len(armSeconds))
	for p := range armSeconds {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// ClassSecondPaths are the paths of the classes names a gate over seconds
// may name, requests.NAME.FIGURE.
func ClassSecondPaths(names []string) []string {
	var out []string
	for _, n := range names {
		for f := range classSeconds {
			out = append(out, "requests."+n+"."+f)
		}
	}
	slices.Sort(out)
	return out
}

// SecondsOf are the whole seconds after a's settle and path's figure
// over each; of a repeated arm, every run's, each marked with its run.
// None for a path a gate over seconds may not name, or a class a has not.
func SecondsOf(a ArmResult, path string) []gates.Window {
	if len(a.Runs) == 0 {
		return secondsOf(&a, path)
	}
	var out []gates.Window
	for i := range a.Runs {
		for _, w := range secondsOf(&a.Runs[i], path) {
			w.Run = i + 1
			out = append(out, w)
		}
	}
	return out
}

// secondsOf are one run's seconds of path.
func secondsOf(a *ArmResult, path string) []gates.Window {
	fig, rows := armSeconds[path], a.Timeline
	if rest, ok := strings.CutPrefix(path, "requests."); ok && fig == nil {
		for name, f := range a.Requests {
			if c, ok := strings.CutPrefix(rest, name+"."); ok && classSeconds[c] != nil {
				fig, rows = classSeconds[c], classRows(f.Timeline)
			}
		}
	}
	if fig == nil {
		return nil
	}
	var out []gates.Window
	for _, s := range WholeSeconds(rows, a.SettledMS()) {
		out = append(out, gates.Window{StartMS: s[0].TMS, Value: fig(a, s)})
	}
	return out
}

// WholeSeconds cuts rows, from the first that begins at or after fromMS,
// into seconds of RowsPerSecond rows each, one after the other to the
// last whole one: a second of rows that are not consecutive (a gap in the
// timeline) is left out, and so is what is left at the end.
func WholeSeconds(rows []Row, fromMS int64) [][]Row {
	i := slices.IndexFunc(rows, func(r Row) bool { return r.TMS >= fromMS })
	if i < 0 {
		return nil
	}
	var out [][]Row
	width := RowWidth.Milliseconds()
	for ; i+RowsPerSecond <= len(rows); i += RowsPerSecond {
		s := rows[i : i+RowsPerSecond]
		if s[len(s)-1].TMS-s[0].TMS == int64(RowsPerSecond-1)*width {
			out = append(out, s)
		}
	}
	return out
}

// classRows are a class's rows as the arm's, with the figures they hold.
func classRows(cs []ClassRow) []Row {
	out := make([]Row, len(cs))
	for i, c := range cs {
		out[i] = Row{TMS: c.TMS, Requests: c.Requests, OK: c.OK, Unsent: c.Unsent, P99MS: c.P99MS}
	}
	return out
}

// highestP99 is the highest p99 of the rows that sent a request; nil
// when none did.
func highestP99(rows []Row) *float64 {
	var p99 *float64
	for _, r := range rows {
		if r.Requests > r.Unsent && (p99 == nil || r.P99MS > *p99) {
			p99 = value(r.P99MS)
		}
	}
	return p99
}

// dropRate is (requests - ok) / requests of rows; nil without requests.
func dropRate(rows []Row) *float64 {
	var requests, ok int64
	for _, r := range rows {
		requests, ok = requests+r.Requests, ok+r.OK
	}
	if requests == 0 {
		return nil
	}
	return value(Round4(float64(requests-ok) / float64(requests)))
}

// sumOf is the sum of one count of rows.
func sumOf(rows []Row, count func(Row) int64) *float64 {
	var n int64
	for _, r := range rows {
		n += count(r)
	}
	return value(float64(n))
}

func value(v float64) *float64 { return &v }
