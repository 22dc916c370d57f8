package grafana

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/livemetrics"
	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/testbed/cachetest"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

// A staging run: `stampede --target FILE --metrics-addr` against a
// service (the local testbed as one, behind a real HAProxy, with two
// request classes) serves every family the harness declares, classes
// and load balancer included, under the names a testbed run uses; the
// testbed's Prometheus scrapes it there, and every dashboard query on
// the harness' own series returns data for it. The load balancer's
// series name HAProxy's servers and stay within its own counters.
func TestDashboardsShowALiveTargetRun(t *testing.T) {
	localtest.RequireObservability(t)
	tb := localtest.Start(t, local.Config{Replicas: 2, Items: 1000, Observability: true})
	st := tb.Status()
	if st.Prometheus == "" || st.Harness == "" {
		t.Fatalf("observability: prometheus %q, harness %q; want both", st.Prometheus, st.Harness)
	}
	var origins []string
	for _, u := range st.API {
		origins = append(origins, strings.TrimPrefix(u, "http://"))
	}
	base, stats := cachetest.HAProxy(t, origins, 1)
	dir := t.TempDir()
	target := filepath.Join(dir, "staging.yaml")
	yaml := fmt.Sprintf(`name: staging behind HAProxy
endpoints: [%s]
keys:
  zipf: {from: 1, to: 1000, s: 1.1}
  hot: 50
requests:
  - name: items
    weight: 3
    path: /items/{key}
  - name: healthz
    weight: 1
    path: /healthz
haproxy: {stats: %q, backend: api}
redis: {address: %s, key: "item:{key}", pattern: "item:*"}
`, base, stats, strings.TrimPrefix(st.Redis, "redis://"))
	if err := os.WriteFile(target, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	results := filepath.Join(dir, "r.json")
	var out bytes.Buffer
	cmd := exec.Command(localtest.Binary(), "stampede", "--target", target, "--metrics-addr", st.Harness,
		"--arms", "baseline", "--trigger", "expire", "--rate", "150", "--warmup", "0s", "--before", "2s", "--after", "3s",
		"--seed", "7", "--results-dir", dir, "--state-dir", t.TempDir(), "--json", results)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// its /metrics, read while it runs, until every family it serves live
	// shows: all but the escape's (no --escape), and those set as the arm
	// is judged at its end, read from Prometheus below
	want := map[string]bool{}
	for _, f := range livemetrics.Families() {
		want[f.Name] = !unproducedOnStaging[f.Name] && !judgedAtTheEnd[f.Name]
	}
	seen := map[string]bool{}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for missing := len(want); missing > 0; {
		select {
		case err := <-exited:
			t.Fatalf("stampede ended before its metrics showed every family (missing of %v: %d): %v\n%s", seen, missing, err, out.String())
		case <-tick.C:
		}
		names, err := scrapeNames("http://" + st.Harness + "/metrics")
		if err != nil {
			continue // not serving yet
		}
		missing = 0
		for n, live := range want {
			seen[n] = seen[n] || names[n] || names[n+"_bucket"]
			if live && !seen[n] {
				missing++
			}
		}
	}
	if err := <-exited; err != nil {
		t.Fatalf("stampede --target: %v\n%s", err, out.String())
	}
	t.Logf("stampede --target:\n%s", out.String())

	end := time.Now().Add(2 * time.Second)
	harnessQueriesHaveData(t, st.Prometheus, start, end)
	lbSeriesAreHAProxys(t, st.Prometheus, stats, end)
	var rep struct{ Arms []result.ArmResult }
	if b, err := os.ReadFile(results); err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Arms) != 1 {
		t.Fatalf("results %s: %v, %d arms; want 1", results, err, len(rep.Arms))
	}
	courseIsTheResults(t, st.Prometheus, rep.Arms, windows{0, 2 * time.Second, 3 * time.Second}, start, end)
}

// unproducedOnStaging are the harness' families the target run does not
// produce (it has no --escape and no --workers); judgedAtTheEnd those it
// sets as the arm is judged, at its end.
var (
	unproducedOnStaging = map[string]bool{"herdbench_escape_step_rps": true, "herdbench_escape_rps": true,
		"herdbench_worker_requests_total": true}
	judgedAtTheEnd = map[string]bool{"herdbench_verdict_timestamp_seconds": true, "herdbench_loop_ratio": true}
)

// harnessQueriesHaveData runs every dashboard query that reads only the
// harness' own series (those a staging run serves) on prom over
// [start, end], until each returns a finite value or a deadline; one on a
// family the run does not produce (unproducedOnStaging) returns no series.
func harnessQueriesHaveData(t *testing.T, prom string, start, end time.Time) {
	t.Helper()
	harness := map[string]bool{}
	for _, f := range livemetrics.Families() {
		harness[f.Name], harness[f.Name+"_bucket"] = true, true
	}
	vars := grafanaVars(end.Sub(start).Round(time.Second) + time.Second)
	pending := map[string]string{} // expr: where
	for _, d := range loadDashboards(t) {
		for _, q := range d.queries() {
			e, err := expand(q.expr, vars)
			if err != nil {
				t.Fatalf("%s: %v", q.where, err)
			}
			names, err := metricNames(e)
			if err != nil {
				t.Fatalf("%s: %v", q.where, err)
			}
			switch {
			case slices.ContainsFunc(names, func(n string) bool { return unproducedOnStaging[n] }):
				noData(t, prom, q.where, e, start, end)
			case !strings.Contains(q.where, "annotation") && allOf(names, harness):
				pending[e] = q.where
			}
		}
	}
	if len(pending) < 10 {
		t.Fatalf("%d queries on the harness' series alone; want the class, LB and client panels' (%v)", len(pending), pending)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	problems := map[string]string{}
	for len(pending) > 0 {
		clear(problems)
		for e := range pending {
			var res struct {
				Result []series `json:"result"`
			}
			err := promAPI(prom, "/api/v1/query_range", url.Values{"query": {e}, "start": {ts(start)}, "end": {ts(end)}, "step": {"1"}}, &res)
			var n int
			for _, s := range res.Result {
				n += len(s.finite())
			}
			switch {
			case err != nil:
				problems[e] = err.Error()
			case n == 0:
				problems[e] = fmt.Sprintf("%d series, no finite value", len(res.Result))
			default:
				delete(pending, e)
			}
		}
		select {
		case <-ctx.Done():
			for e, p := range problems {
				t.Errorf("%s: %s returned %s", pending[e], e, p)
			}
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// noData fails t unless expr returns no series over [start, end].
func noData(t *testing.T, prom, where, expr string, start, end time.Time) {
	t.Helper()
	var res struct {
		Result []series `json:"result"`
	}
	if err := promAPI(prom, "/api/v1/query_range", url.Values{"query": {expr}, "start": {ts(start)}, "end": {ts(end)}, "step": {"1"}}, &res); err != nil || len(res.Result) > 0 {
		t.Errorf("%s: %s returned %d series, %v; want none for a run that does not produce it", where, expr, len(res.Result), err)
	}
}

func allOf(names []string, in map[string]bool) bool {
	for _, n := range names {
		if !in[n] {
			return false
		}
	}
	return len(names) > 0
}

// lbSeriesAreHAProxys checks the load balancer's series as Prometheus
// last scraped them against HAProxy's own stats read now: the same
// servers, and no more sends or requests than HAProxy counted in all.
func lbSeriesAreHAProxys(t *testing.T, prom, stats string, at time.Time) {
	t.Helper()
	lb, err := (&observe.HAProxy{Stats: stats, Backend: "api"}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := func(expr string) map[string]float64 {
		var res struct {
			Result []series `json:"result"`
		}
		if err := promAPI(prom, "/api/v1/query", url.Values{"query": {expr}, "time": {ts(at)}}, &res); err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, s := range res.Result {
			if v := s.finite(); len(v) == 1 {
				out[s.Metric["server"]] = v[0]
			}
		}
		return out
	}
	sends := sum(`sum by (server) (last_over_time(herdbench_lb_sends_total[1m]))`)
	if len(sends) != len(lb.Servers) {
		t.Errorf("sends by server %v; want HAProxy's servers %+v", sends, lb.Servers)
	}
	for _, r := range lb.Servers {
		if v, ok := sends[r.Name]; !ok || v <= 0 || v > float64(r.Sessions) {
			t.Errorf("server %s: %v sends live (present %v); want some, at most HAProxy's stot %d", r.Name, v, ok, r.Sessions)
		}
	}
	req := sum(`sum(last_over_time(herdbench_lb_requests_total[1m]))`)[""]
	if req <= 0 || req > float64(lb.Backend.Requests) || math.IsNaN(req) {
		t.Errorf("lb requests live %v; want some, at most HAProxy's req_tot %d", req, lb.Backend.Requests)
	}
}
