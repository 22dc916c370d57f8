package experiment

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/herdbench/herdbench/load"
)

// benchRecords returns n records intended over a 20 s timeline around t
// (10 s before, 10 s after), with latencies log-uniform in [1ms, 1s] and one
// in twenty shed.
func benchRecords(t time.Time, n int) []load.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	const span = 20 * time.Second
	recs := make([]load.Record, n)
	for i := range recs {
		lat := time.Duration(float64(time.Millisecond) * math.Pow(1000, rng.Float64()))
		o := load.OK
		if rng.IntN(20) == 0 {
			o = load.Shed
		}
		recs[i] = load.Record{
			Seq:      uint64(i),
			Intended: t.Add(-span/2 + time.Duration(i)*span/time.Duration(n)),
			Latency:  lat,
			Outcome:  o,
			Code:     200,
		}
	}
	return recs
}

// BenchmarkRecorderAdd is the harness's cost on the attack path: Attack's
// record callback runs once per response.
func BenchmarkRecorderAdd(b *testing.B) {
	t := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	recs := benchRecords(t, 4096)
	r := NewRecorder(t, 10*time.Second, 10*time.Second, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.Add(recs[i%len(recs)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if got := r.requests(); got != int64(b.N) {
		b.Fatalf("requests() = %d; want %d", got, b.N)
	}
}

// BenchmarkRecorderAddLive is the same with stop conditions in the plan,
// which keep the last second of completed requests too.
func BenchmarkRecorderAddLive(b *testing.B) {
	t := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	recs := benchRecords(t, 4096)
	r := NewRecorder(t, 10*time.Second, 10*time.Second, false)
	r.liveOn = true
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.Add(recs[i%len(recs)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if f := r.liveFigures(t.Add(20 * time.Second)); f["http.requests"] == nil {
		b.Fatal("no live figures")
	}
}

// BenchmarkRecorderAddParallel measures contention on the recorder's mutex.
func BenchmarkRecorderAddParallel(b *testing.B) {
	t := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	recs := benchRecords(t, 4096)
	r := NewRecorder(t, 10*time.Second, 10*time.Second, false)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(len(recs))
		for pb.Next() {
			r.Add(recs[i%len(recs)])
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if got := r.requests(); got != int64(b.N) {
		b.Fatalf("requests() = %d; want %d", got, b.N)
	}
}

// BenchmarkRecorderAddOutOfOrder files the records in the order they end
// (intended plus latency), each cycle's numbers after the last's, as an
// attack's callback sees them: the filed mark (filedMark) holds each
// record that ends before an earlier one until that one is filed.
func BenchmarkRecorderAddOutOfOrder(b *testing.B) {
	t := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	recs := benchRecords(t, 4096)
	slices.SortFunc(recs, func(x, y load.Record) int {
		return x.Intended.Add(x.Latency).Compare(y.Intended.Add(y.Latency))
	})
	r := NewRecorder(t, 10*time.Second, 10*time.Second, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		rec := recs[i%len(recs)]
		rec.Seq += uint64(i / len(recs) * len(recs))
		r.Add(rec)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if got := r.requests(); got != int64(b.N) {
		b.Fatalf("requests() = %d; want %d", got, b.N)
	}
}
