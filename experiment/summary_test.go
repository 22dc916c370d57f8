package experiment

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/observe"
)

// rowsFrom returns one Row per RowWidth with t_ms from fromMS to toMS
// (exclusive), each made by row(t_ms).
func rowsFrom(fromMS, toMS int64, row func(tms int64) result.Row) []result.Row {
	var rows []result.Row
	for tms := fromMS; tms < toMS; tms += result.RowWidth.Milliseconds() {
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
	calm := result.Row{DBQPS: 100, Requests: 10, P99MS: 5}
	hot := result.Row{DBQPS: 1000, Requests: 10, P99MS: 5}
	slow := result.Row{DBQPS: 100, Requests: 10, P99MS: 500}
	at := func(v int64) *int64 { return &v }

	tests := []struct {
		name     string
		rows     []result.Row
		qps, p99 float64 // baselines
		want     *int64
	}{
		{
			name: "recovered immediately",
			rows: rowsFrom(-1000, 3000, func(int64) result.Row { return calm }),
			qps:  100, p99: 5,
			want: at(0),
		},
		{
			name: "db spike until 500ms",
			rows: rowsFrom(-1000, 3000, func(tms int64) result.Row {
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
			rows: rowsFrom(-1000, 3000, func(tms int64) result.Row {
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
			rows: rowsFrom(0, 3000, func(tms int64) result.Row {
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
			rows: rowsFrom(-1000, 3000, func(tms int64) result.Row {
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
			rows: rowsFrom(-1000, 3000, func(tms int64) result.Row {
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
			rows: rowsFrom(0, 3000, func(tms int64) result.Row {
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
			rows: rowsFrom(0, 2000, func(int64) result.Row { return result.Row{DBQPS: 100, Requests: 0, P99MS: 500} }),
			qps:  100, p99: 5,
			want: at(0),
		},
		{
			name: "rows before T are ignored",
			rows: rowsFrom(-1000, 2000, func(tms int64) result.Row {
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
			rows: rowsFrom(-1000, 1500, func(tms int64) result.Row {
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
			rows: rowsFrom(0, 1000, func(int64) result.Row { return result.Row{DBQPS: 20} }),
			qps:  0, p99: 5,
			want: at(0),
		},
		{
			name: "qps floor: baseline 0 refuses 20.01 q/s",
			rows: rowsFrom(0, 1000, func(int64) result.Row { return result.Row{DBQPS: 20.01} }),
			qps:  0, p99: 5,
			want: nil,
		},
		{
			name: "qps ratio: baseline 100 allows 150 q/s",
			rows: rowsFrom(0, 1000, func(int64) result.Row { return result.Row{DBQPS: 150} }),
			qps:  100, p99: 5,
			want: at(0),
		},
		{
			name: "qps ratio: baseline 100 refuses 150.01 q/s",
			rows: rowsFrom(0, 1000, func(int64) result.Row { return result.Row{DBQPS: 150.01} }),
			qps:  100, p99: 5,
			want: nil,
		},
		{
			name: "p99 floor: baseline 0 allows 20ms",
			rows: rowsFrom(0, 1000, func(int64) result.Row { return result.Row{Requests: 1, P99MS: 20} }),
			qps:  0, p99: 0,
			want: at(0),
		},
		{
			name: "p99 floor: baseline 0 refuses 20.01ms",
			rows: rowsFrom(0, 1000, func(int64) result.Row { return result.Row{Requests: 1, P99MS: 20.01} }),
			qps:  0, p99: 0,
			want: nil,
		},
		{
			name: "p99 ratio: baseline 100ms allows 150ms",
			rows: rowsFrom(0, 1000, func(int64) result.Row { return result.Row{Requests: 1, P99MS: 150} }),
			qps:  0, p99: 100,
			want: at(0),
		},
		{
			name: "p99 ratio: baseline 100ms refuses 150.01ms",
			rows: rowsFrom(0, 1000, func(int64) result.Row { return result.Row{Requests: 1, P99MS: 150.01} }),
			qps:  0, p99: 100,
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *int64 // the band alone: no goodput to hold, the trigger over at T
			if at, ok := verdict.BandOf(tt.qps, tt.p99, 0).Recovered(tt.rows, nil, 0); ok {
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
		s = append(s, observe.Sample{At: base.Add(time.Duration(i+1) * result.RowWidth), Calls: s[i].Calls + inc})
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

func TestTimelineFillsRowsWithoutASample(t *testing.T) {
	T := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	p := plan.Plan{Before: herd.Duration(200 * time.Millisecond), After: herd.Duration(300 * time.Millisecond)}
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
	in := arm.Select{Headers: map[string]string{"X-Mode": "s3cret", "A": "b"}, Query: map[string]string{"q": "1"}, Before: []string{"x"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret") || !strings.Contains(string(b), `"headers":["A","X-Mode"]`) {
		t.Fatalf("Marshal = %s; want header names only", b)
	}
	var out arm.Select
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
