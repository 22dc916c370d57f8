package verdict

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/result"
)

const (
	// GoodputBand is the share of the baseline's goodput a row must hold
	// (less one answer, for the rows' rounding) to be within band
	GoodputBand = 0.9
	// MetastableSettle is the least settle time: how long the trigger
	// must have been over before an arm can be metastable, when no
	// timeout on the path is longer (SettleOf); the results' own, as a
	// gate over seconds counts from the same instant (SettledMS)
	MetastableSettle = result.MetastableSettle
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

// SettleOf is an arm's settle time: the longest timeout on its path, the
// client's whole deadline (its timeout times its attempts, and the waits)
// and the service's own bound on a load (the testbed replicas'
// db-timeout, times their db_retry's attempts), at least MetastableSettle.
// Until it has passed since the trigger's end, a backlog the timeouts
// still drain may read as stuck.
func SettleOf(client, service time.Duration) time.Duration {
	return max(MetastableSettle, client, service)
}

// Judge gives res its verdict, its depth and trend, its recovery, counted
// from the trigger's end (recovery_ms) and from T (recovery_from_t_ms),
// and its relapse (relapse_from_t_ms), from its timeline, its windows,
// the end of its settle (res.SettledMS: the trigger's end plus
// res.SettleMS, or MetastableSettle without one) and its before window's
// p99. A recovery holds to the timeline's end; a return that did not is a
// relapse (course).
func Judge(res *result.ArmResult, baselineP99 float64) {
	res.Verdict, res.RecoveryMS, res.RecoveryFromTMS, res.RelapseFromTMS, res.Depth, res.Trend = result.Recovering, nil, nil, nil, nil, nil
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
		res.Verdict = result.Overloaded
		return
	}
	var baselineQPS float64
	if res.DB != nil {
		baselineQPS = res.DB.BaselineQPS
	}
	b := BandOf(baselineQPS, baselineP99, before.GoodputRPS)
	c := b.course(res.Timeline, res.RowHists, end)
	if res.Aborted == nil {
		res.RelapseFromTMS = c.relapse
	}
	if c.held != nil && res.Aborted == nil {
		fromEnd, fromT := *c.held-end, *c.held
		res.Verdict, res.RecoveryMS, res.RecoveryFromTMS = result.Recovered, &fromEnd, &fromT
		return
	}
	switch {
	case res.RelapseFromTMS != nil:
		res.Verdict = result.Relapsed
	case b.stuck(res.Timeline, res.RowHists, res.SettledMS(), before) && res.Trend != nil && *res.Trend < TrendTolerance:
		res.Verdict = result.Metastable
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

// BandOf is the band around a baseline of DB q/s, p99 and goodput.
func BandOf(baselineQPS, baselineP99, baselineGoodput float64) band {
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
func (b band) holds(span []result.Row, hists []*hdrhistogram.Histogram, i int) bool {
	var qps float64
	var requests, ok int64
	for _, x := range span {
		qps += x.DBQPS / float64(len(span))
		requests += x.Requests
		ok += x.OK
	}
	return qps <= b.qpsMax && (requests == 0 || (float64(ok) >= b.okMin && holdP99(span, hists, i) <= b.p99Max))
}

// Recovered is the first row at or after end from which a hold of
// RecoveryHold of rows is within band, its requests taken together.
func (b band) Recovered(rows []result.Row, hists []*hdrhistogram.Histogram, end int64) (int64, bool) {
	hold := int(RecoveryHold / result.RowWidth)
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

// course is how a timeline went from the trigger's end: held, the first
// row from which no stretch of holds out of band as long as RelapseSpan
// follows (nil: none such); relapse, the row that took the first such
// stretch out of band after a hold back within it (the last row of its
// first hold), nil when none did.
type course struct{ held, relapse *int64 }

// course reads rows from end: it came back at the first hold within band,
// relapsed when, after that, holds beginning over RelapseSpan in a row
// were all out of band, and held from the first hold back within band
// after the last such stretch. One late row takes out of band at most the
// RecoveryHold of holds that hold it, which is shorter: a blip is not a
// relapse, a stretch of half a second or more of late rows is.
func (b band) course(rows []result.Row, hists []*hdrhistogram.Histogram, end int64) course {
	hold := int(RecoveryHold / result.RowWidth)
	run := int(RelapseSpan / result.RowWidth)
	if len(hists) != len(rows) {
		hists = nil
	}
	var c course
	back := false
	out, outFrom := 0, 0 // the holds out of band in a row, and the first of them
	for i := range rows {
		if rows[i].TMS < end || i+hold > len(rows) {
			continue
		}
		if b.holds(rows[i:i+hold], hists, i) {
			if c.held == nil {
				at := rows[i].TMS
				c.held = &at
			}
			back, out = true, 0
			continue
		}
		if out == 0 {
			outFrom = i
		}
		out++
		if out == run && back {
			c.held = nil
			if c.relapse == nil {
				at := rows[outFrom+hold-1].TMS
				c.relapse = &at
			}
		}
	}
	return c
}

// stuck says whether the last RecoveryHold of rows, beginning at or after
// settled, is out of band while the service was offered at least the
// baseline's work: the before window's requests a second, less one (the
// rows' rounding). The clients' own refusals (throttling, an open
// breaker) are offered work: a loop in the clients holds the service's
// goodput down as surely as one in the service.
func (b band) stuck(rows []result.Row, hists []*hdrhistogram.Histogram, settled int64, before *result.Window) bool {
	hold := int(RecoveryHold / result.RowWidth)
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
func holdP99(span []result.Row, hists []*hdrhistogram.Histogram, i int) float64 {
	if hists == nil {
		var p99 float64
		for _, x := range span {
			if x.Requests > 0 {
				p99 = max(p99, x.P99MS)
			}
		}
		return p99
	}
	h := result.NewHist(2)
	for _, x := range hists[i : i+len(span)] {
		if x != nil {
			h.Merge(x)
		}
	}
	return result.Millis(h.ValueAtQuantile(99))
}

// depthOf is the goodput of the last RecoveryHold of rows from T as a
// share of the before window's; nil without a baseline goodput or a whole
// hold from T.
func depthOf(rows []result.Row, before *result.Window) *float64 {
	hold := int(RecoveryHold / result.RowWidth)
	if before.GoodputRPS <= 0 || len(rows) < hold || rows[len(rows)-hold].TMS < 0 {
		return nil
	}
	d := result.Round2(rates(rows[len(rows)-hold:]).GoodputRPS / before.GoodputRPS)
	return &d
}

// trendOf is how far the goodput climbed over the last TrendSpan of rows,
// all at or after end: the least-squares line through each row's goodput
// a second, its rise from the span's first row to its last, as a share of
// the before window's goodput (negative: it fell). Nil without a baseline
// goodput or a whole span after end.
func trendOf(rows []result.Row, end int64, before *result.Window) *float64 {
	n := int(TrendSpan / result.RowWidth)
	if before.GoodputRPS <= 0 || len(rows) < n || rows[len(rows)-n].TMS < end {
		return nil
	}
	perSecond := float64(time.Second / result.RowWidth)
	var sx, sy, sxx, sxy float64
	for i, r := range rows[len(rows)-n:] {
		x, y := float64(i), float64(r.OK)*perSecond
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	fn := float64(n)
	slope := (fn*sxy - sx*sy) / (fn*sxx - sx*sx) // goodput a second, per row
	t := result.Round2(slope * (fn - 1) / before.GoodputRPS)
	return &t
}

// rates are a span of rows' rates per second.
func rates(rows []result.Row) result.Window {
	if w := result.WindowOf(rows, func(int64) bool { return true }); w != nil {
		return *w
	}
	return result.Window{}
}

// Recovery band: the arm has recovered at the first row after T from which,
// for RecoveryHold, DB q/s and p99 stay within the band around their
// baseline (the before window): at most 50% above it, or a floor for small
// baselines, whichever is larger.
const (
	RecoveryHold = time.Second
	// RelapseSpan is how long, in a row, holds must begin out of band for
	// an arm back in band to have relapsed: longer than the RecoveryHold
	// of holds one late row takes out of band, so a blip on a busy machine
	// is not a relapse
	RelapseSpan      = 3 * RecoveryHold / 2
	recoveryRatio    = 1.5
	recoveryQPSFloor = 20 // q/s: one query in a 100 ms row is 10 q/s
	recoveryP99Floor = 20 // ms
)
