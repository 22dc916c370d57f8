package experiment

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/herdbench/herdbench/gates"
	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/targets"
	"github.com/herdbench/herdbench/triggers"
)

// Plan is one experiment: the same load and trigger once per arm.
type Plan struct {
	Arms    []Arm  `json:"arms"`
	Trigger string `json:"trigger"`
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
	Escape  *Escape      `json:"escape,omitempty"`
	Seed    uint64       `json:"seed"`
	Clients int          `json:"clients"`      // virtual clients, each with its own retry state
	Retry   retry.Policy `json:"retry"`        // the clients' policy, unless an arm sets its own
	Budget  retry.Budget `json:"retry_budget"` // what bounds each client's retries
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
	// Repeat runs each arm this many times, interleaved (repeat.go)
	Repeat Repeat `json:"repeat,omitzero"`
}

// Arm is one configuration of the service, or of its clients, under the
// same experiment. The client fields are set only when the arm sets them.
type Arm struct {
	Name string `json:"name"`
	// Knobs is what the arm sets of the replicas' config: its strategy and
	// the knobs it names; the rest stays as the testbed was started
	Knobs    herd.Settings  `json:"knobs,omitempty"`
	Retry    *retry.Policy  `json:"retry,omitempty"`          // the clients' policy in this arm
	Budget   *retry.Budget  `json:"retry_budget,omitempty"`   // what bounds the clients' retries in this arm
	Throttle *float64       `json:"throttle,omitempty"`       // the clients' adaptive throttling K in this arm
	Hedge    *retry.Hedge   `json:"hedge,omitempty"`          // the clients' hedging in this arm
	Breaker  *retry.Breaker `json:"client_breaker,omitempty"` // the clients' circuit breaker in this arm
	// Edge is what the arm sets of the edge replicas' policy (a two-tier
	// testbed); the rest is theirs from testbed up
	Edge herd.Settings `json:"edge,omitempty"`
	// Select is how the arm is chosen on a service herdbench does not
	// control; Knobs is then unused
	Select *Select `json:"select,omitempty"`
}

// Select chooses an arm on a service herdbench does not control: headers
// and query values sent with every request, commands run before and after
// the arm (a feature-flag CLI call, say).
type Select struct {
	Headers map[string]string `json:"-"` // may hold secrets: results name them only
	Query   map[string]string `json:"query,omitempty"`
	Before  []string          `json:"before,omitempty"`
	After   []string          `json:"after,omitempty"`
	// Secret are the headers whose values came from the environment: a
	// dry run shows the other headers' values, never these
	Secret []string `json:"-"`
	// Endpoints are the arm's own base URLs, instead of the target's
	Endpoints []string `json:"endpoints,omitempty"`
}

// MarshalJSON writes the header names, never their values.
func (s Select) MarshalJSON() ([]byte, error) {
	type plain Select
	names := make([]string, 0, len(s.Headers))
	for k := range s.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	return json.Marshal(struct {
		Headers []string `json:"headers,omitempty"`
		plain
	}{names, plain(s)})
}

// UnmarshalJSON reads what MarshalJSON wrote: the header names, with no
// values (results never had them), so a saved run renders again as it was.
func (s *Select) UnmarshalJSON(b []byte) error {
	type plain Select
	var v struct {
		Headers []string `json:"headers"`
		plain
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Select(v.plain)
	if len(v.Headers) > 0 {
		s.Headers = map[string]string{}
		for _, h := range v.Headers {
			s.Headers[h] = ""
		}
	}
	return nil
}

// apply is base with the arm's headers, and the arm's query values.
func (s *Select) apply(base http.Header) (http.Header, url.Values) {
	h := base.Clone()
	if s == nil {
		return h, nil
	}
	if h == nil {
		h = http.Header{}
	}
	for k, v := range s.Headers {
		h.Set(k, v)
	}
	q := url.Values{}
	for k, v := range s.Query {
		q.Set(k, v)
	}
	return h, q
}

// Clients is what every virtual client does in one arm: the plan's client
// policies with the arm's own in their place. Results carry it, so every
// figure is tied to the policies that produced it.
type Clients struct {
	Count    int           `json:"count"`
	Retry    retry.Policy  `json:"retry"`
	Budget   retry.Budget  `json:"retry_budget"`
	Throttle float64       `json:"throttle"`
	Hedge    retry.Hedge   `json:"hedge"`
	Breaker  retry.Breaker `json:"client_breaker"`
	Critical float64       `json:"critical"`
}

// ClientsOf is what the clients of arm a run with.
func (p Plan) ClientsOf(a Arm) Clients {
	c := Clients{Count: max(p.Clients, 1), Retry: p.Retry, Budget: p.Budget, Throttle: p.Throttle, Hedge: p.Hedge,
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
	if s, ok := p.trigger().(triggers.Sender); ok {
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
	}
	return l
}

// trigger is the plan's trigger, nil when it names none the set has.
func (p Plan) trigger() triggers.Trigger {
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
