package replica

import (
	"time"

	"github.com/herdbench/herdbench/herd"
)

// RateLimitKnobs are ratelimit's, a token bucket on DB loads and a
// ramp-up after a replica's start.
type RateLimitKnobs struct {
	Rate   float64       `json:"rate_limit" help:"ratelimit: DB loads per second per replica"`
	Burst  int           `json:"rate_burst" help:"ratelimit: loads the bucket holds"`
	RampUp herd.Duration `json:"ramp_up" help:"ratelimit: admit a share of requests growing to all over this, from a replica's start (0: off)"`
}

func (RateLimitKnobs) Name() string { return RateLimit }
func (RateLimitKnobs) Describe() string {
	return "a token bucket on DB loads, and a ramp-up after a start"
}
func (RateLimitKnobs) Kind() string { return KindProtection }

func (l RateLimitKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if !herd.Finite(l.Rate) || l.Rate <= 0 {
		errs.Add("rate_limit", "%g out of range (accepted: more than 0 loads/s)", l.Rate)
	}
	if l.Burst < 1 {
		errs.Add("rate_burst", "%d out of range (accepted: 1 or more)", l.Burst)
	}
	if l.RampUp < 0 {
		errs.Add("ramp_up", "%s is negative (accepted: 0, off, or more)", l.RampUp)
	}
	return errs
}

// BreakerKnobs are breaker's, a circuit breaker around the DB: while it is
// open a miss serves the stale copy, or fails fast.
type BreakerKnobs struct {
	Failures uint32        `json:"breaker_failures" help:"breaker: consecutive failed loads that open it, 1 or more"`
	Open     herd.Duration `json:"breaker_open" help:"breaker: how long it stays open before one trial load"`
}

const breakerOpen = 2 * time.Second

func (BreakerKnobs) Name() string { return Breaker }
func (BreakerKnobs) Describe() string {
	return "a circuit breaker around the DB: stale copy or fail fast while open"
}
func (BreakerKnobs) Kind() string { return KindProtection }

func (b BreakerKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if b.Failures < 1 {
		errs.Add("breaker_failures", "%d out of range (accepted: 1 or more)", b.Failures)
	}
	if b.Open < herd.Duration(time.Millisecond) {
		errs.Add("breaker_open", "%s is too short (accepted: 1ms or more)", b.Open)
	}
	return errs
}

// ShedKnobs are shed's, an adaptive concurrency limit on DB loads: a load
// above it is refused at once.
type ShedKnobs struct {
	MinLimit     int `json:"shed_min_limit" help:"shed: the adaptive limit's floor, concurrent DB loads per replica"`
	MaxLimit     int `json:"shed_max_limit" help:"shed: the adaptive limit's ceiling"`
	InitialLimit int `json:"shed_initial_limit" help:"shed: the limit it starts from"`
}

// ShedPriorityKnobs are shed_priority's: shed, with shed's limits, but
// requests marked critical are admitted first and may queue.
type ShedPriorityKnobs struct {
	Wait herd.Duration `json:"shed_wait" help:"shed_priority: longest an admitted load queues for a permit"`
}

// MaxShedLimit bounds the shed limits: concurrent loads of one replica.
const MaxShedLimit = 10_000

const shedWait = 500 * time.Millisecond

func (ShedKnobs) Name() string { return Shed }
func (ShedKnobs) Describe() string {
	return "an adaptive concurrency limit on DB loads: 503 at once above it"
}
func (ShedKnobs) Kind() string           { return KindProtection }
func (ShedKnobs) ExclusiveGroup() string { return Shed }

func (ShedPriorityKnobs) Name() string { return ShedPriority }
func (ShedPriorityKnobs) Describe() string {
	return "shed, but requests marked critical are admitted first and may queue"
}
func (ShedPriorityKnobs) Kind() string           { return KindProtection }
func (ShedPriorityKnobs) ExclusiveGroup() string { return Shed }

// Problems: the ceiling is the default DB pool: past it, loads would
// queue for a connection, which is what shedding answers at once instead.
func (c ShedKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	bad := errs.Add
	if c.MinLimit < 1 || c.MinLimit > MaxShedLimit {
		bad("shed_min_limit", "%d out of range (accepted: 1 to %d)", c.MinLimit, MaxShedLimit)
	}
	if c.MaxLimit < c.MinLimit || c.MaxLimit > MaxShedLimit {
		bad("shed_max_limit", "%d out of range (accepted: shed_min_limit, %d, to %d)", c.MaxLimit, c.MinLimit, MaxShedLimit)
	}
	// the initial limit within a range that is none yet would blame it for
	// the range's problem, and maybe a shed_initial_limit never given
	if len(errs) == 0 && (c.InitialLimit < c.MinLimit || c.InitialLimit > c.MaxLimit) {
		bad("shed_initial_limit", "%d out of range (accepted: shed_min_limit to shed_max_limit, %d to %d)", c.InitialLimit, c.MinLimit, c.MaxLimit)
	}
	return errs
}

func (p ShedPriorityKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if p.Wait < 0 || p.Wait > herd.Duration(time.Minute) {
		errs.Add("shed_wait", "%s out of range (accepted: 0 to 1m)", p.Wait)
	}
	return errs
}
