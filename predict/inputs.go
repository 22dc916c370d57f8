package predict

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/herdbench/herdbench/experiment/plan"
	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/model"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/sweep"
	"github.com/herdbench/herdbench/triggers"
)

// Pools are what no run's results hold of the testbed: its replicas'
// database pools and their deadline, each replica's own /healthz
// answer (db_pool, db_timeout_ms).
type Pools struct {
	Replicas    int
	Connections int           // over every replica
	DBTimeout   time.Duration // the longest replica's
	// PoolSource and DeadlineSource say where Connections and DBTimeout
	// were read, for the inputs' list; empty: the replicas' own /healthz
	PoolSource, DeadlineSource string
}

// sources are where Connections and DBTimeout were read: PoolSource and
// DeadlineSource, or the replicas' own /healthz (pool, and its
// db_timeout_ms, the longest).
func (p *Pools) sources(pool string) (string, string) {
	deadline := "db_timeout_ms of the replicas' /healthz, the longest"
	if p.PoolSource != "" {
		pool = p.PoolSource
	}
	if p.DeadlineSource != "" {
		deadline = p.DeadlineSource
	}
	return pool, deadline
}

// MinDBPerAttempt is the share of the clients' attempts that must reach
// the database before the trigger (db.baseline_qps over the before
// window's attempts_rps): the model is the pool's, and a cache that
// answers most attempts is another loop.
const MinDBPerAttempt = 0.5

// Inputs are the model's inputs for one arm, each with its source.
type Inputs struct {
	Service model.Service
	Clients model.Clients
	Slower  time.Duration // the fault: slowdb's latency on every reply
	Options model.Options
	List    []sweep.Input
}

// Refusal says why the model does not cover an arm. Missing: the arm is
// one the model covers, but its runs lack a figure or setting it needs,
// and Why names it and the run that would measure it (herdbench model
// exits 2 on it; a sweep shows it as any refusal).
type Refusal struct {
	Why     string
	Missing bool
}

func (r *Refusal) Error() string { return r.Why }

func refuse(format string, args ...any) error { return &Refusal{Why: fmt.Sprintf(format, args...)} }

func missing(format string, args ...any) error {
	return &Refusal{Why: fmt.Sprintf(format, args...), Missing: true}
}

// replicaConfig is what the mapping reads of an arm's config
// (arms[].config: the testbed replicas' own).
type replicaConfig struct {
	Strategy      string        `json:"strategy"`
	QueryCost     herd.Duration `json:"query_cost"`
	AbandonedLoad string        `json:"abandoned_load"`
	DBRetry       retry.Policy  `json:"db_retry"`
}

// Of maps a slowdb plan p, the runs of one of its arms (every run at any
// magnitude: each is read for what does not change with it) and the
// testbed's pools (nil: not the testbed) to the model's inputs, up to a
// fault of maxFault; a *Refusal when the model does not cover the arm.
func Of(p plan.Plan, runs []result.ArmResult, pools *Pools, maxFault time.Duration) (Inputs, error) {
	var in Inputs
	add := func(name string, v float64, unit, source string) {
		in.List = append(in.List, sweep.Input{Name: name, Value: v, Unit: unit, Source: source})
	}
	if p.Trigger != "slowdb" {
		return in, refuse("the models' faults are slowdb's (the retry storm's model) and expire's (the look-aside model's); this trigger is %s", p.Trigger)
	}
	if pools == nil {
		return in, refuse("the service's database pools and their deadline are unknown: herdbench reads them on the testbed only")
	}
	if pools.Connections <= 0 || pools.DBTimeout <= 0 {
		return in, refuse("a replica's /healthz did not say its db_pool or db_timeout_ms (a testbed started before it did: restart it)")
	}
	if len(runs) == 0 {
		return in, missing("no run of the arm to read its config and clients from")
	}
	r0 := runs[0]
	if err := clientsOf(&in, r0, p); err != nil {
		return in, err
	}
	var cfg replicaConfig
	if err := json.Unmarshal(r0.Config, &cfg); len(r0.Config) == 0 || err != nil {
		return in, missing("the arm's run has no replicas' config (arms[].config) to read its query cost from")
	}
	switch {
	case cfg.Strategy != "none":
		return in, refuse("strategy %s: the model is plain cache-aside (none)", cfg.Strategy)
	case cfg.AbandonedLoad != "detached":
		return in, refuse("abandoned_load %s: the model's loads run on once their client gave up (detached)", cfg.AbandonedLoad)
	case cfg.DBRetry.Kind != "" && cfg.DBRetry.Kind != retry.None:
		return in, refuse("db_retry %s: the replicas' own retries are not modelled", cfg.DBRetry)
	case r0.Edge != nil:
		return in, refuse("a second tier (edge replicas): not modelled")
	}
	in.Service = model.Service{Workers: float64(pools.Connections), Work: time.Duration(cfg.QueryCost), Deadline: pools.DBTimeout}
	poolSource, deadlineSource := pools.sources(fmt.Sprintf("db_pool of each replica's /healthz, summed over %d", pools.Replicas))
	add("workers", in.Service.Workers, "connections", poolSource)
	add("work", ms(in.Service.Work), "ms", "the arm's config.query_cost")
	add("capacity", in.Service.Capacity(), "q/s", "workers / work")
	if !(in.Service.Work > 0) {
		return in, missing("config.query_cost %v: a capacity of 0 serves nothing, and the model needs the run's own (a run whose query_cost is above 0)", in.Service.Work)
	}
	add("deadline", ms(pools.DBTimeout), "ms", deadlineSource)
	share, n := median(runs, func(r result.ArmResult) (float64, bool) {
		if r.DB == nil || r.Windows == nil || r.Windows.Before == nil || r.Windows.Before.AttemptsRPS <= 0 {
			return 0, false
		}
		return r.DB.BaselineQPS / r.Windows.Before.AttemptsRPS, true
	})
	if n == 0 {
		return in, missing("no run measured the database's queries beside the attempts before the trigger (db.baseline_qps, windows.before): a run on the testbed measures them")
	}
	if share < MinDBPerAttempt {
		return in, refuse("%.2f database queries an attempt before the trigger: the cache answers most attempts, and the model is the pool's (it needs %.1f)", share, MinDBPerAttempt)
	}
	share = round(share, 2)
	add("db_per_attempt", share, "queries", fmt.Sprintf("db.baseline_qps / windows.before.attempts_rps, the median of %d runs (checked; the verdict's band is around the q/s it gives)", n))
	if err := stuckOf(&in, runs); err != nil {
		return in, err
	}
	in.Options = model.DefaultOptions
	in.Options.Lead, in.Options.Horizon, in.Options.MaxFault = time.Duration(p.Before), time.Duration(p.After), maxFault
	in.Options.DBPerAttempt = share
	return in, model.Check(in.Service, in.Clients, model.Fault{Slower: in.Slower})
}

// clientsOf reads the clients and the fault: the rate, timeout and
// latency from the plan, the policies from what the arm's run used.
func clientsOf(in *Inputs, r result.ArmResult, p plan.Plan) error {
	c := r.Clients
	switch {
	case c.Throttle > 0:
		return refuse("adaptive throttling (throttle=%v): not modelled", c.Throttle)
	case c.Breaker.Failures > 0:
		return refuse("a client breaker (%s): not modelled", c.Breaker)
	case c.Hedge.Delay > 0:
		return refuse("hedging (%s): not modelled", c.Hedge)
	case c.Budget.Kind != "" && c.Budget.Kind != "ratio":
		return refuse("a %s retry budget: the model's is a ratio of the requests", c.Budget.Kind)
	}
	m := model.Clients{Rate: float64(p.Rate), Timeout: time.Duration(p.Timeout)}
	switch c.Retry.Kind {
	case "", retry.None:
	case retry.Immediate:
		m.Retries = c.Retry.Retries
	case retry.Exp, retry.FullJitter:
		m.Retries = c.Retry.Retries
		m.Backoff = model.Backoff{Base: c.Retry.Base, Cap: c.Retry.Cap, Jitter: c.Retry.Kind == retry.FullJitter}
	default:
		return refuse("retry %s: the model's backoffs are none, immediate, exp and full-jitter", c.Retry)
	}
	if c.Budget.Kind == "ratio" {
		m.Budget = c.Budget.Ratio
	}
	in.Clients = m
	list := []sweep.Input{
		{Name: "rate", Value: m.Rate, Unit: "req/s", Source: "plan.rate"},
		{Name: "timeout", Value: ms(m.Timeout), Unit: "ms", Source: "plan.timeout"},
		{Name: "retries", Value: float64(m.Retries), Unit: "count", Source: "the arm's clients.retry: " + c.Retry.String()},
		{Name: "backoff_base", Value: ms(m.Backoff.Base), Unit: "ms", Source: "the arm's clients.retry"},
		{Name: "backoff_cap", Value: ms(m.Backoff.Cap), Unit: "ms", Source: "the arm's clients.retry"},
		{Name: "budget", Value: m.Budget, Unit: "ratio", Source: "the arm's clients.retry_budget: " + c.Budget.String()},
	}
	slow, ok := p.ChosenTrigger().(triggers.Slowdown)
	if !ok {
		return missing("the plan has no slowdb trigger to read its latency from (plan.trigger_options.slowdb_latency)")
	}
	in.Slower, _ = slow.Slowdown()
	list = append(list, sweep.Input{Name: "slower", Value: ms(in.Slower), Unit: "ms", Source: "plan.trigger_options.slowdb_latency"})
	in.List = append(in.List, list...)
	return nil
}

// stuckOf reads the stuck state's capacity: what Postgres completed a
// second after the trigger's end in the arm's runs that did not recover.
func stuckOf(in *Inputs, runs []result.ArmResult) error {
	v, n := median(runs, func(r result.ArmResult) (float64, bool) {
		if r.Verdict == result.Recovered || r.Loop == nil || r.Loop.DBQPS == nil {
			return 0, false
		}
		return r.Loop.DBQPS.After, true
	})
	if n == 0 {
		return missing("no run of the arm tipped, so none measured the stuck state's capacity (loop.db_qps.after): a run whose fault tips it does (a longer --slowdb-for, or a sweep whose TO tips it)")
	}
	add := sweep.Input{Name: "stuck", Value: round(v, 1), Unit: "q/s",
		Source: fmt.Sprintf("loop.db_qps.after, the median of the %d runs that did not recover", n)}
	in.List = append(in.List, add)
	// the model reads a stuck capacity of 0 as none at all (the healthy
	// capacity throughout): a measured 0 is the least it can be told
	in.Service.Stuck = max(v, math.SmallestNonzeroFloat64)
	return nil
}

// median is the median of f over the runs it reads, and their count.
func median(runs []result.ArmResult, f func(result.ArmResult) (float64, bool)) (float64, int) {
	var vs []float64
	for _, r := range runs {
		if v, ok := f(r); ok && !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, 0
	}
	slices.Sort(vs)
	return vs[len(vs)/2], len(vs)
}

func ms(d time.Duration) float64 { return float64(d.Milliseconds()) }

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}
