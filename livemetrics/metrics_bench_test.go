package livemetrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herdbench/herdbench/load"
)

// BenchmarkMetricsRequest is the live metrics' cost per request on the
// attack path, on top of the recorder's (--metrics-addr or observability).
func BenchmarkMetricsRequest(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry())
	outcomes := []load.Outcome{load.OK, load.OK, load.OK, load.Timeout, load.Shed}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Request("none", "after", load.Record{Outcome: outcomes[i%len(outcomes)], Latency: time.Duration(i%1000) * time.Millisecond, Attempts: 1})
		i++
	}
}

func BenchmarkMetricsRequestParallel(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry())
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			m.Request("none", "after", load.Record{Outcome: load.OK, Latency: time.Duration(i%1000) * time.Millisecond, Attempts: 1})
			i++
		}
	})
}
