package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// The client reads the counters by the names the server registers: a
// rename on one side shows here as a zero.
func TestClientReadsTheServersCounters(t *testing.T) {
	var inFlight, busy atomic.Int64
	m := newMetrics(replica.DefaultMitigations(), gauges{loads: &inFlight, busy: &busy, shedLimit: func() float64 { return 0 }})
	m.loads.Add(7)
	m.coalesced.Add(2)
	m.staleServed.Add(3)
	m.lockWaits.Add(4)
	m.loadErrors.Add(5)
	m.earlyLoads.Add(6)
	inFlight.Store(1)
	busy.Store(3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer srv.Close()
	f := admin.NewFleet([]string{srv.URL, srv.URL})
	got, err := f.Counters(context.Background())
	want := admin.Counters{Loads: 14, LoadErrors: 10, EarlyLoads: 12, Coalesced: 4, StaleServed: 6, LockWaits: 8, LoadsInFlight: 2, Busy: 6}
	if err != nil || got != want {
		t.Errorf("Fleet.Counters = %+v, %v; want %+v (two replicas, summed)", got, err, want)
	}
}

// The wire package reads the server's own exposition as Prometheus'
// parser does: every counter's and gauge's sum, by outcome too, and the
// write lag histogram's count and buckets.
func TestTheWireReadsTheServersExpositionAsPrometheusDoes(t *testing.T) {
	var inFlight, busy atomic.Int64
	m := newMetrics(replica.DefaultMitigations(), gauges{loads: &inFlight, busy: &busy, shedLimit: func() float64 { return 2.5 }})
	m.requests.WithLabelValues(admin.OutcomeHit).Add(40)
	m.requests.WithLabelValues(admin.OutcomeShed).Add(3)
	m.loads.Add(7)
	busy.Store(4)
	for _, s := range []float64{0.0005, 0.003, 0.003, 0.1, 40} {
		m.writeLag.Observe(s)
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, admin.PathMetrics, nil))
	text := rec.Body.String()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	got, err := admin.ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for name, mf := range mfs {
		var want float64
		for _, s := range mf.GetMetric() {
			want += s.GetCounter().GetValue() + s.GetGauge().GetValue()
		}
		if g := got.Sum(name); g != int64(want) {
			t.Errorf("Sum(%s) = %d; Prometheus' parser reads %d", name, g, int64(want))
		}
	}
	for _, o := range admin.Outcomes {
		if g, want := got.Sum(admin.MetricRequests, "outcome", o), map[string]int64{admin.OutcomeHit: 40, admin.OutcomeShed: 3}[o]; g != want {
			t.Errorf("Sum(%s, outcome %s) = %d; want %d", admin.MetricRequests, o, g, want)
		}
	}
	h := mfs[admin.MetricWriteLag].GetMetric()[0].GetHistogram()
	count, buckets := got.Histogram(admin.MetricWriteLag)
	if count != h.GetSampleCount() || len(buckets) != len(h.GetBucket()) {
		t.Fatalf("Histogram(%s) = %d over %d buckets; Prometheus' parser reads %d over %d", admin.MetricWriteLag, count, len(buckets), h.GetSampleCount(), len(h.GetBucket()))
	}
	for _, b := range h.GetBucket() {
		if buckets[b.GetUpperBound()] != b.GetCumulativeCount() {
			t.Errorf("bucket le=%g: %d; Prometheus' parser reads %d", b.GetUpperBound(), buckets[b.GetUpperBound()], b.GetCumulativeCount())
		}
	}
}
