package workers

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/herdbench/herdbench/load"
)

// A record crosses the wire unchanged in everything the recorder and the
// live metrics read of it, and with what vegeta's results hold only when
// the share asks for it (-o vegeta).
func TestWireRecordRoundTrip(t *testing.T) {
	tt := time.Unix(1_800_000_000, 123)
	in := []load.Record{
		{Seq: 7, Intended: tt.Add(-time.Second), Left: tt.Add(-time.Second + 30*time.Microsecond), Latency: 2 * time.Millisecond, Outcome: load.OK,
			Attempts: 2, Hedges: 1, SentAt: []time.Time{tt.Add(-time.Second), tt.Add(-time.Second + time.Millisecond)}, Code: 200, Cache: "stale", Critical: true, Class: 1,
			Method: "POST", URL: "http://127.0.0.1:8081/items/7", Error: "503 Service Unavailable", BytesOut: 42},
		{Seq: 8, Intended: tt.Add(5 * time.Millisecond), Outcome: load.Unsent},
	}
	for _, vegeta := range []bool{false, true} {
		for _, r := range in {
			roundTrip(t, r, tt, vegeta)
		}
	}
}

// roundTrip checks r crosses the wire as the recorder reads it.
func roundTrip(t *testing.T, r load.Record, tt time.Time, vegeta bool) {
	t.Helper()
	b, err := json.Marshal(toWire(r, tt, vegeta))
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
	full := got.Method == r.Method && got.URL == r.URL && got.Error == r.Error && got.BytesOut == r.BytesOut
	none := got.Method == "" && got.URL == "" && got.Error == "" && got.BytesOut == 0
	if vegeta && !full || !vegeta && !none {
		t.Errorf("vegeta %v: method %q, URL %q, error %q, bytes %d crossed; want them only with vegeta", vegeta, got.Method, got.URL, got.Error, got.BytesOut)
	}
}

// BenchmarkStream is the controller's cost of one streamed record: a
// worker's answer of 100 records (100 ms at 1,000 req/s) encoded, decoded
// and turned back into records; bytes/record is what crosses the wire,
// without and with what vegeta's results hold (-o vegeta).
func BenchmarkStream(b *testing.B) {
	for _, vegeta := range []bool{false, true} {
		b.Run(map[bool]string{false: "records", true: "vegeta"}[vegeta], func(b *testing.B) { benchStream(b, vegeta) })
	}
}

func benchStream(b *testing.B, vegeta bool) {
	tt := time.Now()
	recs := make([]wireRecord, 100)
	for i := range recs {
		at := tt.Add(time.Duration(i) * time.Millisecond)
		recs[i] = toWire(load.Record{Seq: uint64(i * 3), Intended: at, Left: at.Add(40 * time.Microsecond), Latency: 1500 * time.Microsecond,
			Outcome: load.OK, Attempts: 1, SentAt: []time.Time{at.Add(40 * time.Microsecond)}, Code: 200, Cache: "hit",
			Method: "GET", URL: "http://127.0.0.1:8081/items/" + strconv.Itoa(1+i*37%10000)}, tt, vegeta)
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
