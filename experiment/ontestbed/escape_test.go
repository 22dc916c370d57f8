package ontestbed_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	. "github.com/herdbench/herdbench/experiment"
	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/livemetrics"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/local"
	"github.com/herdbench/herdbench/testbed/localtest"
	"github.com/herdbench/herdbench/testbed/replica"
	"github.com/herdbench/herdbench/testbed/subject"
)

// The escape load on the testbed: a retry storm whose stuck state does
// not depend on the machine's speed. One replica with two pooled
// connections and 50 ms queries (every request a load: a 10 ms TTL) has a
// capacity of 40 loads a second; 20 req/s use half of it. Clients that
// give up after 300 ms and retry four times at once send up to 100
// attempts a second, two and a half times the capacity: once a 3 s
// slowdown of 500 ms a reply has made every request time out, the pool's
// queue holds a second of waits (the replicas' db-timeout, 1 s), every
// load that gets a connection has waited longer than its client, and the
// retries keep the queue full. That is the loop rate < capacity <
// rate x (1 + retries) predicts, with a margin on both sides: it holds on
// a slow machine as on a fast one. The timeout leaves a healthy load 250
// ms of slack over its 50 ms query: with 200 ms (150 ms of slack) a
// saturated CI machine's stall once timed out enough requests in the
// before window for their retries to tip the storm before T (a sweep's
// probe read overloaded).
//
// Stepped down, the service comes back only well below the rate that
// tipped it (hysteresis): at 75% (15 req/s, up to 75 attempts a second)
// it stays stuck for its 4 s, and it comes back at 50% at the most (10
// req/s, 50 attempts at most: on the edge). At 25% (25 attempts, under
// the capacity) it came back with the 200 ms timeout; with 300 ms its
// queue of abandoned loads drains more slowly, and beside a CPU hog it
// came back only at 10% (2 req/s). Each step's requests are the stepped
// schedule's: the rows of a step offer its rate.
func TestEscapeOnTheTestbed(t *testing.T) {
	t.Parallel()
	opts := replica.DefaultOptions
	opts.DBPoolSize, opts.DBTimeout = 2, time.Second
	tb := localtest.Start(t, local.Config{Replicas: 1, Items: 1000, Replica: opts})
	tg, err := subject.Open(context.Background(), tb.Status(), tb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	var four retry.Policy
	if err := four.UnmarshalText([]byte("immediate:4")); err != nil {
		t.Fatal(err)
	}
	cfg := replica.DefaultConfig
	cfg.QueryCost, cfg.TTL = herd.Duration(50*time.Millisecond), herd.Duration(10*time.Millisecond)
	limit := 4 * time.Second
	p := plan.Plan{
		Arms: arm.ClientKinds.Arms([]string{replica.None}, replica.FullPatch(cfg)), Trigger: "slowdb",
		Triggers: TriggerOptions("slowdb_latency", "500ms", "slowdb_for", "3s"),
		HotKeys:  100, Keys: 100, Zipf: 1.1, Rate: 20, Clients: 10, Retry: four,
		Timeout: herd.Duration(300 * time.Millisecond), Warmup: herd.Duration(time.Second),
		Before: herd.Duration(3 * time.Second), After: herd.Duration(60 * time.Second), AfterAuto: true, Seed: 7,
		Escape: &verdict.Escape{Shares: verdict.DefaultEscape.Shares, Limit: herd.Duration(limit)},
	}
	reg := prometheus.NewRegistry()
	steps := &stepsScraped{reg: reg}
	rep, err := Run(context.Background(), p, Env{Target: tg.Target, Subject: tg, Observer: Observers{livemetrics.NewMetrics(reg), steps}})
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Arms[0]
	e := a.Escape
	defer steps.areTheResults(t, a)
	for _, s := range e.Steps {
		t.Logf("step %g req/s from T%+.1fs to T%+.1fs: offered %g/s, goodput %g/s, attempts %g/s, db %g q/s: %s (back after %v ms)",
			s.RPS, float64(s.StartMS)/1000, float64(s.EndMS)/1000, s.OfferedRPS, s.GoodputRPS, s.AttemptsRPS, s.DBQPS, s.Read, intOf(s.RecoveryMS))
	}
	t.Logf("verdict %s, held by %q, depth %v, settle %v ms; escape from %g req/s at %v ms: %v req/s, share %v",
		a.Verdict, heldByOf(a), floatOf(a.Depth), intOf(a.SettleMS), e.FromRPS, intOf(e.StartMS), floatOf(e.RPS), floatOf(e.Share))
	if a.Verdict != result.Metastable || e.StartMS == nil || len(e.Steps) < 2 {
		t.Fatalf("verdict %s, escape from %v ms with %d steps; want metastable, stepped down at least twice", a.Verdict, intOf(e.StartMS), len(e.Steps))
	}
	if settled := *a.Trigger.EndedMS + *a.SettleMS; *e.StartMS < settled {
		t.Errorf("escape began at T+%d ms; want no sooner than the trigger's end and the settle time, T+%d ms", *e.StartMS, settled)
	}
	if s := e.Steps[0]; s.Read != result.StepStuck || s.RPS != 15 {
		t.Errorf("first step %g req/s read %s; want 15 req/s (75%%) stuck: over the capacity with its retries", s.RPS, s.Read)
	}
	if e.RPS == nil || e.Share == nil || *e.Share > 0.5 || *e.RPS != *e.Share*20 {
		t.Errorf("escape load %v req/s, share %v; want one at 50%% of the 20 req/s that tipped it or less", floatOf(e.RPS), floatOf(e.Share))
	}
	for i, s := range e.Steps {
		// A step holds a whole number of requests: the last one, cut where
		// the service is back, can be 2.4 s at 2 req/s (4 or 5 of them), so
		// the rate is allowed 10% or one request either way, whichever is more.
		secs := float64(s.EndMS-s.StartMS) / 1000
		if tol := math.Max(0.1*s.RPS, 1/secs); math.Abs(s.OfferedRPS-s.RPS) > tol {
			t.Errorf("step %d: offered %g req/s over its %.1f s; want its rate %g within %.2f (10%% or one request): the stepped schedule's requests", i, s.OfferedRPS, secs, s.RPS, tol)
		}
		if s.StartMS%result.RowWidth.Milliseconds() != 0 || (i > 0 && s.StartMS < e.Steps[i-1].StartMS+limit.Milliseconds()) {
			t.Errorf("step %d began at T+%d ms; want a row's edge, at least the %s limit after the step before", i, s.StartMS, limit)
		}
	}
	if last := e.Steps[len(e.Steps)-1]; last.Read != result.StepRecovered || a.Loop == nil || a.Loop.HeldBy == "" {
		t.Errorf("last step read %s, loop %+v; want recovered (the arm ends there), and the loop of the stuck rows naming what held it", last.Read, a.Loop)
	}
}

// stepsScraped reads the live metrics' escape series each time a step is
// scheduled, after the metrics took it (Observers calls them in order).
type stepsScraped struct {
	reg    *prometheus.Registry
	mu     sync.Mutex
	rps    []float64   // herdbench_escape_step_rps as each step was scheduled
	begins []time.Time // the instant each step begins, as told
}

func (*stepsScraped) Arm(string, bool)                    {}
func (*stepsScraped) Request(string, string, load.Record) {}
func (*stepsScraped) Trigger(string, time.Time)           {}

func (s *stepsScraped) EscapeStep(arm string, _ int, _ float64, begins time.Time) {
	v, _ := gathered(s.reg, "herdbench_escape_step_rps", arm)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rps, s.begins = append(s.rps, v), append(s.begins, begins)
}

// areTheResults checks the escape's live series against a's results: the
// rate each step was scraped at, its instant, and the escape load.
func (s *stepsScraped) areTheResults(t *testing.T, a result.ArmResult) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rps) != len(a.Escape.Steps) {
		t.Fatalf("herdbench_escape_step_rps took %v; want the results' %d steps", s.rps, len(a.Escape.Steps))
	}
	for i, st := range a.Escape.Steps {
		if at := a.T.Add(time.Duration(st.StartMS) * time.Millisecond); s.rps[i] != st.RPS || !s.begins[i].Equal(at) {
			t.Errorf("step %d: herdbench_escape_step_rps %g, told to begin at T%+v; want the results' %g at T%+v", i, s.rps[i], s.begins[i].Sub(a.T), st.RPS, at.Sub(a.T))
		}
	}
	v, ok := gathered(s.reg, "herdbench_escape_rps", a.Name)
	if got := a.Escape.RPS; (got != nil) != ok || (ok && v != *got) {
		t.Errorf("herdbench_escape_rps = %g (present %v); want the results' escape.rps %v", v, ok, floatOf(got))
	}
}

// gathered is metric's value for arm in reg, and whether it has one.
func gathered(reg *prometheus.Registry, metric, arm string) (float64, bool) {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "arm" && l.GetValue() == arm {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

func floatOf(v *float64) any {
	if v == nil {
		return "null"
	}
	return *v
}

func intOf(v *int64) any {
	if v == nil {
		return "null"
	}
	return *v
}

func heldByOf(a result.ArmResult) string {
	if a.Loop == nil {
		return ""
	}
	return a.Loop.HeldBy
}
