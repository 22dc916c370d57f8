package experiment

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// An arm's verdict: did the service come back once its trigger was over?
// The rule is docs/stampede.md's "The verdict"; TestVerdictRule pins it on
// synthetic timelines.
const (
	// Recovered: from a row at or after the trigger's end, the requests
	// of RecoveryHold of rows together were back within the band of the
	// before window's: their DB q/s, p99 and goodput
	Recovered = "recovered"
	// Metastable: the trigger had been over for MetastableSettle, and over
	// the last RecoveryHold the goodput stayed under half the baseline's
	// while the service was given at least the baseline's work (attempts,
	// or queries completed by Postgres), with no trend back
	Metastable = "metastable"
	// Overloaded: the before window was out of band itself (its goodput
	// under GoodputBand of what was offered): the run measured an
	// overload, not a herd
	Overloaded = "overloaded"
	// Degraded: none of these by the end of the arm (or its stop)
	Degraded = "degraded"
)

// Verdicts lists them, for gates and docs.
var Verdicts = []string{Recovered, Metastable, Overloaded, Degraded}

const (
	// GoodputBand is the share of the baseline's goodput a row must hold
	// (less one answer, for the rows' rounding) to be within band
	GoodputBand = 0.9
	// MetastableSettle is how long the trigger must have been over before
	// an arm can be metastable
	MetastableSettle = 2 * time.Second
	// metastableGoodput is the share of the baseline's goodput under which
	// a service given its work is useless
	metastableGoodput = 0.5
)

// judge gives res its verdict and its recovery, counted from the trigger's
// end (recovery_ms) and from T (recovery_from_t_ms), from its timeline,
// its windows and its before window's p99.
func judge(res *ArmResult, baselineP99 float64) {
	res.Verdict, res.RecoveryMS, res.RecoveryFromTMS = Degraded, nil, nil
	before := res.Windows.Before
	if before == nil {
		return
	}
	if before.GoodputRPS < GoodputBand*before.OfferedRPS {
		res.Verdict = Overloaded
		return
	}
	end := int64(0)
	if e := res.Trigger.EndedMS; e != nil {
		end = max(*e, 0)
	}
	var baselineQPS float64
	if res.DB != nil {
		baselineQPS = res.DB.BaselineQPS
	}
	if at, ok := recovered(res.Timeline, res.rowHists, end, baselineQPS, baselineP99, before.GoodputRPS); ok && res.Aborted == nil {
		fromEnd, fromT := at-end, at
		res.Verdict, res.RecoveryMS, res.RecoveryFromTMS = Recovered, &fromEnd, &fromT
		return
	}
	if metastable(res.Timeline, end, baselineQPS, before) {
		res.Verdict = Metastable
	}
}

// recovered is the first row at or after end from which a hold of
// RecoveryHold of rows is within band, its requests taken together: their
// mean DB q/s at most recoveryRatio of the baseline's (or recoveryQPSFloor
// above it), the p99 of their latencies likewise (or recoveryP99Floor
// above it), their ok answers at least GoodputBand of the baseline's
// goodput over the hold, less one. A hold without requests passes the p99
// and goodput tests. The p99 is of the hold's requests together (hists,
// one per row) when they are at hand, else the highest row's: a row of 100
// ms holds few requests, and its p99 is their slowest.
func recovered(rows []Row, hists []*hdrhistogram.Histogram, end int64, baselineQPS, baselineP99, baselineGoodput float64) (int64, bool) {
	qpsMax := max(baselineQPS*recoveryRatio, baselineQPS+recoveryQPSFloor)
	p99Max := max(baselineP99*recoveryRatio, baselineP99+recoveryP99Floor)
	hold := int(RecoveryHold / RowWidth)
	okMin := GoodputBand*baselineGoodput*RecoveryHold.Seconds() - 1
	if len(hists) != len(rows) {
		hists = nil
	}
	for i, r := range rows {
		if r.TMS < end || i+hold > len(rows) {
			continue
		}
		span := rows[i : i+hold]
		var qps float64
		var requests, ok int64
		for _, x := range span {
			qps += x.DBQPS / float64(hold)
			requests += x.Requests
			ok += x.OK
		}
		if qps <= qpsMax && (requests == 0 || (float64(ok) >= okMin && holdP99(span, hists, i) <= p99Max)) {
			return r.TMS, true
		}
	}
	return 0, false
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

// metastable says whether the last RecoveryHold of rows, MetastableSettle
// or more after end, kept the goodput under metastableGoodput of the
// baseline's while the service was given at least the baseline's work,
// and did not trend back: no more goodput than the hold before them.
func metastable(rows []Row, end int64, baselineQPS float64, before *Window) bool {
	hold := int(RecoveryHold / RowWidth)
	if len(rows) < 2*hold || rows[len(rows)-hold].TMS < end+MetastableSettle.Milliseconds() {
		return false
	}
	last, prev := rates(rows[len(rows)-hold:]), rates(rows[len(rows)-2*hold:len(rows)-hold])
	busy := last.AttemptsRPS >= before.AttemptsRPS || (baselineQPS > 0 && last.dbQPS >= baselineQPS)
	return last.GoodputRPS < metastableGoodput*before.GoodputRPS && busy && last.GoodputRPS <= prev.GoodputRPS
}

// rowRates are a span of rows' mean rates per second.
type rowRates struct {
	Window
	dbQPS float64
}

func rates(rows []Row) rowRates {
	var r rowRates
	if w := window(rows, func(int64) bool { return true }); w != nil {
		r.Window = *w
	}
	for _, row := range rows {
		r.dbQPS += row.DBQPS / float64(len(rows))
	}
	return r
}
