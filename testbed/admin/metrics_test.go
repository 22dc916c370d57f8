package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const scrape = `# HELP herdbench_api_requests_total Item requests served, by outcome.
# TYPE herdbench_api_requests_total counter
herdbench_api_requests_total{outcome="hit"} 40
herdbench_api_requests_total{outcome="miss"} 2
herdbench_api_requests_total{outcome="stale",note="a \"quoted\" \\ value\nwith a line"} 3 1700000000000
# TYPE herdbench_api_loads_total counter
herdbench_api_loads_total 7
# TYPE herdbench_api_requests_in_flight gauge
herdbench_api_requests_in_flight 1.9
# TYPE herdbench_api_write_lag_seconds histogram
herdbench_api_write_lag_seconds_bucket{le="0.001"} 0
herdbench_api_write_lag_seconds_bucket{le="0.002"} 4
herdbench_api_write_lag_seconds_bucket{le="0.004"} 10
herdbench_api_write_lag_seconds_bucket{le="+Inf"} 10
herdbench_api_write_lag_seconds_sum 0.03
herdbench_api_write_lag_seconds_count 10
untyped_total 5
`

func TestParseMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		match []string
		want  int64
	}{
		{MetricRequests, nil, 45},
		{MetricRequests, []string{"outcome", "hit"}, 40},
		{MetricRequests, []string{"note", "a \"quoted\" \\ value\nwith a line"}, 3},
		{MetricRequests, []string{"outcome", "shed"}, 0},
		{MetricLoads, nil, 7},
		{MetricBusy, nil, 1},      // a gauge, truncated as a count
		{MetricWriteLag, nil, 0},  // a histogram is no counter
		{"untyped_total", nil, 0}, // nor is a sample without a type
		{"herdbench_api_absent", nil, 0},
	} {
		if got := m.Sum(tt.name, tt.match...); got != tt.want {
			t.Errorf("Sum(%s, %q) = %d; want %d", tt.name, tt.match, got, tt.want)
		}
	}
	count, buckets := m.Histogram(MetricWriteLag)
	if count != 10 || len(buckets) != 4 || buckets[0.002] != 4 || buckets[0.004] != 10 {
		t.Errorf("Histogram(%s) = %d, %v; want 10 over 4 buckets, 4 at 2ms, 10 at 4ms", MetricWriteLag, count, buckets)
	}
}

func TestParseMetricsRefusesWhatIsNotTheTextFormat(t *testing.T) {
	for _, in := range []string{
		"herdbench_api_loads_total",
		"herdbench_api_loads_total seven",
		`herdbench_api_requests_total{outcome="hit} 1`,
		`herdbench_api_requests_total{outcome=hit} 1`,
		"herdbench_api_loads_total 1 2 3",
	} {
		if _, err := ParseMetrics(strings.NewReader(in)); err == nil {
			t.Errorf("ParseMetrics(%q) = nil; want an error", in)
		}
	}
}

// A fleet sums its replicas: their counters, and their write lag
// histograms before it takes the quantiles.
func TestFleetSumsItsReplicas(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != PathMetrics {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(scrape))
	}))
	defer srv.Close()
	f := NewFleet([]string{srv.URL, srv.URL + "/"})
	got, err := f.Counters(context.Background())
	if want := (Counters{Requests: 90, Loads: 14, Busy: 2}); err != nil || got != want {
		t.Errorf("Fleet.Counters = %+v, %v; want %+v", got, err, want)
	}
	lag, err := f.WriteLag(context.Background())
	// 20 writes, 8 at or under 2ms and 20 at or under 4ms: the median,
	// the 10th, is 2 + 2*(10-8)/(20-8) ms
	if want := (WriteLag{Count: 20, P50MS: 2.33, P99MS: 3.97}); err != nil || lag != want {
		t.Errorf("Fleet.WriteLag = %+v, %v; want %+v", lag, err, want)
	}
}
