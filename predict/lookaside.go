package predict

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/model"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/sweep"
)

// LookAsideRuns are the model's runs a probe, each its own draw of keys,
// the majority deciding (docs/metastability.md, "The look-aside cache's
// herd": 15 where a sweep's probe is the majority of up to 3, as the
// model's runs cost milliseconds).
const LookAsideRuns = 15

// LookAsideOf maps an expire plan p on the testbed, the runs of one of
// its arms and the testbed's pools to the look-aside model's inputs, each
// with its source; a *Refusal when the model does not cover the arm.
func LookAsideOf(p plan.Plan, runs []result.ArmResult, pools *Pools) (model.LookAside, []sweep.Input, error) {
	return lookAsideOf(p, runs, nil, pools)
}

// lookAsideOf is LookAsideOf with the reconnect the least measured over
// runs and others (the same run's other arms: the same pools): how often
// a stuck pool reopens a connection bounds a reconnect's cost from above,
// and an arm whose loads are fewer (singleflight) cuts fewer queries, so
// its own figure is the looser bound, or none when it never tipped.
func lookAsideOf(p plan.Plan, runs []result.ArmResult, others []result.ArmResult, pools *Pools) (model.LookAside, []sweep.Input, error) {
	var list []sweep.Input
	add := func(name string, v float64, unit, source string) {
		list = append(list, sweep.Input{Name: name, Value: v, Unit: unit, Source: source})
	}
	switch {
	case p.Trigger != "expire":
		return model.LookAside{}, nil, refuse("the look-aside model's trigger is expire; this one is %s", p.Trigger)
	case pools == nil:
		return model.LookAside{}, nil, refuse("the service's database pools and their deadline are unknown: herdbench reads them on the testbed only")
	case pools.Connections <= 0 || pools.DBTimeout <= 0 || pools.Replicas <= 0:
		return model.LookAside{}, nil, refuse("a replica's /healthz did not say its db_pool or db_timeout_ms (a testbed started before it did: restart it)")
	case len(runs) == 0:
		return model.LookAside{}, nil, missing("no run of the arm to read its config and clients from")
	}
	r0 := runs[0]
	if err := noRetries(r0.Clients); err != nil {
		return model.LookAside{}, nil, err
	}
	var cfg replicaConfig
	if err := json.Unmarshal(r0.Config, &cfg); len(r0.Config) == 0 || err != nil {
		return model.LookAside{}, nil, missing("the arm's run has no replicas' config (arms[].config) to read its query cost from")
	}
	switch {
	case cfg.Strategy != model.LookAsideNone && cfg.Strategy != model.LookAsideSingleflight && cfg.Strategy != model.LookAsideLock:
		return model.LookAside{}, nil, refuse("strategy %s: the look-aside model's are none, singleflight and lock", cfg.Strategy)
	case cfg.DBRetry.Kind != "" && cfg.DBRetry.Kind != retry.None:
		return model.LookAside{}, nil, refuse("db_retry %s: the replicas' own retries are not modelled", cfg.DBRetry)
	case r0.Edge != nil:
		return model.LookAside{}, nil, refuse("a second tier (edge replicas): not modelled")
	}
	la := model.LookAside{Rate: float64(p.Rate), Keys: p.Keys, Zipf: p.Zipf, Replicas: pools.Replicas,
		Pool: pools.Connections / pools.Replicas, Cost: time.Duration(cfg.QueryCost), DBTimeout: pools.DBTimeout,
		Timeout: time.Duration(p.Timeout), Canceled: cfg.AbandonedLoad == "canceled", Strategy: cfg.Strategy,
		Horizon: time.Duration(p.After), Runs: LookAsideRuns, Seed: p.Seed}
	add("rate", la.Rate, "req/s", "plan.rate")
	add("keys", float64(la.Keys), "count", "plan.keys")
	add("zipf", la.Zipf, "exponent", "plan.zipf")
	add("timeout", ms(la.Timeout), "ms", "plan.timeout")
	add("replicas", float64(la.Replicas), "count", "the replicas that answered /healthz")
	poolSource, deadlineSource := pools.sources("db_pool of each replica's /healthz")
	if pools.PoolSource != "" {
		poolSource += fmt.Sprintf(", over the %d replicas", la.Replicas)
	}
	add("pool", float64(la.Pool), "connections", poolSource)
	add("work", ms(la.Cost), "ms", "the arm's config.query_cost")
	add("deadline", ms(la.DBTimeout), "ms", deadlineSource)
	canceled := 0.0
	if la.Canceled {
		canceled = 1
	}
	add("canceled", canceled, "bool", "the arm's config.abandoned_load: "+cfg.AbandonedLoad)
	add("horizon", ms(la.Horizon), "ms", "plan.after")
	if least := la.Settle() + model.VerdictBand.Hold; la.Horizon < least {
		return la, list, refuse("--after %v is shorter than the verdict's settle time and a hold (%v): the model judges a run as the verdict does, and could not call it stuck (accepted: --after %v or more, or auto:%v)", la.Horizon, least, least, least)
	}
	reconnect, n := reconnectOf(runs, pools)
	source := fmt.Sprintf("the pools' connections / loop.new_conns_rps.after, the median of the %d runs that did not recover", n)
	for _, o := range others {
		// each figure is an upper bound on a reconnect's cost (the time
		// between two openings of one connection, a reconnect and the
		// cut query's own run among it), tightest where the most
		// queries were cut: the least of the run's arms, the same pools
		if r, m := reconnectOf(runsOf(o), pools); m > 0 && (n == 0 || r < reconnect) {
			reconnect, n = r, m
			source = fmt.Sprintf("the pools' connections / loop.new_conns_rps.after, the median of the %d runs of arm %s that did not recover (lent: the same pools, the least of the run's arms)", m, o.Name)
		}
	}
	if n == 0 {
		return la, list, missing("no run of the arm tipped, so none measured how fast a stuck pool reopens its connections (loop.new_conns_rps.after): a run whose expiry tips it does (more --hot-keys, or a sweep whose TO tips it)")
	}
	la.Reconnect = time.Duration(reconnect * float64(time.Second)).Round(time.Millisecond)
	add("reconnect", ms(la.Reconnect), "ms", source)
	return la, list, la.Check()
}

// LookAsidePrediction is the look-aside model's answer for an expire
// run's arm: whether the expiry of its hot keys tips it (the majority of
// LookAsideRuns runs), the recovery from T when it does not (their
// median, as the arm's recovery_ms: expire's fault ends at T), and the
// fewest hot keys whose expiry tips it.
type LookAsidePrediction struct {
	HotKeys    int
	Tips       bool
	RecoveryMS *int64
	// TippingHotKeys: nil when not even every key's expiry tips it, or
	// not looked for (Expect)
	TippingHotKeys *int
	// EscapeRPS: the highest step of the plan's --escape (on's when it
	// had none) at which the model's runs stuck at the run's hot keys
	// come back, their median (0: none down to the last step); nil when
	// the model does not stick there, or not looked for (Expect)
	EscapeRPS *float64
}

// predictLookAside predicts arm i of an expire run's arms by the
// look-aside model, its reconnect the least of the run's arms'
// (lookAsideOf); its tipping point and escape too when tipping is set (a
// bisection of some 150 model runs and 15 escapes, which Expect leaves
// out).
func predictLookAside(p plan.Plan, arms []result.ArmResult, i int, pools *Pools, tipping bool) (ArmPrediction, string) {
	a := arms[i]
	ap := ArmPrediction{Name: a.Name, Verdict: a.Verdict, RecoveryMS: a.RecoveryMS, Escape: a.Escape}
	others := append(slices.Clone(arms[:i]), arms[i+1:]...)
	la, list, err := lookAsideOf(p, runsOf(a), others, pools)
	ap.Inputs = list
	if problem, stop := refusal(&ap, err); stop {
		return ap, problem
	}
	ap.Inputs = append(ap.Inputs, sweep.Input{Name: "hot keys", Value: float64(p.HotKeys), Unit: "count", Source: "plan.hot_keys"})
	tips, back, _ := la.Probe(p.HotKeys)
	lp := &LookAsidePrediction{HotKeys: p.HotKeys, Tips: tips}
	if !tips {
		ms := back.Milliseconds()
		lp.RecoveryMS = &ms
	}
	if tipping {
		tip, found, err := la.TippingPoint()
		if err != nil {
			return ap, fmt.Sprintf("the model cannot run on its inputs: %v", err)
		}
		if found {
			lp.TippingHotKeys = &tip
		}
		esc, source := verdict.DefaultEscape, "--escape on's (the plan had none)"
		if p.Escape != nil {
			esc, source = *p.Escape, "plan.escape"
		}
		ap.Inputs = append(ap.Inputs, sweep.Input{Name: "escape steps", Value: float64(len(esc.Shares)), Unit: "steps",
			Source: fmt.Sprintf("%s: %s of the rate, each up to %v", source, percents(esc.Shares), time.Duration(esc.Limit))})
		if share := la.EscapeProbe(p.HotKeys, esc.Shares, time.Duration(esc.Limit)); share != nil {
			rps := *share * la.Rate
			lp.EscapeRPS = &rps
		}
	}
	ap.LookAside = lp
	return ap, ""
}

// reconnectOf is the median, over the runs that did not recover, of how
// long a stuck pool takes to reopen a connection: its connections over
// the new ones a second after T; n is how many runs it read.
func reconnectOf(runs []result.ArmResult, pools *Pools) (float64, int) {
	return median(runs, func(r result.ArmResult) (float64, bool) {
		if r.Verdict == result.Recovered || r.Loop == nil || r.Loop.Counts["new_conns"] == nil {
			return 0, false
		}
		if after := r.Loop.Counts["new_conns"].After; after > 0 {
			return float64(pools.Connections) / after, true
		}
		return 0, true // no connection reopened: a query cut costs none
	})
}

// runsOf is an arm's runs: its repeats, or the arm itself.
func runsOf(a result.ArmResult) []result.ArmResult {
	if len(a.Runs) == 0 {
		return []result.ArmResult{a}
	}
	return a.Runs
}

// percents writes shares as --escape does: 75%,50%.
func percents(shares []float64) string {
	out := make([]string, len(shares))
	for i, sh := range shares {
		out[i] = fmt.Sprintf("%g%%", 100*sh)
	}
	return strings.Join(out, ",")
}

// noRetries refuses clients the look-aside model does not have: it sends
// each request once.
func noRetries(c arm.Clients) error {
	switch {
	case c.Retry.Kind != "" && c.Retry.Kind != retry.None:
		return refuse("retry %s: the look-aside model's clients send each request once", c.Retry)
	case c.Throttle > 0 || c.Breaker.Failures > 0 || c.Hedge.Delay > 0:
		return refuse("a client policy (throttle, breaker or hedge): not modelled")
	}
	return nil
}

// lookAsideArm is a hot_keys sweep's arm beside the look-aside model's
// tipping point.
func lookAsideArm(res *sweep.Results, runs []result.ArmResult, pools *Pools, p *sweep.Predicted) *sweep.Predicted {
	la, list, err := LookAsideOf(res.Plan, runs, pools)
	p.Inputs = list
	if err != nil {
		p.Note = noteOf(err)
		return p
	}
	tip, found, err := la.TippingPoint()
	switch {
	case err != nil:
		p.Note = "the model refused its inputs: " + err.Error()
		return p
	case !found || float64(tip) > res.Vary.To:
		p.State, p.Text = sweep.PredictedNone, "none"
		return p
	}
	v := float64(tip)
	p.State, p.Value, p.Text = sweep.PredictedFound, &v, sweep.Format(v, res.Vary.Unit)
	return p
}
