package experiment

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The verdict's rule on synthetic timelines: 100 req/s offered (10 a row),
// a before window of 1 s answering all of them at 10 DB q/s and 5 ms; each
// case a pattern of rows from T.
func TestVerdictRule(t *testing.T) {
	good := Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}
	down := Row{Requests: 10, OK: 0, Attempts: 10, DBQPS: 200, P99MS: 1000}
	useless := Row{Requests: 10, OK: 1, Attempts: 50, DBQPS: 3, P99MS: 1000} // retries pile up, nothing gets through
	idle := Row{Requests: 10, OK: 3, Attempts: 5, DBQPS: 3, P99MS: 900}      // poor, but not given the work
	at := func(ms int64) *int64 { return &ms }
	// timeline is the before window, then rows from T: pattern(t_ms) until
	// the arm's end
	timeline := func(baseline Row, end int64, pattern func(tms int64) Row) []Row {
		var rows []Row
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
	until := func(ms int64, a, b Row) func(int64) Row {
		return func(tms int64) Row {
			if tms < ms {
				return a
			}
			return b
		}
	}
	for _, c := range []struct {
		name           string
		rows           []Row
		ended          *int64
		aborted        bool
		want           string
		fromEnd, fromT *int64
	}{
		{"back when the fault ends", timeline(good, 4000, until(500, down, good)), at(500), false, Recovered, at(0), at(500)},
		{"back 700 ms after it", timeline(good, 4000, until(1200, down, good)), at(500), false, Recovered, at(700), at(1200)},
		{"a trigger with no end: counted from T", timeline(good, 4000, until(300, down, good)), nil, false, Recovered, at(300), at(300)},
		{"busy and useless long after", timeline(good, 6000, until(500, down, useless)), at(500), false, Metastable, nil, nil},
		{"useless, but too soon to tell", timeline(good, 3000, until(500, down, useless)), at(500), false, Degraded, nil, nil},
		{"poor but not given the work", timeline(good, 6000, until(500, down, idle)), at(500), false, Degraded, nil, nil},
		{"the baseline out of band", timeline(idle, 4000, until(500, down, good)), at(500), false, Overloaded, nil, nil},
		{"stopped early", timeline(good, 4000, until(500, down, good)), at(500), true, Degraded, nil, nil},
	} {
		res := &ArmResult{Timeline: c.rows, DB: &DB{BaselineQPS: 10}, Trigger: TriggerResult{EndedMS: c.ended}}
		if c.aborted {
			res.Aborted = &Abort{}
		}
		res.Windows = windowsOf(res.Timeline, res.Trigger.EndedMS)
		judge(res, 5)
		if res.Verdict != c.want || !sameMS(res.RecoveryMS, c.fromEnd) || !sameMS(res.RecoveryFromTMS, c.fromT) {
			t.Errorf("%s: verdict %s, recovery %s from the end, %s from T; want %s, %s, %s", c.name,
				res.Verdict, fmtMS(res.RecoveryMS), fmtMS(res.RecoveryFromTMS), c.want, fmtMS(c.fromEnd), fmtMS(c.fromT))
		}
	}
}

// A service that climbs back out, but not yet in band, is degraded, not
// metastable: its last second has more goodput than the one before.
func TestVerdictTrendBackIsNotMetastable(t *testing.T) {
	var rows []Row
	for tms := int64(-1000); tms < 6000; tms += 100 {
		r := Row{TMS: tms, Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}
		if tms >= 0 {
			r = Row{TMS: tms, Requests: 10, OK: tms / 1500, Attempts: 50, DBQPS: 3, P99MS: 1000}
		}
		rows = append(rows, r)
	}
	ended := int64(500)
	res := &ArmResult{Timeline: rows, DB: &DB{BaselineQPS: 10}, Trigger: TriggerResult{EndedMS: &ended}}
	res.Windows = windowsOf(rows, &ended)
	judge(res, 5)
	if res.Verdict != Degraded {
		t.Errorf("goodput climbing a row a second and a half, still under half the baseline: verdict %s; want %s", res.Verdict, Degraded)
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
	var rows []Row
	var hists []*hdrhistogram.Histogram
	for tms := int64(0); tms < 3000; tms += 100 {
		h := newHist(2)
		for range 50 {
			_ = h.RecordValue(1000) // 1 ms
		}
		r := Row{TMS: tms, Requests: 50, OK: 50, P99MS: 1}
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
	if at, ok := recovered(rows, hists, 0, 0, 1, 500); !ok || at != 0 {
		t.Errorf("recovered with the rows' latencies = %d, %v; want 0, true: one slow request in a hundred is within the p99", at, ok)
	}
	if _, ok := recovered(rows, nil, 0, 0, 1, 500); ok {
		t.Error("recovered without the rows' latencies = true; want false: each hold has a row whose p99 is 200 ms")
	}
}

// An arm that ended on its verdict is judged on the rows it was decided
// on: a stop condition verdict == metastable held on the rows answered by
// T+6 s, and the rows the load still filed after them (a trend back, here)
// do not turn its verdict into another.
func TestAnArmIsJudgedOnTheRowsItEndedOn(t *testing.T) {
	var rows []Row
	for tms := int64(-1000); tms < 8000; tms += 100 {
		r := Row{TMS: tms, Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}
		switch {
		case tms >= 6000: // climbing back, a row at a time
			r = Row{TMS: tms, Requests: 10, OK: 1 + (tms-6000)/500, Attempts: 50, DBQPS: 3, P99MS: 1000}
		case tms >= 0:
			r = Row{TMS: tms, Requests: 10, OK: 1, Attempts: 50, DBQPS: 3, P99MS: 1000}
		}
		rows = append(rows, r)
	}
	ended := int64(500)
	for _, c := range []struct {
		decided time.Duration
		want    string
	}{{6 * time.Second, Metastable}, {0, Degraded}} {
		res := &ArmResult{Timeline: rows, DB: &DB{BaselineQPS: 10}, Trigger: TriggerResult{EndedMS: &ended}}
		res.Windows = windowsOf(rows, &ended)
		(&ending{decided: c.decided}).judgeOn(res)
		if res.Verdict != c.want || len(res.Timeline) != len(rows) {
			t.Errorf("decided on the rows to %s: verdict %s, %d rows kept; want %s, all %d", c.decided, res.Verdict, len(res.Timeline), c.want, len(rows))
		}
	}
}
