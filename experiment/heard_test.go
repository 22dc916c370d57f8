package experiment

import (
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
)

// A live judge that reads a row before its requests are filed reads it
// empty, and an empty row is within any band: a stuck arm whose generator
// runs late looks recovered on the rows it has not sent yet. The recorder
// marks how far its schedule's requests are all filed (by their Seq, in
// the order they are due), a request still unsent holds the mark back,
// and the live judge reads no row past it.
func TestTheLiveJudgeReadsOnlyFiledRows(t *testing.T) {
	tt := time.Unix(1000, 0)
	due := func(k uint64) time.Time { // a request every 10 ms from T-1s
		return tt.Add(-time.Second + time.Duration(k+1)*10*time.Millisecond)
	}
	r := NewRecorder(tt, time.Second, 10*time.Second, false)
	if got := r.filedUpTo(); !got.IsZero() {
		t.Fatalf("filed up to %v before any request; want zero", got)
	}
	// requests 0 to 299 answered, filed last first (out of order, as
	// requests end), but 149 (due at T+0.5 s) not sent yet: the generator
	// is late
	for k := 299; k >= 0; k-- {
		if k != 149 {
			r.Add(load.Record{Seq: uint64(k), Intended: due(uint64(k)), Outcome: load.OK, Latency: time.Millisecond, Left: due(uint64(k)), Attempts: 1})
		}
	}
	if got := r.filedUpTo(); !got.Equal(due(148)) {
		t.Errorf("filed up to T%+v with request 149 missing; want request 148's instant, T%+v", got.Sub(tt), due(148).Sub(tt))
	}
	r.Add(load.Record{Seq: 149, Intended: due(149), Outcome: load.OK, Latency: time.Millisecond, Left: due(149), Attempts: 1})
	if got := r.filedUpTo(); !got.Equal(due(299)) {
		t.Errorf("filed up to T%+v once every request is; want the last's, T%+v", got.Sub(tt), due(299).Sub(tt))
	}
	// the judge's rows end a row before the mark, and at the client's
	// bound when that is earlier
	e := &ending{bound: time.Second}
	now := tt.Add(5 * time.Second)
	if got, want := e.answeredBy(now, tt.Add(time.Second)), tt.Add(900*time.Millisecond); !got.Equal(want) {
		t.Errorf("answered by T%+v with requests filed to T+1s; want T%+v", got.Sub(tt), want.Sub(tt))
	}
	if got, want := e.answeredBy(now, now), now.Add(-time.Second-2*result.RowWidth); !got.Equal(want) {
		t.Errorf("answered by T%+v with every request filed; want the bound's, T%+v", got.Sub(tt), want.Sub(tt))
	}
	if got := e.answeredBy(now, time.Time{}); got.After(tt) {
		t.Errorf("answered by T%+v with nothing filed; want before T", got.Sub(tt))
	}
	// why: stuck rows (1 answer of 10, 3 DB q/s) read metastable; the same
	// rows with their last second not yet sent read recovered
	stuck := result.Row{Requests: 10, OK: 1, Attempts: 50, DBQPS: 3, P99MS: 1000}
	ended := int64(500)
	whole := synthetic(result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}, 6000, func(int64) result.Row { return stuck })
	unsent := synthetic(result.Row{Requests: 10, OK: 10, Attempts: 10, DBQPS: 10, P99MS: 5}, 6000, func(tms int64) result.Row {
		if tms >= 5000 {
			return result.Row{DBQPS: 3}
		}
		return stuck
	})
	if a, b := judged(whole, &ended, nil), judged(unsent, &ended, nil); a.Verdict != result.Metastable || b.Verdict != result.Recovered {
		t.Errorf("stuck rows read %s, with their last second unsent %s; want metastable, recovered (the reason for the mark)", a.Verdict, b.Verdict)
	}
}
