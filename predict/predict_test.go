package predict

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/model"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/triggers"
)

// The testbed's retry storm of docs/metastability.md: 3 replicas of 10
// connections at 50 ms a query, a 5 s db-timeout, 300 req/s with a 1 s
// timeout retrying 4 times at once, slowdb 500 ms swept 250ms..8s.
var stormPools = &Pools{Replicas: 3, Connections: 30, DBTimeout: 5 * time.Second}

const stormConfig = `{"strategy":"none","ttl":"10ms","query_cost":"50ms","abandoned_load":"detached","db_retry":"none"}`

func stormPlan(t *testing.T) plan.Plan {
	t.Helper()
	reg := triggers.Default()
	if err := reg.Set("slowdb_latency", "500ms"); err != nil {
		t.Fatal(err)
	}
	return plan.Plan{Arms: []arm.Arm{{Name: "none"}}, Trigger: "slowdb", Triggers: reg, Rate: 300,
		Timeout: herd.Duration(time.Second), Before: herd.Duration(3 * time.Second), After: herd.Duration(20 * time.Second),
		Retry: retry.Policy{Kind: retry.Immediate, Retries: 4}}
}

// stormRun is one run as the results hold it: the before window's
// attempts all reaching Postgres (0.86 a query, as measured), and, when
// it did not recover, Postgres at 30 q/s after the fault.
func stormRun(verdict string, clients arm.Clients) result.ArmResult {
	r := result.ArmResult{Name: "none", Config: json.RawMessage(stormConfig), Clients: clients, Verdict: verdict,
		DB:      &result.DB{BaselineQPS: 258},
		Windows: &result.Windows{Before: &result.Window{OfferedRPS: 300, AttemptsRPS: 300, GoodputRPS: 300}},
		Loop:    &result.Loop{DBQPS: &result.LoopFigure{Before: 258, After: 600}}}
	if verdict != result.Recovered {
		r.Loop.DBQPS.After = 30
	}
	return r
}

var immediate4 = arm.Clients{Count: 1, Retry: retry.Policy{Kind: retry.Immediate, Retries: 4}}

// stormSweep is a bisection of slowdb_for whose arm measured tip (ms)
// from two probes: one survived, one tipped.
func stormSweep(t *testing.T, clients arm.Clients, tip float64) *sweep.Results {
	t.Helper()
	lo := 1414.0
	a := sweep.ArmSweep{Name: "none", Tipping: &sweep.Tipping{State: sweep.TipFound, Value: &tip, Unit: sweep.Milliseconds, Text: sweep.Format(tip, sweep.Milliseconds)},
		Bracket: &sweep.Bracket{Survived: &lo, Tipped: &tip, Unit: sweep.Milliseconds},
		Probed: []sweep.Probe{
			{Runs: []sweep.Run{{Verdict: result.Recovered, Result: stormRun(result.Recovered, clients)}}},
			{Tipped: true, Runs: []sweep.Run{{Verdict: result.Metastable, Result: stormRun(result.Metastable, clients)}}},
		}}
	return &sweep.Results{Vary: &sweep.Axis{Name: Axis, From: 250, To: 8000, Unit: sweep.Milliseconds}, Plan: stormPlan(t), Arms: []sweep.ArmSweep{a}}
}

// The mapping reads each input from where the docs say: the pools from
// the replicas, the query cost from the arm's config, the clients from
// its run, the rate, timeout and latency from the plan, the stuck
// capacity from the runs that did not recover; and the prediction is the
// model's on those inputs, beside the sweep's 1.756 s.
func TestTheMappingReadsTheRetryStorm(t *testing.T) {
	res := stormSweep(t, immediate4, 1756)
	var runs []result.ArmResult
	for _, p := range res.Arms[0].Probed {
		runs = append(runs, p.Runs[0].Result)
	}
	in, err := Of(res.Plan, runs, stormPools, 8*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantS := model.Service{Workers: 30, Work: 50 * time.Millisecond, Deadline: 5 * time.Second, Stuck: 30}
	wantC := model.Clients{Rate: 300, Timeout: time.Second, Retries: 4}
	if in.Service != wantS || in.Clients != wantC || in.Slower != 500*time.Millisecond {
		t.Errorf("inputs %+v, %+v, slower %v; want %+v, %+v, 500ms", in.Service, in.Clients, in.Slower, wantS, wantC)
	}
	if o := in.Options; o.Lead != 3*time.Second || o.Horizon != 20*time.Second || o.MaxFault != 8*time.Second || o.DBPerAttempt != 0.86 {
		t.Errorf("options %+v; want the plan's before (3s) and after (20s), the axis' TO (8s), and the runs' 0.86 queries an attempt", o)
	}
	got := map[string]sweep.Input{}
	for _, i := range in.List {
		if i.Source == "" || i.Unit == "" {
			t.Errorf("input %+v: want a unit and a source", i)
		}
		got[i.Name] = i
	}
	for name, v := range map[string]float64{"workers": 30, "work": 50, "capacity": 600, "deadline": 5000, "rate": 300, "timeout": 1000,
		"retries": 4, "budget": 0, "slower": 500, "db_per_attempt": 0.86, "stuck": 30} {
		if i, ok := got[name]; !ok || i.Value != v {
			t.Errorf("input %s = %+v (listed %v); want %v", name, i, ok, v)
		}
	}
	Sweep(res, stormPools)
	p := res.Arms[0].Predicted
	tip, ok := model.ShortestTip(wantS, wantC, model.Fault{Slower: 500 * time.Millisecond}, in.Options)
	if p == nil || !ok || p.State != sweep.PredictedFound || p.Value == nil || *p.Value != float64(tip.Milliseconds()) {
		t.Fatalf("predicted %+v; want found at the model's %v", p, tip)
	}
	if p.VsMeasured == nil || *p.VsMeasured != round(*p.Value/1756-1, 3) || p.Text != sweep.Format(*p.Value, sweep.Milliseconds) {
		t.Errorf("predicted %+v; want its text and its distance from the measured 1.756 s", p)
	}
}

// A budget and full jitter map to the model's; a budget tips later
// than no budget, as the sweeps measured (docs/metastability.md).
func TestBudgetAndJitterMap(t *testing.T) {
	jitter := immediate4
	jitter.Retry = retry.Policy{Kind: retry.FullJitter, Retries: 4, Base: 100 * time.Millisecond, Cap: 2 * time.Second}
	budget := immediate4
	budget.Budget = retry.Budget{Kind: "ratio", Ratio: 0.1}
	for _, c := range []struct {
		clients arm.Clients
		want    model.Clients
	}{
		{jitter, model.Clients{Rate: 300, Timeout: time.Second, Retries: 4, Backoff: model.Backoff{Base: 100 * time.Millisecond, Cap: 2 * time.Second, Jitter: true}}},
		{budget, model.Clients{Rate: 300, Timeout: time.Second, Retries: 4, Budget: 0.1}},
	} {
		in, err := Of(stormPlan(t), []result.ArmResult{stormRun(result.Metastable, c.clients)}, stormPools, 8*time.Second)
		if err != nil || in.Clients != c.want {
			t.Errorf("clients %+v: mapped to %+v, %v; want %+v", c.clients, in.Clients, err, c.want)
		}
	}
	none, withBudget := stormSweep(t, immediate4, 1756), stormSweep(t, budget, 6442)
	Sweep(none, stormPools)
	Sweep(withBudget, stormPools)
	if a, b := none.Arms[0].Predicted, withBudget.Arms[0].Predicted; a.Value == nil || b.Value == nil || *b.Value <= 2**a.Value {
		t.Errorf("predicted %s without a budget, %s with one; want the budget's much later", a.Text, b.Text)
	}
}

// An arm the model does not cover is refused with the reason, and no
// number: never a wrong one.
func TestArmsTheModelDoesNotCoverAreRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*sweep.Results, **Pools)
		want string
	}{
		{"throttle", func(r *sweep.Results, _ **Pools) { setClients(r, func(c *arm.Clients) { c.Throttle = 2 }) }, "adaptive throttling"},
		{"breaker", func(r *sweep.Results, _ **Pools) {
			setClients(r, func(c *arm.Clients) { c.Breaker = retry.Breaker{Failures: 5, Open: 2 * time.Second} })
		}, "client breaker"},
		{"hedge", func(r *sweep.Results, _ **Pools) {
			setClients(r, func(c *arm.Clients) { c.Hedge = retry.Hedge{Delay: 50 * time.Millisecond} })
		}, "hedging"},
		{"tokens", func(r *sweep.Results, _ **Pools) {
			setClients(r, func(c *arm.Clients) { c.Budget = retry.Budget{Kind: "tokens", Tokens: 10} })
		}, "tokens retry budget"},
		{"decorrelated", func(r *sweep.Results, _ **Pools) {
			setClients(r, func(c *arm.Clients) {
				c.Retry = retry.Policy{Kind: retry.Decorrelated, Retries: 3, Base: time.Millisecond, Cap: time.Second}
			})
		}, "retry decorrelated"},
		{"lock", func(r *sweep.Results, _ **Pools) { setConfig(r, "none", "lock") }, "strategy lock"},
		{"canceled", func(r *sweep.Results, _ **Pools) { setConfig(r, `"detached"`, `"canceled"`) }, "abandoned_load canceled"},
		{"db_retry", func(r *sweep.Results, _ **Pools) { setConfig(r, `"db_retry":"none"`, `"db_retry":"immediate:2"`) }, "db_retry"},
		{"a service", func(_ *sweep.Results, p **Pools) { *p = nil }, "on the testbed only"},
		{"an old replica", func(_ *sweep.Results, p **Pools) { *p = &Pools{Replicas: 3} }, "db_pool"},
		{"burst", func(r *sweep.Results, _ **Pools) { r.Vary.Name = "burst" }, "this sweep varies burst"},
		{"expire", func(r *sweep.Results, _ **Pools) { r.Plan.Trigger = "expire" }, "this trigger is expire"},
		{"a cache", func(r *sweep.Results, _ **Pools) { eachRun(r, func(a *result.ArmResult) { a.DB.BaselineQPS = 30 }) }, "the cache answers most attempts"},
		{"no tip", func(r *sweep.Results, _ **Pools) {
			eachRun(r, func(a *result.ArmResult) { a.Verdict = result.Recovered })
		}, "no run of the arm tipped"},
	} {
		res, pools := stormSweep(t, immediate4, 1756), stormPools
		c.edit(res, &pools)
		Sweep(res, pools)
		p := res.Arms[0].Predicted
		if p == nil || p.State != sweep.PredictedRefused || p.Value != nil || p.VsMeasured != nil || p.Text != "not modelled" || !strings.Contains(p.Note, c.want) {
			t.Errorf("%s: predicted %+v; want refused, no number, a note naming %q", c.name, p, c.want)
		}
	}
}

// A grid has no tipping point, and no prediction.
func TestAGridHasNoPrediction(t *testing.T) {
	res := stormSweep(t, immediate4, 1756)
	res.Vary, res.Grid = nil, []sweep.GridAxis{{Name: "rate", Values: []float64{300}, Unit: sweep.Count}}
	Sweep(res, stormPools)
	if p := res.Arms[0].Predicted; p != nil {
		t.Errorf("a grid's arm predicted %+v; want none", p)
	}
}

func eachRun(r *sweep.Results, f func(*result.ArmResult)) {
	for i := range r.Arms[0].Probed {
		for j := range r.Arms[0].Probed[i].Runs {
			f(&r.Arms[0].Probed[i].Runs[j].Result)
		}
	}
}

func setClients(r *sweep.Results, f func(*arm.Clients)) {
	eachRun(r, func(a *result.ArmResult) { f(&a.Clients) })
}

func setConfig(r *sweep.Results, old, new string) {
	eachRun(r, func(a *result.ArmResult) { a.Config = json.RawMessage(strings.Replace(stormConfig, old, new, 1)) })
}
