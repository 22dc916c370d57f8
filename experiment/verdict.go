package experiment

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// An arm's verdict: did the service come back once its trigger was over,
// is it still on its way, or is it stuck? The rule is docs/stampede.md's
// "The verdict"; TestVerdictRule pins it on synthetic timelines.
const (
	// Recovered: from a row at or after the trigger's end, the requests
	// of RecoveryHold of rows together were back within the band of the
	// before window's: their DB q/s, p99 and goodput
	Recovered = "recovered"
	// Metastable: the trigger had been over for the arm's settle time,
	// and the last RecoveryHold was out of band while the service was
	// offered at least the baseline's work, with no trend back over the
	// last TrendSpan (the fitted goodput rose by less than TrendTolerance
	// of the baseline's)
	Metastable = "metastable"
	// Recovering: out of band at the end of the arm (or its stop) and not
	// stuck: trending back, still within its settle time, or offered
	// less than the baseline's work
	Recovering = "recovering"
	// Overloaded: the before window was out of band itself (its goodput
	// under GoodputBand of what was offered): the run measured an
	// overload, not a herd
	Overloaded = "overloaded"
	// Degraded is herdbench.results/v1's word for an arm none of the
	// others described; v2 calls such an arm recovering or metastable. A
	// v1 results file reads back with it (SchemaV1), no run gives it
	Degraded = "degraded"
)

// Verdicts lists the words a run gives, for gates and docs.
var Verdicts = []string{Recovered, Metastable, Overloaded, Recovering}

const (
	// GoodputBand is the share of the baseline's goodput a row must hold
	// (less one answer, for the rows' rounding) to be within band
	GoodputBand = 0.9
	// MetastableSettle is the least settle time: how long the trigger
	// must have been over before an arm can be metastable, when no
	// timeout on the path is longer (settleOf)
	MetastableSettle = 2 * time.Second
	// TrendSpan is how much of the arm's end its trend is fitted over:
	// the last three holds, as many as the least settle time and a hold
	// leave after the trigger's end
	TrendSpan = 3 * time.Second
	// TrendTolerance is the least rise of the fitted goodput over
	// TrendSpan, as a share of the baseline's goodput, that is a trend
	// back: one row must rise by more than half a baseline's row to move
	// the fit that far alone
	TrendTolerance = 0.1
)

// settleOf is an arm's settle time: the longest timeout on its path, the
// client's whole deadline (its timeout times its attempts, and the waits)
// and the service's own bound on a load (the testbed replicas'
// db-timeout, times their db_retry's attempts), at least MetastableSettle.
// Until it has passed since the trigger's end, a backlog the timeouts
// still drain may read as stuck.
func settleOf(client, service time.Duration) time.Duration {
	return max(MetastableSettle, client, service)
}

// judge gives res its verdict, its depth and trend, and its recovery,
// counted from the trigger's end (recovery_ms) and from T
// (recovery_from_t_ms), from its timeline, its windows, its settle time
// (res.SettleMS; MetastableSettle without one) and its before window's p99.
func judge(res *ArmResult, baselineP99 float64) {
	res.Verdict, res.RecoveryMS, res.RecoveryFromTMS, res.Depth, res.Trend = Recovering, nil, nil, nil, nil
	before := res.Windows.Before
	if before == nil {
		return
	}
	end := int64(0)
	if e := res.Trigger.EndedMS; e != nil {
		end = max(*e, 0)
	}
	res.Depth, res.Trend = depthOf(res.Timeline, before), trendOf(res.Timeline, end, before)
	if before.GoodputRPS < GoodputBand*before.OfferedRPS {
		res.Verdict = Overloaded
		return
	}
	var baselineQPS float64
	if res.DB != nil {
		baselineQPS = res.DB.BaselineQPS
	}
	b := bandOf(baselineQPS, baselineP99, before.GoodputRPS)
	if at, ok := b.recovered(res.Timeline, res.rowHists, end); ok && res.Aborted == nil {
		fromEnd, fromT := at-end, at
		res.Verdict, res.RecoveryMS, res.RecoveryFromTMS = Recovered, &fromEnd, &fromT
		return
	}
	settle := MetastableSettle
	if res.SettleMS != nil {
		settle = time.Duration(*res.SettleMS) * time.Millisecond
	}
	if b.stuck(res.Timeline, res.rowHists, end+settle.Milliseconds(), before) && res.Trend != nil && *res.Trend < TrendTolerance {
		res.Verdict = Metastable
	}
}

// band is the before window's band a hold of rows is judged against: its
// mean DB q/s at most recoveryRatio of the baseline's (or
// recoveryQPSFloor above it), the p99 of its requests likewise (or
// recoveryP99Floor above it), their ok answers at least GoodputBand of
// the baseline's goodput over the hold, less one.
type band struct {
	qpsMax, p99Max, okMin float64
}

func bandOf(baselineQPS, baselineP99, baselineGoodput float64) band {
	return band{
		qpsMax: max(baselineQPS*recoveryRatio, baselineQPS+recoveryQPSFloor),
		p99Max: max(baselineP99*recoveryRatio, baselineP99+recoveryP99Floor),
		okMin:  GoodputBand*baselineGoodput*RecoveryHold.Seconds() - 1,
	}
}

// holds says whether the hold rows[i:i+len(span)] is within band. A hold
// without requests passes the p99 and goodput tests. The p99 is of the
// hold's requests together (hists, one per row) when they are at hand,
// else the highest row's: a row of 100 ms holds few requests, and its p99
// is their slowest.
func (b band) holds(span []Row, hists []*hdrhistogram.Histogram, i int) bool {
	var qps float64
	var requests, ok int64
	for _, x := range span {
		qps += x.DBQPS / float64(len(span))
		requests += x.Requests
		ok += x.OK
	}
	return qps <= b.qpsMax && (requests == 0 || (float64(ok) >= b.okMin && holdP99(span, hists, i) <= b.p99Max))
}

// recovered is the first row at or after end from which a hold of
// RecoveryHold of rows is within band, its requests taken together.
func (b band) recovered(rows []Row, hists []*hdrhistogram.Histogram, end int64) (int64, bool) {
	hold := int(RecoveryHold / RowWidth)
	if len(hists) != len(rows) {
		hists = nil
	}
	for i, r := range rows {
		if r.TMS < end || i+hold > len(rows) {
			continue
		}
		if b.holds(rows[i:i+hold], hists, i) {
			return r.TMS, true
		}
	}
	return 0, false
}

// stuck says whether the last RecoveryHold of rows, beginning at or after
// settled, is out of band while the service was offered at least the
// baseline's work: the before window's requests a second, less one (the
// rows' rounding). The clients' own refusals (throttling, an open
// breaker) are offered work: a loop in the clients holds the service's
// goodput down as surely as one in the service.
func (b band) stuck(rows []Row, hists []*hdrhistogram.Histogram, settled int64, before *Window) bool {
	hold := int(RecoveryHold / RowWidth)
	if len(rows) < hold || rows[len(rows)-hold].TMS < settled {
		return false
	}
	if len(hists) != len(rows) {
		hists = nil
	}
	i := len(rows) - hold
	last := rates(rows[i:])
	return last.OfferedRPS >= before.OfferedRPS-1 && !b.holds(rows[i:], hists, i)
}

// holdP99 is the p99 of the requests of span, rows[i:] of a timeline whose
// rows' latencies are hists; without hists, the highest row p99.
func holdP99(span []Row, hists []*hdrhistogram.Histogram, i int) float64 {
	if hists == nil {
		var p99 float64
		for _, x := range span {
			if x.Requests > 0 {
				p99 = max(p99, x.P99MS)
			}
		}
		return p99
	}
	h := newHist(2)
	for _, x := range hists[i : i+len(span)] {
		if x != nil {
			h.Merge(x)
		}
	}
	return ms(h.ValueAtQuantile(99))
}

// depthOf is the goodput of the last RecoveryHold of rows from T as a
// share of the before window's; nil without a baseline goodput or a whole
// hold from T.
func depthOf(rows []Row, before *Window) *float64 {
	hold := int(RecoveryHold / RowWidth)
	if before.GoodputRPS <= 0 || len(rows) < hold || rows[len(rows)-hold].TMS < 0 {
		return nil
	}
	d := round2(rates(rows[len(rows)-hold:]).GoodputRPS / before.GoodputRPS)
	return &d
}

// trendOf is how far the goodput climbed over the last TrendSpan of rows,
// all at or after end: the least-squares line through each row's goodput
// a second, its rise from the span's first row to its last, as a share of
// the before window's goodput (negative: it fell). Nil without a baseline
// goodput or a whole span after end.
func trendOf(rows []Row, end int64, before *Window) *float64 {
	n := int(TrendSpan / RowWidth)
	if before.GoodputRPS <= 0 || len(rows) < n || rows[len(rows)-n].TMS < end {
		return nil
	}
	perSecond := float64(time.Second / RowWidth)
	var sx, sy, sxx, sxy float64
	for i, r := range rows[len(rows)-n:] {
		x, y := float64(i), float64(r.OK)*perSecond
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	fn := float64(n)
	slope := (fn*sxy - sx*sy) / (fn*sxx - sx*sx) // goodput a second, per row
	t := round2(slope * (fn - 1) / before.GoodputRPS)
	return &t
}

// rates are a span of rows' rates per second.
func rates(rows []Row) Window {
	if w := window(rows, func(int64) bool { return true }); w != nil {
		return *w
	}
	return Window{}
}
