package workers_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herdbench/herdbench/cmd/herdbench/clitest"
	"github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/livemetrics"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject/subjecttest"
	"github.com/herdbench/herdbench/workers"
)

// binaryVersion is the version the worker processes run, which the
// controller must send.
func binaryVersion(t *testing.T) string {
	t.Helper()
	_, stdout, _ := localtest.Run(t, nil, "version")
	f := strings.Fields(stdout)
	if len(f) < 2 {
		t.Fatalf("herdbench version: %q", stdout)
	}
	return f[1]
}

// liveCounts keeps the most requests the progress line and the live
// metrics (--metrics-addr's registry) showed before the schedule's end.
type liveCounts struct {
	reg *prometheus.Registry
	mu  sync.Mutex
	// the most the progress line and the metrics showed during the after
	// window, and the requests the schedule had intended by then
	progress, metrics, due int64
}

func (l *liveCounts) progressed(p experiment.Progress, rate int, from time.Time, end time.Time) {
	now := time.Now()
	if p.Phase != experiment.PhaseAfter || !now.Before(end) {
		return
	}
	var total float64
	mfs, _ := l.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "herdbench_requests_total" {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Requests > l.progress {
		l.progress, l.metrics, l.due = p.Requests, int64(total), int64(now.Sub(from).Seconds()*float64(rate))
	}
}

// An arm sent by three workers ends on its verdict with --after auto: the
// controller judges the records the workers stream as they come and sends
// the cut; the arm ends on a row's edge long before its MAX with the
// figures of one process (one request per instant intended up to the
// cut, none unsent, every record filed once), and the progress line and
// the live metrics counted the workers' requests while the load ran.
func TestWorkersEndAnArmOnItsVerdict(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	localtest.Measures(t)
	ws := startWorkers(t, 3)
	tg := subjecttest.Subject(t, 1)
	cfg := replica.DefaultConfig
	cfg.QueryCost = herd.Duration(50 * time.Millisecond)
	const rate = 300
	p := plan.Plan{
		Arms: arm.ClientKinds.Arms([]string{replica.Lock}, replica.FullPatch(cfg)), Trigger: "expire", HotKeys: 10, Keys: 100, Zipf: 1.1, Rate: rate,
		Clients: 10, Timeout: herd.Duration(time.Second), Warmup: herd.Duration(300 * time.Millisecond),
		Before: herd.Duration(time.Second), After: herd.Duration(30 * time.Second), AfterAuto: true, Seed: 11,
	}
	live := &liveCounts{reg: prometheus.NewRegistry()}
	env := experiment.Env{Target: tg.Target, Subject: tg, Observer: livemetrics.NewMetrics(live.reg),
		Generator: workers.NewController(strings.Split(urls(ws), ","), binaryVersion(t), nil, ""),
		Progress: func(pr experiment.Progress) {
			if pr.Phase == experiment.PhaseAfter { // PhaseStarted is T on the schedule
				live.progressed(pr, rate, pr.PhaseStarted.Add(-p.T()), pr.PhaseStarted.Add(time.Duration(p.After)))
			}
		}}
	rep, err := experiment.Run(context.Background(), p, env)
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Arms[0]
	if a.Timing.AfterMS == nil || a.Workers == nil {
		t.Fatalf("verdict %s, timing %+v, workers %+v; want the arm ended on its verdict (timing.after_ms), from the workers", a.Verdict, a.Timing, a.Workers)
	}
	after := *a.Timing.AfterMS
	var pastCut, intended int64
	for _, w := range a.Workers.Each {
		pastCut += w.PastCut
		intended += w.Load.Intended
	}
	t.Logf("verdict %s, recovery from T %v ms, ended at T+%d ms, %d requests, %d past the cut", a.Verdict, fmtMS(a.RecoveryFromTMS), after, a.HTTP.Requests, pastCut)
	if a.Verdict != result.Recovered || after >= time.Duration(p.After).Milliseconds() || after%result.RowWidth.Milliseconds() != 0 {
		t.Errorf("verdict %s, ended at T+%d ms; want recovered, before the %s most, on a row's edge", a.Verdict, after, p.After)
	}
	if want := int64(rate) * after / 1000; a.HTTP.Requests != want || a.HTTP.Errors.Unsent != 0 {
		t.Errorf("http.requests %d (%d unsent); want %d, one per instant intended up to the cut, every one sent", a.HTTP.Requests, a.HTTP.Errors.Unsent, want)
	}
	if want := int64(rate) * (time.Duration(p.Before).Milliseconds() + after) / 1000; a.Load.Intended != want {
		t.Errorf("load.intended %d; want %d, before and after up to the cut", a.Load.Intended, want)
	}
	if intended != a.Load.Intended+pastCut {
		t.Errorf("the workers intended %d, %d of them past the cut; the arm %d", intended, pastCut, a.Load.Intended)
	}
	// each worker's share, live: the requests its merged bins held from
	// T - before on, its own intended less those past the cut, and all
	// of them the merged herdbench_requests_total
	shares := gatheredBy(t, live.reg, "herdbench_worker_requests_total", "worker", "before", "after")
	merged := gatheredBy(t, live.reg, "herdbench_requests_total", "arm", "warmup", "before", "after")
	var all float64
	for _, n := range gatheredBy(t, live.reg, "herdbench_worker_requests_total", "worker", "warmup", "before", "after") {
		all += n
	}
	for _, w := range a.Workers.Each {
		if got, want := shares[strconv.Itoa(w.Index)], float64(w.Load.Intended-w.PastCut); got != want {
			t.Errorf("worker %d: herdbench_worker_requests_total %g from T - before on; want its load.intended %d less past_cut %d", w.Index, got, w.Load.Intended, w.PastCut)
		}
	}
	if len(shares) != 3 || all != merged[a.Name] {
		t.Errorf("workers' shares %v, %g in all; want 3 workers' adding up to the merged herdbench_requests_total %g", shares, all, merged[a.Name])
	}
	// live: the progress line and the metrics counted the workers'
	// requests as they came, at least half of those due by then (the
	// rest in flight, or on their way in the last 100 ms)
	live.mu.Lock()
	defer live.mu.Unlock()
	t.Logf("live during the after window: progress %d requests, metrics %d, due %d", live.progress, live.metrics, live.due)
	if live.due == 0 || live.progress < live.due/2 || live.metrics < live.due/2 {
		t.Errorf("live during the after window: progress %d requests, metrics %d, %d due; want each at least half of those due", live.progress, live.metrics, live.due)
	}
}

// A stop condition on a figure ends an arm sent by workers once the
// records they stream say so: a look-aside cache whose 40 hot keys expire
// at once drops most requests, and http.drop_rate > 50% stops the arm
// long before its after window's end (exit 99, as any stop condition).
// Before T, --metrics-addr already counts the workers' requests.
func TestWorkersStopOnAFigure(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	localtest.Measures(t)
	ws := startWorkers(t, 3)
	dir := t.TempDir()
	out := filepath.Join(dir, "results.json")
	metrics := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, localtest.Binary(), "stampede", "--workers", urls(ws), "--state-dir", localtest.StateDir(t), "--results-dir", dir, "--json", out,
		"--trigger", "expire", "--hot-keys", "40", "--rate", "100", "--keys", "100", "--replicas", "1", "--db-pool", "2", "--query-cost", "200ms",
		"--timeout", "500ms", "--abandoned-load", "canceled", "--arms", "none", "--warmup", "200ms", "--before", "2s", "--after", "20s",
		"--abort-on", "http.drop_rate > 50%", "--metrics-addr", metrics)
	var outb strings.Builder
	cmd.Stdout, cmd.Stderr = &outb, &outb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var err error
	go func() { err = cmd.Wait(); close(exited) }()
	before := requestsBeforeT(ctx, exited, "http://"+metrics+"/metrics")
	<-exited
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 99 {
		t.Fatalf("stampede with a stop condition that holds: %v; want exit 99\n%s", err, outb.String())
	}
	t.Logf("--metrics-addr before T: %g requests", before)
	if before <= 0 {
		t.Errorf("--metrics-addr counted %g requests before T; want the workers' as they came", before)
	}
	var rep experiment.Report
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	a := rep.Arms[0]
	if a.Aborted == nil || a.Aborted.Gate != "http.drop_rate > 50%" || a.Aborted.AtMS >= 15_000 {
		t.Fatalf("aborted %+v; want http.drop_rate > 50%% held well before T+20s", a.Aborted)
	}
	t.Logf("stopped at T+%d ms: %s; %d requests, drop rate %.2f", a.Aborted.AtMS, a.Aborted.Reason, a.HTTP.Requests, a.HTTP.DropRate)
	var intended int64
	for _, w := range a.Workers.Each {
		intended += w.Load.Intended
	}
	if a.Workers == nil || a.Workers.Count != 3 || intended != a.Load.Intended || a.HTTP.DropRate <= 0.1 {
		t.Errorf("workers %+v, intended %d (the arm %d), drop rate %g; want 3 workers whose requests are the arm's, dropping", a.Workers, intended, a.Load.Intended, a.HTTP.DropRate)
	}
}

// herdbench sweep runs from workers: each probe's arm ends on its verdict,
// cut when it recovered (--after auto) and stopped when it is metastable
// (--abort-on 'verdict == metastable'), the same look-aside cache as
// cmd/herdbench's sweep test: a few hot keys recover (2 here: 4 once
// tipped in CI beside compiles), 40 do not. Such an arm
// is judged metastable from about T+6 s (its settle time and a hold after
// the trigger), stopped at T+7.0 to 7.4 s here: MAX leaves room for a
// busy machine.
func TestWorkersSweep(t *testing.T) {
	t.Parallel()
	localtest.Require(t)
	localtest.Measures(t)
	ws := startWorkers(t, 3)
	dir := t.TempDir()
	code, stdout, stderr := localtest.Run(t, nil, "sweep", "--workers", urls(ws), "--state-dir", localtest.StateDir(t), "--results-dir", dir,
		"--trigger", "expire", "--vary", "hot_keys=2..40", "--repeat", "1", "--max-runs", "2",
		"--rate", "100", "--keys", "100", "--replicas", "1", "--db-pool", "2", "--query-cost", "200ms",
		"--timeout", "500ms", "--abandoned-load", "canceled", "--arms", "none",
		"--warmup", "200ms", "--before", "1s", "--after", "auto:12s", "--abort-on", "verdict == metastable", "--seed", "5")
	if code != 0 {
		t.Fatalf("sweep from workers: exit %d\n%s\n%s", code, stdout, stderr)
	}
	res := clitest.ReadSweep(t, dir)
	probed := res.Arms[0].Probed
	for _, p := range probed {
		for _, r := range p.Runs {
			t.Logf("probe %s: %s (drop rate %.3f, db queries %v)", sweep.AtText(p.At), r.Verdict, r.Result.HTTP.DropRate, r.Result.DB)
		}
	}
	if len(probed) != 2 {
		// one probe: the low end tipped, and the sweep had nothing to bisect
		t.Fatalf("%d probes; want 2 (--max-runs 2): the range's ends\n%s", len(probed), stderr)
	}
	for i, want := range []string{result.Recovered, result.Metastable} {
		r := probed[i].Runs[0]
		a := r.Result
		t.Logf("probe %s: %s, after_ms %v, aborted %+v", sweep.AtText(probed[i].At), r.Verdict, fmtMS(a.Timing.AfterMS), a.Aborted)
		if r.Verdict != want || a.Workers == nil || a.Workers.Count != 3 {
			t.Errorf("probe %s: verdict %s, workers %+v; want %s from 3 workers", sweep.AtText(probed[i].At), r.Verdict, a.Workers, want)
		}
	}
	if a := probed[0].Runs[0].Result; a.Timing.AfterMS == nil || *a.Timing.AfterMS >= 12_000 {
		t.Errorf("4 hot keys: timing %+v; want cut when it recovered, before 12 s", a.Timing)
	}
	if a := probed[1].Runs[0].Result; a.Aborted == nil || a.Aborted.Gate != "verdict == metastable" {
		t.Errorf("40 hot keys: aborted %+v; want stopped by verdict == metastable", a.Aborted)
	}
}

// gatheredBy sums metric's counters in reg of the given phases by the
// value of label.
func gatheredBy(t *testing.T, reg *prometheus.Registry, metric, label string, phases ...string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if slices.Contains(phases, l["phase"]) {
				out[l[label]] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

func fmtMS(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// freeAddr is a free loopback HOST:PORT.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// requestsBeforeT scrapes the live metrics at u every 50 ms until the
// trigger fired (its timestamp is set), the run exited or ctx ends, and
// returns the most requests they counted before T.
func requestsBeforeT(ctx context.Context, exited <-chan struct{}, u string) float64 {
	var most float64
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return most
		case <-exited:
			return most
		case <-tick.C:
		}
		resp, err := http.Get(u)
		if err != nil {
			continue // not serving yet, or done
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var sum float64
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "herdbench_trigger_timestamp_seconds{") {
				return most // T: what follows is not before it
			}
			if f := strings.Fields(l); strings.HasPrefix(l, "herdbench_requests_total{") && len(f) == 2 {
				v, _ := strconv.ParseFloat(f[1], 64)
				sum += v
			}
		}
		most = max(most, sum)
	}
}
