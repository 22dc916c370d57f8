package livemetrics

import (
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/observe"
)

func TestMetricsLint(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	m.Arm("none", true)
	m.Classes("none", []string{"item", "search"}, 0)
	m.Request("none", "after", load.Record{Outcome: load.OK, Latency: 3 * time.Millisecond, Attempts: 1})
	m.Trigger("none", time.Now())
	m.LB("none", observe.LBStats{Backend: observe.LBRow{Name: "BACKEND"}, Servers: []observe.LBRow{{Name: "api1"}}})
	m.Requests("none", "after", experiment.Summary{Outcomes: [load.NumOutcomes]int64{3}, Worker: "1", Latencies: func(func(time.Duration, int64)) {}})
	m.Phase("none", experiment.PhaseBefore, time.Now())
	m.EscapeStep("none", 1, 50, time.Now())
	rps := 25.0
	m.Judged("none", &result.ArmResult{Verdict: result.Metastable, Loop: &result.Loop{AttemptsPerRequest: &result.LoopFigure{Ratio: 3}},
		Escape: &result.EscapeResult{RPS: &rps}})
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// Families, which the dashboards' tests read, are what is registered
	want := map[string]Family{}
	for _, f := range Families() {
		want[f.Name] = f
	}
	if len(mfs) != len(want) {
		t.Errorf("gathered %d metric families; want Families' %d", len(mfs), len(want))
	}
	for _, mf := range mfs {
		f, ok := want[mf.GetName()]
		if !ok || f.Type != strings.ToLower(mf.GetType().String()) {
			t.Errorf("metric %s of type %s: Families has %+v", mf.GetName(), mf.GetType(), f)
		}
		for _, mt := range mf.GetMetric() {
			var labels []string
			for _, l := range mt.GetLabel() {
				labels = append(labels, l.GetName())
			}
			if !slices.Equal(labels, slices.Sorted(slices.Values(f.Labels))) {
				t.Errorf("metric %s has labels %v; Families says %v", mf.GetName(), labels, f.Labels)
			}
		}
		if !strings.HasPrefix(mf.GetName(), "herdbench_") || mf.GetHelp() == "" {
			t.Errorf("metric %s: want the herdbench_ prefix and help text (help %q)", mf.GetName(), mf.GetHelp())
		}
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				switch l.GetName() {
				case "arm", "phase", "outcome", "class", "server", "verdict", "figure", "worker":
				default:
					t.Errorf("metric %s has label %q; want only arm, phase, outcome, class, server, verdict, figure and worker", mf.GetName(), l.GetName())
				}
			}
		}
	}
}

func TestMetricsCountWhatTheClientsSaw(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.Arm("none", true)
	m.Request("none", "before", load.Record{Outcome: load.OK, Latency: 2 * time.Millisecond, Attempts: 1})
	m.Request("none", "after", load.Record{Outcome: load.Timeout, Latency: 1500 * time.Millisecond, Attempts: 3})
	m.Request("none", "after", load.Record{Outcome: load.OK, Latency: 40 * time.Millisecond, Attempts: 1})
	at := time.Unix(1_700_000_000, 250_000_000)
	m.Trigger("none", at)
	m.Arm("none", false)
	m.Arm("lock", true)

	tests := []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"requests ok after", m.requests.WithLabelValues("none", "after", "ok"), 1},
		{"requests timeout after", m.requests.WithLabelValues("none", "after", "timeout"), 1},
		{"requests shed after (exported as 0)", m.requests.WithLabelValues("none", "after", "shed"), 0},
		{"requests ok before", m.requests.WithLabelValues("none", "before", "ok"), 1},
		{"attempts after", m.attempts.WithLabelValues("none", "after"), 4},
		{"trigger", m.trigger.WithLabelValues("none"), 1_700_000_000.25},
		{"none running", m.running.WithLabelValues("none"), 0},
		{"lock running", m.running.WithLabelValues("lock"), 1},
	}
	for _, tt := range tests {
		if got := testutil.ToFloat64(tt.c); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("%s = %v; want %v", tt.name, got, tt.want)
		}
	}
	// every outcome is exported from the first request of an arm and phase
	if n := testutil.CollectAndCount(m.requests, "herdbench_requests_total"); n != 2*len(load.Outcomes) {
		t.Errorf("herdbench_requests_total series = %d; want %d (every outcome for none/before and none/after)", n, 2*len(load.Outcomes))
	}
	// the latency histogram files 1.5 s under le=1.5 and 40 ms under le=0.05
	want := `
# HELP herdbench_request_duration_seconds Request latency from the intended send time to the end of the last attempt (an open model: a stalled generator is counted), by arm and phase.
# TYPE herdbench_request_duration_seconds histogram
`
	got, err := testutil.CollectAndFormat(m.latency, expfmt.TypeTextPlain, "herdbench_request_duration_seconds")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`herdbench_request_duration_seconds_bucket{arm="none",phase="after",le="0.025"} 0`,
		`herdbench_request_duration_seconds_bucket{arm="none",phase="after",le="0.05"} 1`,
		`herdbench_request_duration_seconds_bucket{arm="none",phase="after",le="1"} 1`,
		`herdbench_request_duration_seconds_bucket{arm="none",phase="after",le="1.5"} 2`,
		`herdbench_request_duration_seconds_count{arm="none",phase="after"} 2`,
	} {
		if !strings.Contains(string(got), line+"\n") {
			t.Errorf("latency histogram lacks %q:\n%s", line, got)
		}
	}
	if !strings.HasPrefix(string(got), strings.TrimPrefix(want, "\n")) {
		t.Errorf("latency histogram header:\n%s\nwant:\n%s", got, want)
	}
}

// A target's request classes are counted apart, by their names, the
// herd's marked; an arm without classes exports no class series at all
// (a class panel shows no data, never zeros).
func TestMetricsCountEachClassApart(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.Arm("plain", true)
	m.Request("plain", "after", load.Record{Outcome: load.OK, Latency: time.Millisecond, Attempts: 1})
	if n := testutil.CollectAndCount(m.classRequests) + testutil.CollectAndCount(m.classHerd); n != 0 {
		t.Errorf("an arm without classes: %d class series; want none", n)
	}
	m.Arm("lock", true)
	m.Classes("lock", []string{"item", "search"}, 0)
	m.Request("lock", "after", load.Record{Class: 0, Outcome: load.Timeout, Latency: time.Second, Attempts: 2})
	m.Request("lock", "after", load.Record{Class: 1, Outcome: load.OK, Latency: 5 * time.Millisecond, Attempts: 1})
	m.Request("lock", "after", load.Record{Class: 1, Outcome: load.OK, Latency: 6 * time.Millisecond, Attempts: 1})
	tests := []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"item timeouts", m.classRequests.WithLabelValues("lock", "after", "item", "timeout"), 1},
		{"item ok (exported as 0)", m.classRequests.WithLabelValues("lock", "after", "item", "ok"), 0},
		{"search ok", m.classRequests.WithLabelValues("lock", "after", "search", "ok"), 2},
		{"item is the herd's", m.classHerd.WithLabelValues("lock", "item"), 1},
		{"search is a bystander", m.classHerd.WithLabelValues("lock", "search"), 0},
		{"all requests", m.requests.WithLabelValues("lock", "after", "ok"), 2},
	}
	for _, tt := range tests {
		if got := testutil.ToFloat64(tt.c); got != tt.want {
			t.Errorf("%s = %v; want %v", tt.name, got, tt.want)
		}
	}
	got, err := testutil.CollectAndFormat(m.classLatency, expfmt.TypeTextPlain, "herdbench_class_request_duration_seconds")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`herdbench_class_request_duration_seconds_count{arm="lock",class="item",phase="after"} 1`,
		`herdbench_class_request_duration_seconds_count{arm="lock",class="search",phase="after"} 2`,
	} {
		if !strings.Contains(string(got), line+"\n") {
			t.Errorf("class latency lacks %q:\n%s", line, got)
		}
	}
}

// The load balancer's series count what HAProxy's counters grew by from
// an arm's first reading, a reload's counters from zero; an arm without
// a load balancer exports none of them.
func TestMetricsCountTheLoadBalancersGrowth(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.Arm("plain", true)
	m.Request("plain", "after", load.Record{Outcome: load.OK, Latency: time.Millisecond, Attempts: 1})
	for _, c := range m.lb.collectors() {
		if n := testutil.CollectAndCount(c); n != 0 {
			t.Errorf("an arm without a load balancer: %d series of a load balancer's family; want none", n)
		}
	}
	reading := func(req, retries, redis, q int64, a, b int64) observe.LBStats {
		return observe.LBStats{Backend: observe.LBRow{Name: "BACKEND", Requests: req, Retries: retries, Redispatches: redis, Queue: q},
			Servers: []observe.LBRow{{Name: "a", Sessions: a, Queue: 2}, {Name: "b", Sessions: b}}}
	}
	m.LB("lb", reading(100, 7, 1, 0, 60, 50)) // before the arm: a base, no growth
	m.LB("lb", reading(110, 9, 2, 3, 66, 56)) // +10 requests, +2 retries, +1 redispatch, +6 and +6 sends
	m.LB("lb", reading(4, 1, 0, 0, 3, 2))     // a reload: its counters from zero
	m.LB("lb", reading(104, 1, 0, 0, 3, 2))   // +100 requests, nothing sent: HAProxy answered them itself
	// +10 requests, 5 redispatched to the other server: HAProxy counts
	// them in wredis alone, and they are retries all the same (5 sends
	// beyond the requests)
	m.LB("lb", reading(114, 1, 5, 0, 10, 10))
	tests := []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"requests", m.lb.requests.WithLabelValues("lb"), 10 + 4 + 100 + 10},
		{"retries", m.lb.retries.WithLabelValues("lb"), 2 + 1 + 5},
		{"redispatches", m.lb.redispatches.WithLabelValues("lb"), 1 + 5},
		{"sends to a", m.lb.sends.WithLabelValues("lb", "a"), 6 + 3 + 7},
		{"sends to b", m.lb.sends.WithLabelValues("lb", "b"), 6 + 2 + 8},
		{"a's queue now", m.lb.queue.WithLabelValues("lb", "a"), 2},
		{"the backend's queue now", m.lb.queue.WithLabelValues("lb", "BACKEND"), 0},
	}
	for _, tt := range tests {
		if got := testutil.ToFloat64(tt.c); got != tt.want {
			t.Errorf("%s = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr    string
		wantErr string
	}{
		{"127.0.0.1:9465", ""},
		{"127.0.0.2:0", ""},
		{"[::1]:9465", ""},
		{"localhost:9465", ""},
		{"0.0.0.0:9465", "not a loopback address"},
		{"10.0.0.1:9465", "not a loopback address"},
		{":9465", "not a loopback address"},
		{"example.com:9465", "not a loopback address"},
		{"127.0.0.1", "missing port"},
		{"127.0.0.1:http", `port "http" is not a number`},
		{"127.0.0.1:70000", `port "70000" is not a number`},
	}
	for _, tt := range tests {
		err := CheckLoopback(tt.addr)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("CheckLoopback(%q) = %v; want nil", tt.addr, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "accepted: 127.0.0.1:PORT")):
			t.Errorf("CheckLoopback(%q) = %v; want an error containing %q and the accepted forms", tt.addr, err, tt.wantErr)
		}
	}
}

func TestServeMetrics(t *testing.T) {
	s, err := ServeMetrics("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Request("lock", "after", load.Record{Outcome: load.Shed, Latency: time.Millisecond, Attempts: 1})
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `herdbench_requests_total{arm="lock",outcome="shed",phase="after"} 1`; resp.StatusCode != 200 || !strings.Contains(string(body), want) {
		t.Errorf("GET /metrics = %s:\n%s\nwant a line %q", resp.Status, body, want)
	}
	// set after the last scrape, just before the end: Close waits for a
	// scrape to have it
	s.Phase("lock", "drain", time.Unix(1700000000, 0))
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	var last string
	for waiting := true; waiting; {
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close() = %v", err)
			}
			waiting = false
		case <-time.After(20 * time.Millisecond):
			if resp, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				last = string(b)
			}
		}
	}
	if want := `herdbench_phase_timestamp_seconds{arm="lock",phase="drain"} 1.7e+09`; !strings.Contains(last, want) {
		t.Errorf("the last scrape while closing:\n%s\nwant a line %q", last, want)
	}
	if _, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Errorf("GET /metrics after Close succeeded; want the server gone")
	}
	if _, err := ServeMetrics("0.0.0.0:0"); err == nil {
		t.Errorf("ServeMetrics(0.0.0.0:0) = nil error; want a refusal to serve beyond loopback")
	}
}
