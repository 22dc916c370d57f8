package workers

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/herdbench/herdbench/load"
)

// A record crosses the wire unchanged in everything the recorder and the
// live metrics read of it.
func TestWireRecordRoundTrip(t *testing.T) {
	tt := time.Unix(1_800_000_000, 123)
	in := []load.Record{
		{Seq: 7, Intended: tt.Add(-time.Second), Left: tt.Add(-time.Second + 30*time.Microsecond), Latency: 2 * time.Millisecond, Outcome: load.OK,
			Attempts: 2, Hedges: 1, SentAt: []time.Time{tt.Add(-time.Second), tt.Add(-time.Second + time.Millisecond)}, Code: 200, Cache: "stale", Critical: true, Class: 1},
		{Seq: 8, Intended: tt.Add(5 * time.Millisecond), Outcome: load.Unsent},
	}
	for _, r := range in {
		b, err := json.Marshal(toWire(r, tt))
		if err != nil {
			t.Fatal(err)
		}
		var w wireRecord
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		got := w.record(tt)
		if !got.Intended.Equal(r.Intended) || !got.Left.Equal(r.Left) || got.Latency != r.Latency || got.Outcome != r.Outcome ||
			got.Attempts != r.Attempts || got.Hedges != r.Hedges || len(got.SentAt) != len(r.SentAt) || got.Code != r.Code ||
			got.Cache != r.Cache || got.Critical != r.Critical || got.Class != r.Class || got.Seq != r.Seq {
			t.Errorf("record(toWire(%+v)) = %+v", r, got)
		}
		for i := range r.SentAt {
			if !got.SentAt[i].Equal(r.SentAt[i]) {
				t.Errorf("SentAt[%d] = %v; want %v", i, got.SentAt[i], r.SentAt[i])
			}
		}
	}
}

// BenchmarkStream is the controller's cost of one streamed record: a
// worker's answer of 100 records (100 ms at 1,000 req/s) encoded, decoded
// and turned back into records; bytes/record is what crosses the wire.
func BenchmarkStream(b *testing.B) {
	tt := time.Now()
	recs := make([]wireRecord, 100)
	for i := range recs {
		at := tt.Add(time.Duration(i) * time.Millisecond)
		recs[i] = toWire(load.Record{Seq: uint64(i * 3), Intended: at, Left: at.Add(40 * time.Microsecond), Latency: 1500 * time.Microsecond,
			Outcome: load.OK, Attempts: 1, SentAt: []time.Time{at.Add(40 * time.Microsecond)}, Code: 200, Cache: "hit"}, tt)
	}
	ans := Records{Since: 1_000_000, Records: recs, Heard: tt}
	var size int
	b.ReportAllocs()
	for b.Loop() {
		buf, err := json.Marshal(ans)
		if err != nil {
			b.Fatal(err)
		}
		size = len(buf)
		var got Records
		if err := json.Unmarshal(buf, &got); err != nil {
			b.Fatal(err)
		}
		for _, w := range got.Records {
			_ = w.record(tt)
		}
	}
	b.ReportMetric(float64(size)/float64(len(recs)), "bytes/record")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
