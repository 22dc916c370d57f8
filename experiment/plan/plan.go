package plan

import (
	"fmt"
	"time"

	"github.com/herdbench/herdbench/experiment/arm"
	"github.com/herdbench/herdbench/experiment/verdict"
	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/load"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// Plan is one experiment: the same load and trigger once per arm.
type Plan struct {
	Arms    []arm.Arm `json:"arms"`
	Trigger string    `json:"trigger"`
	// Triggers are every trigger with its options (outage, slowdb, ...);
	// nil takes their defaults
	Triggers *triggers.Registry `json:"trigger_options"`
	HotKeys  int                `json:"hot_keys"` // ids 1..HotKeys are warmed and triggered
	Rate     int                `json:"rate"`     // requests per second, open model
	Keys     int                `json:"keys"`     // ids 1..Keys
	Zipf     float64            `json:"zipf"`     // exponent of the key distribution
	Timeout  herd.Duration      `json:"timeout"`  // client timeout
	Warmup   herd.Duration      `json:"warmup"`   // load before measuring
	Before   herd.Duration      `json:"before"`   // measured load before T: the baseline
	After    herd.Duration      `json:"after"`    // measured load after T; the most, with AfterAuto
	// AfterAuto: the load after T goes on until the arm has recovered and
	// held (the verdict's rule), or After has passed (--after auto:MAX)
	AfterAuto bool `json:"after_auto,omitempty"`
	// Escape, when set, steps an arm's load down once it is metastable
	// to find the load it escapes at (escape.go); nil: off
	Escape  *verdict.Escape `json:"escape,omitempty"`
	Seed    uint64          `json:"seed"`
	Clients int             `json:"clients"`      // virtual clients, each with its own retry state
	Retry   retry.Policy    `json:"retry"`        // the clients' policy, unless an arm sets its own
	Budget  retry.Budget    `json:"retry_budget"` // what bounds each client's retries
	// Throttle is adaptive throttling's K for every client (0: off),
	// unless an arm sets its own
	Throttle float64       `json:"throttle"`
	Hedge    retry.Hedge   `json:"hedge"`          // every client's hedging, unless an arm sets its own
	Breaker  retry.Breaker `json:"client_breaker"` // every client's circuit breaker, unless an arm sets its own
	// Critical is the share of requests sent with X-Priority: critical,
	// which shed_priority admits first
	Critical float64 `json:"critical"`
	// Gates are checked on every arm's results once it has run; Abort
	// conditions on the live figures while it runs (LivePaths), and the
	// first that holds stops the arm
	Gates []gates.Gate `json:"gates"`
	Abort []gates.Gate `json:"abort_on"`
	// AbortMerged says which stop conditions were given twice, by a flag
	// and a file, and kept once, for the dry run to say so
	AbortMerged []string `json:"-"`
	// Repeat runs each arm this many times, interleaved (repeat.go)
	Repeat Repeat `json:"repeat,omitzero"`
}

// ClientsOf is what the clients of arm a run with.
func (p Plan) ClientsOf(a arm.Arm) arm.Clients {
	c := arm.Clients{Count: max(p.Clients, 1), Retry: p.Retry, Budget: p.Budget, Throttle: p.Throttle, Hedge: p.Hedge,
		Breaker: p.Breaker, Critical: p.Critical}
	if a.Retry != nil {
		c.Retry = *a.Retry
	}
	if a.Budget != nil {
		c.Budget = *a.Budget
	}
	if a.Throttle != nil {
		c.Throttle = *a.Throttle
	}
	if a.Hedge != nil {
		c.Hedge = *a.Hedge
	}
	if a.Breaker != nil {
		c.Breaker = *a.Breaker
	}
	return c
}

// TriggerSet is the plan's triggers, their defaults when it names none.
func (p Plan) TriggerSet() *triggers.Registry {
	if p.Triggers == nil {
		return triggers.Default()
	}
	return p.Triggers
}

// Load is what the plan would send at most, for a target's caps: the rate,
// one arm's length, what the trigger sends itself, and the most attempts
// a request may make in any arm (retries + 1, or 1 + a ratio budget's
// share, doubled by hedging).
func (p Plan) Load() targets.Load {
	l := targets.Load{Rate: p.Rate, PerArm: p.Duration(), Attempts: 1}
	if s, ok := p.ChosenTrigger().(triggers.Sender); ok {
		l.Burst = s.Sends()
	}
	for _, a := range p.Arms {
		c := p.ClientsOf(a)
		att := 1 + float64(c.Retry.Retries)
		if c.Retry.Kind == "" || c.Retry.Kind == retry.None {
			att = 1
		}
		if c.Budget.Kind == "ratio" {
			att = min(att, 1+c.Budget.Ratio)
		}
		if c.Hedge.Delay > 0 {
			att *= 2
		}
		l.Attempts = max(l.Attempts, att)
		lc := load.Config{Timeout: time.Duration(p.Timeout), Retry: c.Retry}
		if d := lc.Bound(); d > l.Deadline {
			tries := int64(c.Retry.Retries + 1)
			l.Deadline, l.DeadlineArm = d, a.Name
			l.DeadlineWhy = fmt.Sprintf("%d attempts of --timeout %s and %s of backoff, --retry %s", tries, lc.Timeout, d-time.Duration(tries)*lc.Timeout, c.Retry)
		}
	}
	return l
}

// ChosenTrigger is the plan's trigger, nil when it names none the set has.
func (p Plan) ChosenTrigger() triggers.Trigger {
	t, _ := p.TriggerSet().Get(p.Trigger)
	return t
}

// T is the trigger's offset from the start of the load.
func (p Plan) T() time.Duration { return time.Duration(p.Warmup + p.Before) }

// Duration is one arm's load time.
func (p Plan) Duration() time.Duration { return time.Duration(p.Warmup + p.Before + p.After) }

// EndProbe is the URL the trigger's end probe polls (--ended-when URL);
// "" when it has none.
func (p Plan) EndProbe() string {
	t, err := p.Triggers.Get(p.Trigger)
	if ep, ok := t.(triggers.EndProber); ok && err == nil {
		return ep.EndProbe()
	}
	return ""
}

// LBEndServer is the server the trigger's end probe waits for behind the
// load balancer (--ended-when lb:SERVER), if it names one.
func (p Plan) LBEndServer() (string, bool) {
	t, err := p.Triggers.Get(p.Trigger)
	if lp, ok := t.(triggers.LBEndProber); ok && err == nil {
		return lp.EndServer()
	}
	return "", false
}

// NoLoadBalancer refuses an end probe on a load balancer's server where
// the target declares no load balancer.
func NoLoadBalancer(server string) error {
	return fmt.Errorf("--ended-when: lb:%s reads the load balancer's stats, and the target has none (accepted: a URL; or lb:SERVER with a target file's haproxy:)", server)
}

// Repeat is how many times a plan runs each arm (--repeat); 0 and 1 both
// mean once, and the results then leave it out, as they did before it was
// added. Runs are interleaved: every arm in plan order, then every arm
// again, so a machine that drifts hits every arm alike.
type Repeat int

// MaxRepeat caps the runs of each arm.
const MaxRepeat = 20

// N is how many times each arm runs.
func (r Repeat) N() int { return max(int(r), 1) }

// IsZero says the results leave the field out: one run, as before.
func (r Repeat) IsZero() bool { return r <= 1 }
