package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/api"
	"github.com/herdbench/herdbench/triggers"
)

// Safety caps: a plan above them is refused before anything is sent.
const (
	MaxRate        = 20_000           // requests per second
	MaxArmDuration = 10 * time.Minute // warmup + before + after
	MaxArms        = 16
	MaxClients     = 100_000
)

// Plan is one experiment: the same load and trigger once per arm.
type Plan struct {
	Arms    []Arm  `json:"arms"`
	Trigger string `json:"trigger"`
	// TriggerOptions configure the triggers that take them (outage, slowdb).
	TriggerOptions triggers.Options `json:"trigger_options"`
	HotKeys        int              `json:"hot_keys"` // ids 1..HotKeys are warmed and triggered
	Rate           int              `json:"rate"`     // requests per second, open model
	Keys           int              `json:"keys"`     // ids 1..Keys
	Zipf           float64          `json:"zipf"`     // exponent of the key distribution
	Timeout        api.Duration     `json:"timeout"`  // client timeout
	Warmup         api.Duration     `json:"warmup"`   // load before measuring
	Before         api.Duration     `json:"before"`   // measured load before T: the baseline
	After          api.Duration     `json:"after"`    // measured load after T
	Seed           uint64           `json:"seed"`
	Clients        int              `json:"clients"`      // virtual clients, each with its own retry state
	Retry          retry.Policy     `json:"retry"`        // the clients' policy, unless an arm sets its own
	Budget         retry.Budget     `json:"retry_budget"` // what bounds each client's retries
	// Throttle is adaptive throttling's K for every client (0: off),
	// unless an arm sets its own
	Throttle float64 `json:"throttle"`
}

// Arm is one configuration of the service, or of its clients, under the
// same experiment.
type Arm struct {
	Name     string        `json:"name"`
	Config   api.Config    `json:"config"`
	Retry    *retry.Policy `json:"retry,omitempty"`    // the clients' policy in this arm
	Throttle *float64      `json:"throttle,omitempty"` // the clients' adaptive throttling K in this arm
}

// RetryArm is the prefix of arms that compare client retry policies:
// "retry=full-jitter:100ms:2s:3" runs the base config with that policy.
const RetryArm = "retry="

// ThrottleArm is the prefix of arms that compare client-side adaptive
// throttling: "throttle=2" runs the base config with K = 2.
const ThrottleArm = "throttle="

// Arms returns one arm per name: a strategy ("lock", "lock+ttl_jitter")
// applied to base, or RetryArm and a policy, which keeps base's strategy.
// A policy that does not parse is reported by Plan.Validate.
func Arms(names []string, base api.Config) []Arm {
	arms := make([]Arm, len(names))
	for i, n := range names {
		c := base
		a := Arm{Name: n, Config: c}
		if spec, ok := strings.CutPrefix(n, RetryArm); ok {
			if p, err := retry.Parse(spec); err == nil {
				a.Retry = &p
			}
		} else if spec, ok := strings.CutPrefix(n, ThrottleArm); ok {
			if k, err := strconv.ParseFloat(spec, 64); err == nil {
				a.Throttle = &k
			}
		} else {
			a.Config.Strategy = n
		}
		arms[i] = a
	}
	return arms
}

// ThrottleOf is the adaptive throttling K arm a runs with.
func (p Plan) ThrottleOf(a Arm) float64 {
	if a.Throttle != nil {
		return *a.Throttle
	}
	return p.Throttle
}

// RetryOf is the policy arm a runs with.
func (p Plan) RetryOf(a Arm) retry.Policy {
	if a.Retry != nil {
		return *a.Retry
	}
	return p.Retry
}

// T is the trigger's offset from the start of the load.
func (p Plan) T() time.Duration { return time.Duration(p.Warmup + p.Before) }

// Duration is one arm's load time.
func (p Plan) Duration() time.Duration { return time.Duration(p.Warmup + p.Before + p.After) }

// Validate returns every problem at once, each naming the field (as in the
// results JSON) and the accepted values. triggerNames are the valid triggers.
func (p Plan) Validate(triggerNames []string) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{field}, args...)...))
	}
	if len(p.Arms) == 0 || len(p.Arms) > MaxArms {
		bad("arms", "%d arms (accepted: 1 to %d)", len(p.Arms), MaxArms)
	}
	seen := map[string]bool{}
	for _, a := range p.Arms {
		if seen[a.Name] {
			bad("arms", "%q twice", a.Name)
		}
		seen[a.Name] = true
		if spec, ok := strings.CutPrefix(a.Name, RetryArm); ok {
			if _, err := retry.Parse(spec); err != nil {
				bad("arms", "%v", err)
			}
		}
		if spec, ok := strings.CutPrefix(a.Name, ThrottleArm); ok {
			if k, err := strconv.ParseFloat(spec, 64); err != nil || k <= 0 || k > 100 {
				bad("arms", "%q: K %q is not a number above 0 and at most 100, such as 2", a.Name, spec)
			}
		}
		if err := a.Config.Validate(); err != nil {
			bad("arms", "%s: %v", a.Name, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	to := p.TriggerOptions.OrDefaults()
	if err := to.Validate(); err != nil {
		errs = append(errs, err)
	}
	// a fault that outlasts the arm never shows its end
	switch {
	case p.Trigger == "outage" && to.Outage >= p.After:
		bad("outage", "%s is not shorter than after, %s (accepted: shorter than after, so the arm sees the dependency return)", to.Outage, p.After)
	case p.Trigger == "slowdb" && to.SlowDBFor >= p.After:
		bad("slowdb_for", "%s is not shorter than after, %s (accepted: shorter than after, so the arm sees the database recover)", to.SlowDBFor, p.After)
	}
	if !slices.Contains(triggerNames, p.Trigger) {
		bad("trigger", "unknown %q (accepted: %s)", p.Trigger, strings.Join(triggerNames, ", "))
	}
	if p.Rate < 1 || p.Rate > MaxRate {
		bad("rate", "%d out of range (accepted: 1 to %d requests/s)", p.Rate, MaxRate)
	}
	if p.Throttle < 0 || p.Throttle > 100 {
		bad("throttle", "%g out of range (accepted: 0, off, or K above 0 and at most 100; the SRE book uses 2)", p.Throttle)
	}
	if p.Clients < 0 || p.Clients > MaxClients {
		bad("clients", "%d out of range (accepted: 0 to %d; 0 means 1)", p.Clients, MaxClients)
	}
	if p.Keys < 1 {
		bad("keys", "%d out of range (accepted: 1 or more)", p.Keys)
	}
	if p.HotKeys < 1 || p.HotKeys > p.Keys {
		bad("hot_keys", "%d out of range (accepted: 1 to keys, %d)", p.HotKeys, p.Keys)
	}
	if p.Zipf <= 1 {
		bad("zipf", "%g out of range (accepted: greater than 1)", p.Zipf)
	}
	if p.Timeout <= 0 {
		bad("timeout", "%s (accepted: more than 0)", p.Timeout)
	}
	if p.Warmup < 0 {
		bad("warmup", "%s is negative", p.Warmup)
	}
	if p.Before < api.Duration(time.Second) {
		bad("before", "%s too short (accepted: 1s or more: it is the baseline)", p.Before)
	}
	if p.After < api.Duration(time.Second) {
		bad("after", "%s too short (accepted: 1s or more)", p.After)
	}
	if p.Duration() > MaxArmDuration {
		bad("after", "warmup + before + after = %s exceeds the cap of %s per arm", p.Duration(), MaxArmDuration)
	}
	return errors.Join(errs...)
}
