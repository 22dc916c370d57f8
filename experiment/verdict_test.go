package experiment

import (
	"strconv"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
)

// The verdict's rule on synthetic timelines: 100 req/s offered (10 a row),
// a before window of 1 s answering all of them at 10 DB q/s and 5 ms; each
// case a pattern of rows from T.
func TestVerdictRule(t *testing.T) {
	good := result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}
	down := result.Row{Requests: 10, OK: 0, Attempts: 10, DBQPS: 200, P99MS: 1000}
	useless := result.Row{Requests: 10, OK: 1, Attempts: 50, DBQPS: 3, P99MS: 1000} // retries pile up, nothing gets through
	refused := result.Row{Requests: 10, OK: 3, Attempts: 5, DBQPS: 3, P99MS: 900}   // the clients throttle themselves
	halved := result.Row{Requests: 5, OK: 1, Attempts: 5, DBQPS: 3, P99MS: 900}     // offered half the baseline's work
	slow := result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 400}   // every answer, late
	at := func(ms int64) *int64 { return &ms }
	for _, c := range []struct {
		name           string
		rows           []result.Row
		ended, settle  *int64
		aborted        bool
		want           string
		fromEnd, fromT *int64
	}{
		{"back when the fault ends", synthetic(good, 4000, until(500, down, good)), at(500), nil, false, result.Recovered, at(0), at(500)},
		{"back 700 ms after it", synthetic(good, 4000, until(1200, down, good)), at(500), nil, false, result.Recovered, at(700), at(1200)},
		{"a trigger with no end: counted from T", synthetic(good, 4000, until(300, down, good)), nil, nil, false, result.Recovered, at(300), at(300)},
		{"busy and useless long after", synthetic(good, 6000, until(500, down, useless)), at(500), nil, false, result.Metastable, nil, nil},
		{"useless, but too soon to tell", synthetic(good, 3000, until(500, down, useless)), at(500), nil, false, result.Recovering, nil, nil},
		{"useless, but within a 5 s db-timeout of the end", synthetic(good, 6000, until(500, down, useless)), at(500), at(5000), false, result.Recovering, nil, nil},
		{"useless once the 5 s db-timeout is over", synthetic(good, 6500, until(500, down, useless)), at(500), at(5000), false, result.Metastable, nil, nil},
		{"the clients refuse the work themselves", synthetic(good, 6000, until(500, down, refused)), at(500), nil, false, result.Metastable, nil, nil},
		{"offered half the baseline's work", synthetic(good, 6000, until(500, down, halved)), at(500), nil, false, result.Recovering, nil, nil},
		{"every answer in time, but late", synthetic(good, 6000, until(500, down, slow)), at(500), nil, false, result.Metastable, nil, nil},
		{"the baseline out of band", synthetic(refused, 4000, until(500, down, good)), at(500), nil, false, result.Overloaded, nil, nil},
		{"stopped early", synthetic(good, 4000, until(500, down, good)), at(500), nil, true, result.Recovering, nil, nil},
	} {
		res := judged(c.rows, c.ended, c.settle)
		if c.aborted {
			res.Aborted = &result.Abort{}
			verdict.Judge(res, 5)
		}
		if res.Verdict != c.want || !sameMS(res.RecoveryMS, c.fromEnd) || !sameMS(res.RecoveryFromTMS, c.fromT) || res.RelapseFromTMS != nil {
			t.Errorf("%s: verdict %s, recovery %s from the end, %s from T, relapse %s; want %s, %s, %s, no relapse", c.name,
				res.Verdict, fmtMS(res.RecoveryMS), fmtMS(res.RecoveryFromTMS), fmtMS(res.RelapseFromTMS), c.want, fmtMS(c.fromEnd), fmtMS(c.fromT))
		}
	}
}

// A recovery holds to the arm's end, or the arm relapsed: rows back in
// band at the trigger's end (T+500 ms), then out of it from T+1.5 s. The
// relapse is the row that took a hold out of band; a return that holds
// to the end is the recovery, a relapse before it kept.
func TestVerdictRelapse(t *testing.T) {
	good := result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}
	down := result.Row{Requests: 10, OK: 0, Attempts: 10, DBQPS: 200, P99MS: 1000}
	useless := result.Row{Requests: 10, OK: 1, Attempts: 50, DBQPS: 3, P99MS: 1000}
	blip := result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 40} // one late answer: over 5 ms + 20
	// back from 500 ms, b from 1.5 s, c from `from`
	relapse := func(b result.Row, from int64, c result.Row) func(int64) result.Row {
		return func(tms int64) result.Row {
			switch {
			case tms < 500:
				return down
			case tms < 1500:
				return good
			case tms < from:
				return b
			}
			return c
		}
	}
	at := func(ms int64) *int64 { return &ms }
	ended := int64(500)
	for _, c := range []struct {
		name                     string
		rows                     []result.Row
		want                     string
		fromEnd, fromT, relapsed *int64
	}{
		{"held to the end", synthetic(good, 6000, until(500, down, good)), result.Recovered, at(0), at(500), nil},
		{"out again to the end", synthetic(good, 3000, relapse(down, 3000, down)), result.Relapsed, nil, nil, at(1500)},
		{"out again and stuck", synthetic(good, 6000, relapse(useless, 6000, useless)), result.Relapsed, nil, nil, at(1500)},
		{"out 1 s, then back to the end", synthetic(good, 6000, relapse(down, 2500, good)), result.Recovered, at(2000), at(2500), at(1500)},
		{"late rows in the arm's last half second: no relapse", synthetic(good, 6000, relapse(good, 5500, blip)), result.Recovered, at(0), at(500), nil},
		{"late rows in the arm's last 1.5 s", synthetic(good, 6000, relapse(good, 4500, blip)), result.Relapsed, nil, nil, at(4500)},
		{"one late row mid-arm: no relapse", synthetic(good, 6000, func(tms int64) result.Row {
			if tms == 3000 {
				return blip
			}
			return until(500, down, good)(tms)
		}), result.Recovered, at(0), at(500), nil},
		{"late for half a second mid-arm, then back", synthetic(good, 6000, func(tms int64) result.Row {
			if tms >= 3000 && tms < 3600 {
				return blip
			}
			return until(500, down, good)(tms)
		}), result.Recovered, at(3100), at(3600), at(3000)},
	} {
		res := judged(c.rows, &ended, nil)
		if res.Verdict != c.want || !sameMS(res.RecoveryMS, c.fromEnd) || !sameMS(res.RecoveryFromTMS, c.fromT) || !sameMS(res.RelapseFromTMS, c.relapsed) {
			t.Errorf("%s: verdict %s, recovery %s from the end, %s from T, relapse %s; want %s, %s, %s, %s", c.name, res.Verdict,
				fmtMS(res.RecoveryMS), fmtMS(res.RecoveryFromTMS), fmtMS(res.RelapseFromTMS), c.want, fmtMS(c.fromEnd), fmtMS(c.fromT), fmtMS(c.relapsed))
		}
	}
}

// synthetic is a before window of 1 s of baseline, then rows from T:
// pattern(t_ms) until the arm's end.
func synthetic(baseline result.Row, end int64, pattern func(tms int64) result.Row) []result.Row {
	var rows []result.Row
	for tms := int64(-1000); tms < end; tms += 100 {
		r := baseline
		if tms >= 0 {
			r = pattern(tms)
		}
		r.TMS = tms
		rows = append(rows, r)
	}
	return rows
}

// until is a before ms, b from it.
func until(ms int64, a, b result.Row) func(int64) result.Row {
	return func(tms int64) result.Row {
		if tms < ms {
			return a
		}
		return b
	}
}

// judged is rows judged as an arm whose trigger ended at ended, with a
// settle time of settle (nil: none said), at 10 DB q/s and a 5 ms p99
// before T.
func judged(rows []result.Row, ended, settle *int64) *result.ArmResult {
	res := &result.ArmResult{Timeline: rows, DB: &result.DB{BaselineQPS: 10}, Trigger: result.TriggerResult{EndedMS: ended}, SettleMS: settle}
	res.Windows = result.WindowsOf(res.Timeline, res.Trigger.EndedMS)
	verdict.Judge(res, 5)
	return res
}

// Stuck or climbing back is the trend of the goodput over the last 3 s, a
// line fitted through its rows, against a tolerance of 10% of the
// baseline's goodput: a service stuck at a tenth of its baseline, whose
// rows' noise or one lucky row moves the line less than that, is
// metastable; one that climbs a tenth of the baseline in 3 s, or more, is
// recovering, however far from its band. Depth is the last hold's goodput
// against the baseline's.
func TestVerdictTrend(t *testing.T) {
	ended := int64(500)
	for _, c := range []struct {
		name         string
		ok           func(tms int64) int64 // ok answers of a row from T, of 10 (the baseline's)
		want         string
		depth, trend float64
	}{
		{"flat", func(int64) int64 { return 1 }, result.Metastable, 0.1, 0},
		{"noise around a flat line", func(tms int64) int64 { return 1 + (tms/100)%3 }, result.Metastable, 0.21, 0.03},
		{"one lucky row at the end, 4 answers up", func(tms int64) int64 { return 1 + 4*b2i(tms == 5900) }, result.Metastable, 0.14, 0.07},
		{"the cold cache: 70 to 80% of the baseline", func(tms int64) int64 { return 7 + (tms/100)%2 }, result.Metastable, 0.75, 0.01},
		{"falling further", func(tms int64) int64 { return max(0, 5-tms/1000) }, result.Metastable, 0, -0.26},
		{"climbing a row a second and a half", func(tms int64) int64 { return tms / 1500 }, result.Recovering, 0.3, 0.15},
		{"climbing fast, still under half", func(tms int64) int64 { return max(0, (tms-3000)/600) }, result.Recovering, 0.36, 0.46},
	} {
		rows := synthetic(result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}, 6000, func(tms int64) result.Row {
			return result.Row{Requests: 10, OK: c.ok(tms), Attempts: 50, DBQPS: 3, P99MS: 1000}
		})
		res := judged(rows, &ended, nil)
		if res.Verdict != c.want || res.Depth == nil || *res.Depth != c.depth || res.Trend == nil || *res.Trend != c.trend {
			t.Errorf("%s: verdict %s, depth %s, trend %s; want %s, %v, %v", c.name, res.Verdict, fmtF(res.Depth), fmtF(res.Trend), c.want, c.depth, c.trend)
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func fmtF(f *float64) string {
	if f == nil {
		return "null"
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// The settle time is the longest timeout on the arm's path: the client's
// whole deadline or the service's bound on a load, at least 2 s.
func TestSettleIsTheLongestTimeout(t *testing.T) {
	for _, c := range []struct{ client, service, want time.Duration }{
		{time.Second, 0, verdict.MetastableSettle},          // a service whose own bound herdbench cannot read
		{time.Second, 5 * time.Second, 5 * time.Second},     // the testbed's default db-timeout
		{9 * time.Second, 5 * time.Second, 9 * time.Second}, // 1 s, immediate:8
		{500 * time.Millisecond, 0, 2 * time.Second},        //
		{time.Second, 15 * time.Second, 15 * time.Second},   // db-timeout 5 s, db_retry immediate:2
	} {
		if got := verdict.SettleOf(c.client, c.service); got != c.want {
			t.Errorf("settleOf(%s, %s) = %s; want %s", c.client, c.service, got, c.want)
		}
	}
}

func sameMS(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// A cache that refills its cold tail one rare miss at a time: every row of
// 50 requests answers them all, every third row has one 200 ms load among
// them (its p99, the slowest of 50, is that load) and some rows two loads
// (20 q/s and 30 q/s, above the floor). Taken a hold at a time, its requests
// are within band, and the service has recovered; row by row it never
// would. Without the rows' latencies (a results file read back), the
// slowest row's p99 stands for the hold's.
func TestVerdictTakesTheHoldsRequestsTogether(t *testing.T) {
	var rows []result.Row
	var hists []*hdrhistogram.Histogram
	for tms := int64(0); tms < 3000; tms += 100 {
		h := result.NewHist(2)
		for range 50 {
			_ = h.RecordValue(1000) // 1 ms
		}
		r := result.Row{TMS: tms, Requests: 50, OK: 50, P99MS: 1}
		if tms%300 == 0 {
			_ = h.RecordValue(200_000)
			r.P99MS, r.DBQPS = 200, 10
		}
		if tms%900 == 0 {
			r.DBQPS = 30
		}
		rows, hists = append(rows, r), append(hists, h)
	}
	// baseline: 500 req/s answered, 0 q/s, a p99 of 1 ms
	if at, ok := verdict.BandOf(0, 1, 500).Recovered(rows, hists, 0); !ok || at != 0 {
		t.Errorf("recovered with the rows' latencies = %d, %v; want 0, true: one slow request in a hundred is within the p99", at, ok)
	}
	if _, ok := verdict.BandOf(0, 1, 500).Recovered(rows, nil, 0); ok {
		t.Error("recovered without the rows' latencies = true; want false: each hold has a row whose p99 is 200 ms")
	}
}

// An arm that ended on its verdict is judged on the rows it was decided
// on: a stop condition verdict == metastable held on the rows answered by
// T+6 s, and the rows the load still filed after them (a trend back, here)
// do not turn its verdict into another.
func TestAnArmIsJudgedOnTheRowsItEndedOn(t *testing.T) {
	var rows []result.Row
	for tms := int64(-1000); tms < 8000; tms += 100 {
		r := result.Row{TMS: tms, Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}
		switch {
		case tms >= 6000: // climbing back, a row at a time
			r = result.Row{TMS: tms, Requests: 10, OK: 1 + (tms-6000)/500, Attempts: 50, DBQPS: 3, P99MS: 1000}
		case tms >= 0:
			r = result.Row{TMS: tms, Requests: 10, OK: 1, Attempts: 50, DBQPS: 3, P99MS: 1000}
		}
		rows = append(rows, r)
	}
	ended := int64(500)
	for _, c := range []struct {
		decided time.Duration
		want    string
	}{{6 * time.Second, result.Metastable}, {0, result.Recovering}} {
		res := &result.ArmResult{Timeline: rows, DB: &result.DB{BaselineQPS: 10}, Trigger: result.TriggerResult{EndedMS: &ended}}
		res.Windows = result.WindowsOf(rows, &ended)
		(&ending{decided: c.decided}).judgeOn(res)
		if res.Verdict != c.want || len(res.Timeline) != len(rows) {
			t.Errorf("decided on the rows to %s: verdict %s, %d rows kept; want %s, all %d", c.decided, res.Verdict, len(res.Timeline), c.want, len(rows))
		}
	}
}
