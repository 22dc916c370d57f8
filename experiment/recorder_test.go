package experiment

import (
	"math"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
)

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
		want := result.Errors{Timeout: 1, Conn: 1, E5xx: 1, Shed: 2, Other: 1}
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
			{"baseline p99 ms", result.Millis(r.baseline.ValueAtQuantile(99)), 2000},
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
			if got := result.RowIndex(T.Add(tt.off), T); got != tt.want {
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
	if want := (result.Errors{Shed: 2, Throttled: 1, ClientBreaker: 1}); h.Errors != want || h.Requests != 5 || h.OK != 1 {
		t.Errorf("http() = %d requests, %d ok, %+v; want 5, 1, %+v", h.Requests, h.OK, h.Errors, want)
	}
	if want := (result.Class{Requests: 2, OK: 1, Shed: 1, DropRate: 0.5, P99MS: 1}); h.Critical == nil || *h.Critical != want {
		t.Errorf("http().Critical = %+v; want %+v", h.Critical, want)
	}
	if want := (result.Retries{Attempts: 4, Hedges: 1, Amplification: 0.8}); rt != want {
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
			want := result.LoadFigures{Intended: int64(tt.sent + tt.unsent), Sent: int64(tt.sent), AchievedRate: float64(tt.sent) / 2,
				LagP50MS: result.Millis(tt.lag.Microseconds()), LagP90MS: result.Millis(tt.lag.Microseconds()), LagP99MS: result.Millis(tt.lag.Microseconds()), Saturated: tt.wantSaturated}
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
