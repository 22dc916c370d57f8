package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
)

// rowsFrom returns one Row per RowWidth with t_ms from fromMS to toMS
// (exclusive), each made by row(t_ms).
func rowsFrom(fromMS, toMS int64, row func(tms int64) Row) []Row {
	var rows []Row
	for tms := fromMS; tms < toMS; tms += RowWidth.Milliseconds() {
		r := row(tms)
		r.TMS = tms
		rows = append(rows, r)
	}
	return rows
}

func fmtMS(v *int64) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprint(*v)
}

func TestRecovery(t *testing.T) {
	calm := Row{DBQPS: 100, Requests: 10, P99MS: 5}
	hot := Row{DBQPS: 1000, Requests: 10, P99MS: 5}
	slow := Row{DBQPS: 100, Requests: 10, P99MS: 500}
	at := func(v int64) *int64 { return &v }

	tests := []struct {
		name     string
		rows     []Row
		qps, p99 float64 // baselines
		want     *int64
	}{
		{
			name: "recovered immediately",
			rows: rowsFrom(-1000, 3000, func(int64) Row { return calm }),
			qps:  100, p99: 5,
			want: at(0),
		},
		{
			name: "db spike until 500ms",
			rows: rowsFrom(-1000, 3000, func(tms int64) Row {
				if tms >= 0 && tms <= 500 {
					return hot
				}
				return calm
			}),
			qps: 100, p99: 5,
			want: at(600),
		},
		{
			name: "p99 spike until 500ms",
			rows: rowsFrom(-1000, 3000, func(tms int64) Row {
				if tms >= 0 && tms <= 500 {
					return slow
				}
				return calm
			}),
			qps: 100, p99: 5,
			want: at(600),
		},
		{
			name: "in band for less than the hold, then out again",
			rows: rowsFrom(0, 3000, func(tms int64) Row {
				if tms < 500 || (tms >= 1000 && tms < 1200) {
					return hot
				}
				return calm
			}),
			qps: 100, p99: 5,
			want: at(1200),
		},
		{
			name: "never recovers",
			rows: rowsFrom(-1000, 3000, func(tms int64) Row {
				if tms >= 0 {
					return hot
				}
				return calm
			}),
			qps: 100, p99: 5,
			want: nil,
		},
		{
			name: "back only in the last 0.5s",
			rows: rowsFrom(-1000, 3000, func(tms int64) Row {
				if tms >= 0 && tms < 2500 {
					return hot
				}
				return calm
			}),
			qps: 100, p99: 5,
			want: nil,
		},
		{
			name: "back with exactly the hold left",
			rows: rowsFrom(0, 3000, func(tms int64) Row {
				if tms < 2000 {
					return hot
				}
				return calm
			}),
			qps: 100, p99: 5,
			want: at(2000),
		},
		{
			name: "rows without requests pass the p99 test",
			rows: rowsFrom(0, 2000, func(int64) Row { return Row{DBQPS: 100, Requests: 0, P99MS: 500} }),
			qps:  100, p99: 5,
			want: at(0),
		},
		{
			name: "rows before T are ignored",
			rows: rowsFrom(-1000, 2000, func(tms int64) Row {
				if tms < 0 {
					return hot
				}
				return calm
			}),
			qps: 100, p99: 5,
			want: at(0),
		},
		{
			name: "calm rows before T do not count toward the hold",
			rows: rowsFrom(-1000, 1500, func(tms int64) Row {
				if tms >= 0 && tms < 600 {
					return hot
				}
				return calm
			}),
			qps: 100, p99: 5,
			want: nil,
		},
		{
			name: "no rows",
			want: nil,
		},
		{
			name: "qps floor: baseline 0 allows 20 q/s",
			rows: rowsFrom(0, 1000, func(int64) Row { return Row{DBQPS: 20} }),
			qps:  0, p99: 5,
			want: at(0),
		},
		{
			name: "qps floor: baseline 0 refuses 20.01 q/s",
			rows: rowsFrom(0, 1000, func(int64) Row { return Row{DBQPS: 20.01} }),
			qps:  0, p99: 5,
			want: nil,
		},
		{
			name: "qps ratio: baseline 100 allows 150 q/s",
			rows: rowsFrom(0, 1000, func(int64) Row { return Row{DBQPS: 150} }),
			qps:  100, p99: 5,
			want: at(0),
		},
		{
			name: "qps ratio: baseline 100 refuses 150.01 q/s",
			rows: rowsFrom(0, 1000, func(int64) Row { return Row{DBQPS: 150.01} }),
			qps:  100, p99: 5,
			want: nil,
		},
		{
			name: "p99 floor: baseline 0 allows 20ms",
			rows: rowsFrom(0, 1000, func(int64) Row { return Row{Requests: 1, P99MS: 20} }),
			qps:  0, p99: 0,
			want: at(0),
		},
		{
			name: "p99 floor: baseline 0 refuses 20.01ms",
			rows: rowsFrom(0, 1000, func(int64) Row { return Row{Requests: 1, P99MS: 20.01} }),
			qps:  0, p99: 0,
			want: nil,
		},
		{
			name: "p99 ratio: baseline 100ms allows 150ms",
			rows: rowsFrom(0, 1000, func(int64) Row { return Row{Requests: 1, P99MS: 150} }),
			qps:  0, p99: 100,
			want: at(0),
		},
		{
			name: "p99 ratio: baseline 100ms refuses 150.01ms",
			rows: rowsFrom(0, 1000, func(int64) Row { return Row{Requests: 1, P99MS: 150.01} }),
			qps:  0, p99: 100,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *int64 // the band alone: no goodput to hold, the trigger over at T
			if at, ok := bandOf(tt.qps, tt.p99, 0).recovered(tt.rows, nil, 0); ok {
				got = &at
			}
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("recovered(%d rows, 0, %g, %g, 0) = %s; want %s", len(tt.rows), tt.qps, tt.p99, fmtMS(got), fmtMS(tt.want))
			}
		})
	}
}

// samplesEvery returns len(incs)+1 samples RowWidth apart from base, the
// first with 0 calls and each next one incs[i] calls more.
func samplesEvery(base time.Time, incs []int64) []observe.Sample {
	s := []observe.Sample{{At: base}}
	for i, inc := range incs {
		s = append(s, observe.Sample{At: base.Add(time.Duration(i+1) * RowWidth), Calls: s[i].Calls + inc})
	}
	return s
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestPeakQPS(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	burst := repeat(10, 50)
	burst[25] = 50

	tests := []struct {
		name    string
		samples []observe.Sample
		want    float64
	}{
		{"constant 10 per sample", samplesEvery(base, repeat(10, 50)), 100},
		{"burst of 50 in one sample", samplesEvery(base, burst), 50 + 9*10},
		{"exactly 1s of samples", samplesEvery(base, repeat(10, 10)), 100},
		{"0.9s of samples", samplesEvery(base, repeat(10, 9)), 100},
		{"less than 0.9s of samples", samplesEvery(base, repeat(10, 8)), 0},
		{"one sample", samplesEvery(base, nil), 0},
		{"no samples", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := peakQPS(tt.samples, time.Second)
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("peakQPS(%d samples, 1s) = %g; want %g", len(tt.samples), got, tt.want)
			}
		})
	}
}

func TestRecorderWindows(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	r := NewRecorder(T, time.Second, time.Hour, false)
	add := func(off, lat time.Duration, o load.Outcome) {
		r.Add(load.Record{Intended: T.Add(off), Latency: lat, Outcome: o})
	}

	// warmup, before T - 1s: ignored but for the progress count
	for i := range 20 {
		add(-time.Second-time.Duration(i+1)*time.Millisecond, 5*time.Second, load.Timeout)
	}
	// baseline, [T - 1s, T)
	for i := range 30 {
		add(-time.Second+time.Duration(i)*30*time.Millisecond, 2*time.Second, load.Conn)
	}
	// from T: 99 at 10ms (one of each failed outcome among them) and 1 at 900ms
	failed := []load.Outcome{load.Timeout, load.Conn, load.Error5xx, load.Shed, load.Other, load.Shed}
	for i := range 99 {
		o := load.OK
		if i < len(failed) {
			o = failed[i]
		}
		add(time.Duration(i)*10*time.Millisecond, 10*time.Millisecond, o)
	}
	add(2*time.Second, 900*time.Millisecond, load.OK)

	h := r.http()
	t.Run("counts", func(t *testing.T) {
		if h.Requests != 100 {
			t.Errorf("http().Requests = %d; want 100 (records from T only)", h.Requests)
		}
		if h.OK != 94 {
			t.Errorf("http().OK = %d; want 94", h.OK)
		}
		want := Errors{Timeout: 1, Conn: 1, E5xx: 1, Shed: 2, Other: 1}
		if h.Errors != want {
			t.Errorf("http().Errors = %+v; want %+v", h.Errors, want)
		}
		e := h.Errors
		if sum := h.OK + e.Timeout + e.Conn + e.E5xx + e.Shed + e.Other; sum != h.Requests {
			t.Errorf("http().OK + Errors = %d; want Requests = %d", sum, h.Requests)
		}
		if want := 6.0 / 100; math.Abs(h.DropRate-want) > 1e-12 {
			t.Errorf("http().DropRate = %g; want %g", h.DropRate, want)
		}
		if got := r.requests(); got != 20+30+100 {
			t.Errorf("requests() = %d; want %d (every record)", got, 20+30+100)
		}
	})

	t.Run("latency", func(t *testing.T) {
		for _, tt := range []struct {
			name      string
			got, want float64
		}{
			{"P50MS", h.P50MS, 10},
			{"P99MS", h.P99MS, 10},
			{"MaxMS", h.MaxMS, 900},
			{"baseline p99 ms", ms(r.baseline.ValueAtQuantile(99)), 2000},
		} {
			if math.Abs(tt.got-tt.want) > tt.want/100 {
				t.Errorf("%s = %g; want %g ± 1%%", tt.name, tt.got, tt.want)
			}
		}
		if n := r.baseline.TotalCount(); n != 30 {
			t.Errorf("baseline.TotalCount() = %d; want 30", n)
		}
	})

	t.Run("rows", func(t *testing.T) {
		var before, after int64
		for i, row := range r.rows {
			if i < -10 {
				t.Errorf("rows[%d] exists; want no row before T - 1s (warmup)", i)
			}
			if i < 0 {
				before += row.requests
			} else {
				after += row.requests
			}
			if row.hist.TotalCount() != row.requests {
				t.Errorf("rows[%d].hist.TotalCount() = %d; want requests = %d", i, row.hist.TotalCount(), row.requests)
			}
		}
		if before != 30 || after != 100 {
			t.Errorf("row requests before T = %d, from T = %d; want 30, 100", before, after)
		}
		if row := r.rows[0]; row == nil || row.requests != 10 || row.ok != 4 {
			t.Errorf("rows[0] = %+v; want 10 requests, 4 ok", row)
		}
	})

	t.Run("rowIndex", func(t *testing.T) {
		for _, tt := range []struct {
			off  time.Duration
			want int64
		}{
			{-101 * time.Millisecond, -2},
			{-100 * time.Millisecond, -1},
			{-time.Millisecond, -1},
			{-time.Nanosecond, -1},
			{0, 0},
			{99 * time.Millisecond, 0},
			{100 * time.Millisecond, 1},
			{300 * time.Millisecond, 3},
			{time.Hour, 36000},
		} {
			if got := rowIndex(T.Add(tt.off), T); got != tt.want {
				t.Errorf("rowIndex(T%+v, T) = %d; want %d", tt.off, got, tt.want)
			}
		}
	})
}

func TestRecorderCountsCriticalAndRefusedApart(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	r := NewRecorder(T, time.Second, time.Hour, true)
	recs := []load.Record{
		{Outcome: load.OK, Attempts: 2, Hedges: 1, Critical: true},
		{Outcome: load.Shed, Attempts: 1, Critical: true},
		{Outcome: load.Shed, Attempts: 1},
		{Outcome: load.BreakerOpen},                                                         // refused by the client: nothing sent
		{Outcome: load.Throttled},                                                           // refused by the client: nothing sent
		{Outcome: load.OK, Attempts: 1, Critical: true, Intended: T.Add(-time.Millisecond)}, // before T
	}
	for _, rec := range recs {
		if rec.Intended.IsZero() {
			rec.Intended = T
		}
		rec.Latency = time.Millisecond
		r.Add(rec)
	}
	h, rt := r.http(), r.retries()
	if want := (Errors{Shed: 2, Throttled: 1, ClientBreaker: 1}); h.Errors != want || h.Requests != 5 || h.OK != 1 {
		t.Errorf("http() = %d requests, %d ok, %+v; want 5, 1, %+v", h.Requests, h.OK, h.Errors, want)
	}
	if want := (Class{Requests: 2, OK: 1, Shed: 1, DropRate: 0.5, P99MS: 1}); h.Critical == nil || *h.Critical != want {
		t.Errorf("http().Critical = %+v; want %+v", h.Critical, want)
	}
	if want := (Retries{Attempts: 4, Hedges: 1, Amplification: 0.8}); rt != want {
		t.Errorf("retries() = %+v; want %+v (attempts sent, hedges included)", rt, want)
	}
	if h := NewRecorder(T, time.Second, time.Hour, false).http(); h.Critical != nil {
		t.Errorf("http().Critical = %+v for a plan marking none; want nil", h.Critical)
	}
}

func TestRecorderEndsAtAfter(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	r := NewRecorder(T, time.Second, time.Second, false)
	r.Add(load.Record{Intended: T.Add(999 * time.Millisecond), Latency: time.Millisecond, Outcome: load.OK})
	r.Add(load.Record{Intended: T.Add(time.Second), Latency: time.Millisecond, Outcome: load.OK}) // the pacer's last tick
	if h := r.http(); h.Requests != 1 {
		t.Errorf("http().Requests = %d with records at T+999ms and T+1s, after 1s; want 1: the window is [T, T+after)", h.Requests)
	}
	if _, ok := r.rows[10]; ok {
		t.Error("a timeline row exists at T+1s, after the window")
	}
}

func TestTimelineFillsRowsWithoutASample(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	p := Plan{Before: herd.Duration(200 * time.Millisecond), After: herd.Duration(300 * time.Millisecond)}
	// samples at -200ms, -100ms, then none until +150ms: 30 calls over 250ms
	samples := []observe.Sample{
		{At: T.Add(-195 * time.Millisecond), Calls: 0},
		{At: T.Add(-95 * time.Millisecond), Calls: 10},
		{At: T.Add(155 * time.Millisecond), Calls: 40},
		{At: T.Add(255 * time.Millisecond), Calls: 40},
	}
	rows, _ := timeline(p, T, samples, NewRecorder(T, 200*time.Millisecond, 300*time.Millisecond, false))
	var got []float64
	for _, r := range rows {
		got = append(got, r.DBQPS)
	}
	// rows -200, -100, 0, 100, 200: the row at 0 has no sample and takes the
	// 120 q/s of the interval that spans it; the row of the first sample takes
	// the 100 q/s of the interval that starts there
	want := []float64{100, 100, 120, 120, 0}
	if !slices.Equal(got, want) {
		t.Errorf("timeline db_qps = %v; want %v", got, want)
	}
}

func TestSpanCountsAcrossAReset(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return T.Add(time.Duration(ms) * time.Millisecond) }
	conns := counter{func(s observe.Sample) int64 { return s.ConnectionsReceived }, observe.CacheRestarted}
	from := observe.Sample{At: at(0), ConnectionsReceived: 100, CacheInstance: "a"}
	// +5, then Redis restarts (a new run_id, counters from 0) and counts 3, then +4
	samples := []observe.Sample{{At: at(100), ConnectionsReceived: 105, CacheInstance: "a"}, {At: at(200), ConnectionsReceived: 3, CacheInstance: "b"}}
	to := observe.Sample{At: at(300), ConnectionsReceived: 7, CacheInstance: "b"}
	if got := span(from, to, samples, conns); got != 12 {
		t.Errorf("span over 100 -> 105 -> (restart) 3 -> 7 = %d; want 12", got)
	}
	// a decrease without a restart is no growth, never the whole counter
	samples[1].CacheInstance, to.CacheInstance = "a", "a"
	if got := span(from, to, samples, conns); got != 9 {
		t.Errorf("span over 100 -> 105 -> 3 (same server) -> 7 = %d; want 9 (5 + 0 + 4)", got)
	}
}

// A saved run's arm selection reads back as it was written: header names,
// never values.
func TestSelectJSONRoundTrip(t *testing.T) {
	in := Select{Headers: map[string]string{"X-Mode": "s3cret", "A": "b"}, Query: map[string]string{"q": "1"}, Before: []string{"x"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret") || !strings.Contains(string(b), `"headers":["A","X-Mode"]`) {
		t.Fatalf("Marshal = %s; want header names only", b)
	}
	var out Select
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(out)
	if string(again) != string(b) {
		t.Errorf("Marshal(Unmarshal(%s)) = %s; want the same", b, again)
	}
}

// db.qps, which stop conditions read live, is the item queries' delta over
// the last second of samples, across a Postgres restart too.
func TestDBRate(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	start := T
	var samples []observe.Sample
	for i := range 21 { // 2 s at 100 ms, 10 queries a sample
		samples = append(samples, observe.Sample{At: T.Add(time.Duration(i) * 100 * time.Millisecond), Calls: int64(10 * i), DBStart: start})
	}
	if qps, ok := dbRate(samples); !ok || qps != 100 {
		t.Errorf("dbRate = %g, %v; want 100 q/s over the last second", qps, ok)
	}
	// Postgres restarted 500 ms ago: its counter began again at zero
	restarted := start.Add(time.Hour)
	for i := 16; i < 21; i++ {
		samples[i].DBStart, samples[i].Calls = restarted, int64(10*(i-15))
	}
	if qps, ok := dbRate(samples); !ok || qps != 100 {
		t.Errorf("dbRate across a restart = %g, %v; want 100 q/s", qps, ok)
	}
	if _, ok := dbRate(samples[:1]); ok {
		t.Error("dbRate of one sample = ok; want no rate")
	}
}

// The generator's figures come from the clients' own records: what the
// schedule owed from T - before, what left, and how late; unsent requests
// count as requests and drops, with no latency.
func TestRecorderGeneratorFigures(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name          string
		sent, unsent  int
		lag           time.Duration
		wantSaturated bool
	}{
		{"on time", 400, 0, 200 * time.Microsecond, false},
		{"late", 400, 0, 20 * time.Millisecond, true},
		{"behind", 390, 10, time.Millisecond, true},
		{"a little behind", 397, 3, time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRecorder(T, time.Second, time.Second, false)
			// a warmup record is not the window's
			r.Add(load.Record{Intended: T.Add(-2 * time.Second), Left: T, Outcome: load.OK})
			for i := range tt.sent + tt.unsent {
				at := T.Add(-time.Second + time.Duration(i)*5*time.Millisecond)
				rec := load.Record{Intended: at, Left: at.Add(tt.lag), Latency: tt.lag + time.Millisecond, Outcome: load.OK, Attempts: 1}
				if i >= tt.sent {
					rec = load.Record{Intended: at, Outcome: load.Unsent}
				}
				r.Add(rec)
			}
			g := r.generator(2 * time.Second)
			want := LoadFigures{Intended: int64(tt.sent + tt.unsent), Sent: int64(tt.sent), AchievedRate: float64(tt.sent) / 2,
				LagP50MS: ms(tt.lag.Microseconds()), LagP90MS: ms(tt.lag.Microseconds()), LagP99MS: ms(tt.lag.Microseconds()), Saturated: tt.wantSaturated}
			if math.Abs(g.LagP99MS-want.LagP99MS) <= 0.01*want.LagP99MS+0.001 { // within the histogram's precision
				g.LagP50MS, g.LagP90MS, g.LagP99MS = want.LagP50MS, want.LagP90MS, want.LagP99MS
			}
			if g != want {
				t.Errorf("generator() = %+v; want %+v", g, want)
			}
			h := r.http()
			after := int64(0)
			for i := range tt.sent + tt.unsent {
				if i*5 >= 1000 {
					after++
				}
			}
			if h.Requests != after || h.Errors.Unsent != int64(max(0, tt.unsent)) || h.OK+h.Errors.Unsent != h.Requests {
				t.Errorf("http() = requests %d, ok %d, unsent %d; want %d requests from T, the unsent among them as dropped", h.Requests, h.OK, h.Errors.Unsent, after)
			}
			if r := r.retries(); tt.unsent > 0 && r.Amplification != 1 {
				t.Errorf("retries().Amplification = %g; want 1: an unsent request met no retry policy", r.Amplification)
			}
		})
	}
}
