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
	"syscall"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/livemetrics"
	"github.com/herdbench/herdbench/testbed"
	"github.com/herdbench/herdbench/testbed/compose/composetest"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
)

func TestMain(m *testing.M) { os.Exit(localtest.Main(m)) }

// herdbench runs the built binary and fails t unless it exits 0.
func herdbench(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := localtest.Run(t, nil, args...)
	if code != 0 {
		t.Fatalf("herdbench %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// Every panel, annotation and variable of every dashboard returns data from
// a Prometheus scraping a live local testbed and a stampede, and names
// only metrics the scraped targets really export.
func TestDashboardsShowALiveStampede(t *testing.T) {
	localtest.RequireObservability(t)
	dir := localtest.StateDir(t)
	t.Cleanup(func() { _ = exec.Command(localtest.Binary(), "testbed", "down", "--state-dir", dir).Run() })
	var st testbed.Status
	if err := json.Unmarshal([]byte(herdbench(t, "testbed", "up", "--observability", "--json", "--state-dir", dir,
		"--replicas", "2", "--items", "200")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Prometheus == "" || st.Harness == "" {
		t.Fatalf("testbed up --observability: status prometheus %q, harness %q; want both", st.Prometheus, st.Harness)
	}
	// status --json names it too, from another process
	var again testbed.Status
	if err := json.Unmarshal([]byte(herdbench(t, "testbed", "status", "--json", "--state-dir", dir)), &again); err != nil ||
		again.Prometheus != st.Prometheus || again.Harness != st.Harness {
		t.Errorf("status --json = prometheus %q, harness %q, %v; want %q, %q", again.Prometheus, again.Harness, err, st.Prometheus, st.Harness)
	}

	localtest.Measures(t) // the stampede makes load; the up does not
	liveStampede(t, st, dir, nil, "--workers", localWorkers(t, 2))

	// Prometheus and the exporters belong to the supervisor: down stops them
	herdbench(t, "testbed", "down", "--state-dir", dir)
	if pids := local.Processes(dir); len(pids) > 0 {
		t.Errorf("processes left in %s after down: %v", dir, pids)
	}
	for _, name := range []string{"prometheus", "redis-exporter", "postgres-exporter"} {
		if pid := st.PIDs[name]; pid == 0 || syscall.Kill(pid, 0) == nil {
			t.Errorf("%s: pid %d in the status, still running after down (or never recorded)", name, pid)
		}
	}
}

// The same on the docker testbed, on a real engine: Prometheus and the
// exporters as containers (stand-in images where the engine cannot pull),
// scraping the replicas' published ports and the harness on loopback.
// Grafana itself is not run here (no image of it can be had); its
// provisioning is checked statically.
func TestDashboardsShowALiveStampedeOnDocker(t *testing.T) {
	composetest.Require(t)
	dir := localtest.StateDir(t)
	env := composetest.Env()
	t.Cleanup(func() { _, _, _ = localtest.Run(t, env, "testbed", "down", "--state-dir", dir) })
	code, stdout, stderr := localtest.Run(t, env, "testbed", "up", "--provider", "docker", "--observability", "--grafana=false", "--json",
		"--state-dir", dir, "--compose-file", composetest.File())
	if code != 0 {
		t.Fatalf("testbed up --provider docker --observability --grafana=false: exit %d\n%s%s", code, stdout, stderr)
	}
	var st testbed.Status
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Provider != "docker" || st.Prometheus == "" || st.Harness == "" {
		t.Fatalf("testbed up --provider docker --observability: provider %q, prometheus %q, harness %q; want docker, both", st.Provider, st.Prometheus, st.Harness)
	}
	localtest.Exclusive(t) // the stampede makes load; the up does not
	liveStampede(t, st, dir, env)

	// down removes every container, Prometheus' and the exporters' too
	if code, stdout, stderr := localtest.Run(t, env, "testbed", "down", "--state-dir", dir); code != 0 {
		t.Fatalf("testbed down: exit %d\n%s%s", code, stdout, stderr)
	}
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=com.docker.compose.project=herdbench").CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("containers of the project after down: %q, %v; want none", out, err)
	}
}

// liveStampede runs a short stampede of two arms on the testbed in dir,
// which serves its live metrics where its Prometheus scrapes them, and
// checks that every scraped job is up and every dashboard query returns
// data. env is the stampede's environment (nil: this process'); more are
// its further arguments (--workers: each worker's share is checked too).
func liveStampede(t *testing.T, st testbed.Status, dir string, env []string, more ...string) {
	start := time.Now()
	results := filepath.Join(t.TempDir(), "results.json")
	var stampedeOut bytes.Buffer
	stampede := exec.Command(localtest.Binary(), append([]string{"stampede", "--state-dir", dir, "--arms", "none,lock",
		"--warmup", "500ms", "--before", "1s", "--after", "2s", "--rate", "100", "--keys", "200", "--hot-keys", "20",
		"--clients", "10", "--seed", "5", "--results-dir", t.TempDir(), "--json", results}, more...)...)
	stampede.Env = env
	stampede.Stdout, stampede.Stderr = &stampedeOut, &stampedeOut
	if err := stampede.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- stampede.Wait() }()

	// the harness' real output, read while it runs: once it has fired T, every
	// family it exports is there
	known := map[string]bool{}
	harnessURL := "http://" + st.Harness + "/metrics"
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var harnessDone bool
	for !harnessDone {
		select {
		case err := <-exited:
			t.Fatalf("stampede ended before its metrics showed T: %v\n%s", err, stampedeOut.String())
		case <-tick.C:
		}
		names, err := scrapeNames(harnessURL)
		if err == nil && names["herdbench_trigger_timestamp_seconds"] && names["herdbench_arm_running"] {
			for n := range names {
				known[n] = true
			}
			harnessDone = true
		}
	}
	// the replicas', the exporters' and Prometheus' own real output, as
	// Prometheus scrapes them. Its scrape manager takes up what discovery
	// found every 5 s, so a Prometheus just started may list no target yet.
	var targets struct {
		ActiveTargets []struct {
			ScrapeURL string            `json:"scrapeUrl"`
			Labels    map[string]string `json:"labels"`
			Health    string            `json:"health"`
		} `json:"activeTargets"`
	}
	wantJobs := []string{"herdbench-api", "herdbench", "redis", "postgres", "prometheus"}
	jobs := map[string]bool{}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := promAPI(st.Prometheus, "/api/v1/targets", nil, &targets); err != nil {
			t.Fatal(err)
		}
		clear(jobs)
		for _, tg := range targets.ActiveTargets {
			jobs[tg.Labels["job"]] = true
		}
		if !slices.ContainsFunc(wantJobs, func(j string) bool { return !jobs[j] }) || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("stampede ended before Prometheus listed its targets (%v): %v\n%s", jobs, err, stampedeOut.String())
		case <-tick.C:
		}
	}
	for _, tg := range targets.ActiveTargets {
		if tg.Labels["job"] == "herdbench" {
			continue // read above
		}
		names, err := scrapeNames(tg.ScrapeURL)
		if err != nil {
			t.Fatalf("scrape %s (job %s): %v", tg.ScrapeURL, tg.Labels["job"], err)
		}
		for n := range names {
			known[n] = true
		}
	}
	for _, job := range wantJobs {
		if !jobs[job] {
			t.Errorf("Prometheus scrapes no job %s (targets %+v)", job, targets.ActiveTargets)
		}
	}
	// every target up by Prometheus' own word, the harness included while
	// the stampede runs
	upCtx, upCancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer upCancel()
	for {
		var res struct {
			Result []series `json:"result"`
		}
		down := map[string]bool{}
		err := promAPI(st.Prometheus, "/api/v1/query", url.Values{"query": {"up"}}, &res)
		for _, s := range res.Result {
			if v := s.finite(); len(v) != 1 || v[0] != 1 {
				down[s.Metric["job"]+" "+s.Metric["instance"]] = true
			}
		}
		if err == nil && len(res.Result) >= len(targets.ActiveTargets) && len(down) == 0 {
			break
		}
		select {
		case <-upCtx.Done():
			t.Fatalf("up: %v, %d series, down %v; want every target's up == 1", err, len(res.Result), down)
		case <-time.After(250 * time.Millisecond):
		}
	}
	if err := <-exited; err != nil {
		t.Fatalf("stampede: %v\n%s", err, stampedeOut.String())
	}
	var rep struct{ Arms []result.ArmResult }
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Arms) != 2 {
		t.Fatalf("results: %v, %d arms; want 2", err, len(rep.Arms))
	}
	firedAt := map[string]float64{}
	for _, a := range rep.Arms {
		if a.Trigger.FiredAt != nil {
			firedAt[a.Name] = float64(a.Trigger.FiredAt.UnixNano()) / 1e6
		}
	}

	// every query of every dashboard, until each has data or the deadline
	// (Prometheus ingests the last scrapes a moment after the stampede)
	end := time.Now().Add(2 * time.Second)
	rng := end.Sub(start).Round(time.Second) + time.Second
	vars := grafanaVars(rng)
	type check struct {
		q       query
		expr    string
		problem string
		result  []series
	}
	var checks, noData []*check
	harness := map[string]bool{}
	for _, f := range livemetrics.Families() {
		harness[f.Name], harness[f.Name+"_bucket"] = true, true
	}
	// set as each arm is judged, at its end, after the harness was read
	known["herdbench_verdict_timestamp_seconds"], known["herdbench_loop_ratio"] = true, true
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
			var unproduced bool
			for _, n := range names {
				switch {
				case known[n]:
				case harness[n]:
					unproduced = true // a family the harness has but this run did not make
				default:
					t.Errorf("%s: metric %s is exported by none of the replicas, the harness, the exporters or Prometheus", q.where, n)
				}
			}
			if unproduced {
				noData = append(noData, &check{q: q, expr: e})
				continue
			}
			checks = append(checks, &check{q: q, expr: e})
		}
		for name, v := range d.variableQueries() {
			if !known[v[0]] {
				t.Errorf("%s: variable $%s: metric %s is exported by no scraped target", d.file, name, v[0])
			}
			var values []string
			if err := promAPI(st.Prometheus, "/api/v1/label/"+v[1]+"/values", url.Values{"match[]": {v[0]},
				"start": {ts(start)}, "end": {ts(end)}}, &values); err != nil || len(values) != 2 {
				t.Errorf("%s: variable $%s = %v, %v; want the two arms", d.file, name, values, err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		pending := 0
		for _, c := range checks {
			if c.problem == "" && c.result != nil {
				continue
			}
			var res struct {
				Result []series `json:"result"`
			}
			var err error
			if c.q.instant {
				err = promAPI(st.Prometheus, "/api/v1/query", url.Values{"query": {c.expr}, "time": {ts(end)}}, &res)
			} else {
				err = promAPI(st.Prometheus, "/api/v1/query_range", url.Values{"query": {c.expr},
					"start": {ts(start)}, "end": {ts(end)}, "step": {"1"}}, &res)
			}
			c.problem = ""
			switch {
			case err != nil:
				c.problem = err.Error()
			case len(res.Result) == 0:
				c.problem = "no series"
			default:
				var n int
				for _, s := range res.Result {
					n += len(s.finite())
				}
				if n == 0 {
					c.problem = fmt.Sprintf("%d series, no finite value", len(res.Result))
				}
			}
			if c.problem != "" {
				pending++
				continue
			}
			c.result = res.Result
		}
		if pending == 0 {
			break
		}
		select {
		case <-ctx.Done():
			for _, c := range checks {
				if c.problem != "" {
					t.Errorf("%s: %s returned %s", c.q.where, c.expr, c.problem)
				}
			}
			t.FailNow()
		case <-time.After(250 * time.Millisecond):
		}
	}

	// a panel of what this run did not produce (request classes, the load
	// balancer, the escape on the testbed) shows no data, never a zero
	for _, c := range noData {
		var res struct {
			Result []series `json:"result"`
		}
		if err := promAPI(st.Prometheus, "/api/v1/query_range", url.Values{"query": {c.expr},
			"start": {ts(start)}, "end": {ts(end)}, "step": {"1"}}, &res); err != nil || len(res.Result) > 0 {
			t.Errorf("%s: %s returned %d series, %v; want none for a run that does not produce it", c.q.where, c.expr, len(res.Result), err)
		}
	}
	if len(noData) == 0 {
		t.Errorf("no panel of what a testbed run does not produce (request classes); want them checked for no data")
	}

	// the trigger annotation marks each arm at the results' fired_at; the
	// phases', the verdicts' and the loop's series are the results' too
	courseIsTheResults(t, st.Prometheus, rep.Arms, windows{500 * time.Millisecond, time.Second, 2 * time.Second}, start, end)
	if slices.Contains(more, "--workers") {
		workerSharesAreTheResults(t, st.Prometheus, rep.Arms, start, end)
	}
	for _, c := range checks {
		if !strings.Contains(c.q.where, `annotation "Trigger (T)"`) {
			continue
		}
		seen := map[string]bool{}
		for _, s := range c.result {
			arm := s.Metric["arm"]
			for _, v := range s.finite() {
				if math.Abs(v-firedAt[arm]) > 1 {
					t.Errorf("%s: arm %s marked at %.0f ms; want the results' fired_at %.0f ms", c.q.where, arm, v, firedAt[arm])
				}
			}
			seen[arm] = true
		}
		if !seen["none"] || !seen["lock"] {
			t.Errorf("%s: marked arms %v; want none and lock", c.q.where, seen)
		}
	}
}
