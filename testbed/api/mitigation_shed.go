package api

import (
	"context"
	"fmt"
	"time"

	"github.com/herdbench/herdbench/herd"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
)

// shedder is the adaptive concurrency limit on DB loads of shed and
// shed_priority: failsafe-go's adaptive limiter, which compares the recent
// p90 load time with its baseline (a gradient, with a Vegas-style estimate
// of the queue it implies) once a window of at least 50 loads and 1 s has
// passed, and moves the limit between its floor and ceiling.
//
// shed refuses a load at once when the limit is reached. shed_priority
// refuses normal requests the same way, but lets critical ones
// (admin.PriorityHeader) wait up to shed_wait: a freed permit goes to a waiting
// critical request before any normal one can take it, so the rest are shed
// first. (failsafe-go's own PriorityLimiter was tried: its calibrated
// thresholds shed critical requests as readily as the rest once its queue
// fills, 43% against 44% served at 2.5x overload.)
type shedder struct {
	limiter  adaptivelimiter.AdaptiveLimiter[Item]
	priority bool
	wait     time.Duration
}

// shedStrategy is an adaptive concurrency limit on DB loads: a load
// above it is refused at once.
type shedStrategy struct {
	MinLimit     int `json:"shed_min_limit" help:"shed: the adaptive limit's floor, concurrent DB loads per replica"`
	MaxLimit     int `json:"shed_max_limit" help:"shed: the adaptive limit's ceiling"`
	InitialLimit int `json:"shed_initial_limit" help:"shed: the limit it starts from"`
}

// shedPriorityStrategy is shed, with shed's limits, but requests marked
// critical are admitted first and may queue.
type shedPriorityStrategy struct {
	Wait herd.Duration `json:"shed_wait" help:"shed_priority: longest an admitted load queues for a permit"`
}

// MaxShedLimit bounds the shed limits: concurrent loads of one replica.
const MaxShedLimit = 10_000

const shedWait = 500 * time.Millisecond

var (
	_ LoadAdmitter = shedStrategy{}
	_ Stateful     = shedStrategy{}
	_ LoadAdmitter = shedPriorityStrategy{}
	_ Stateful     = shedPriorityStrategy{}
)

func (shedStrategy) Name() string { return Shed }
func (shedStrategy) Describe() string {
	return "an adaptive concurrency limit on DB loads: 503 at once above it"
}
func (shedStrategy) Kind() string           { return KindProtection }
func (shedStrategy) ExclusiveGroup() string { return Shed }

func (shedPriorityStrategy) Name() string { return ShedPriority }
func (shedPriorityStrategy) Describe() string {
	return "shed, but requests marked critical are admitted first and may queue"
}
func (shedPriorityStrategy) Kind() string           { return KindProtection }
func (shedPriorityStrategy) ExclusiveGroup() string { return Shed }

// Problems: the ceiling is the default DB pool: past it, loads would
// queue for a connection, which is what shedding answers at once instead.
func (c shedStrategy) Problems() herd.FieldErrors {
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

func (p shedPriorityStrategy) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if p.Wait < 0 || p.Wait > herd.Duration(time.Minute) {
		errs.Add("shed_wait", "%s out of range (accepted: 0 to 1m)", p.Wait)
	}
	return errs
}

// NewState is the limit when the replica is configured with shed, nil
// otherwise: a request cannot ask for a limit the replica does not keep.
func (c shedStrategy) NewState(env StateEnv, _ any) any {
	if !env.Configured {
		return nil
	}
	return c.shedder(false, 0)
}

// NewState is shed's limit with priorities, as NewState of shed.
func (p shedPriorityStrategy) NewState(env StateEnv, _ any) any {
	if !env.Configured {
		return nil
	}
	return mitigation[shedStrategy](env.Config).shedder(true, time.Duration(p.Wait))
}

func (c shedStrategy) shedder(priority bool, wait time.Duration) *shedder {
	l := adaptivelimiter.NewBuilder[Item]().WithLimits(uint(c.MinLimit), uint(c.MaxLimit), uint(c.InitialLimit)).Build()
	return &shedder{limiter: l, priority: priority, wait: wait}
}

// AdmitLoad takes a permit; every completed load, failed ones too, tells
// the limit how long loads take now.
func (shedStrategy) AdmitLoad(r *Request) (func(), error) { return admitShed(r, Shed) }

// AdmitLoad takes a permit, a critical request queueing for it.
func (shedPriorityStrategy) AdmitLoad(r *Request) (func(), error) { return admitShed(r, ShedPriority) }

func admitShed(r *Request, name string) (func(), error) {
	p, err := r.State(name).(*shedder).acquire(r.ctx)
	if err != nil {
		return nil, err
	}
	return p.Record, nil
}

// acquire returns a permit for one load, or an ErrShed error.
func (sh *shedder) acquire(ctx context.Context) (adaptivelimiter.Permit, error) {
	if sh.priority && critical(ctx) {
		p, err := sh.limiter.AcquirePermitWithMaxWait(ctx, sh.wait)
		if err != nil {
			return nil, fmt.Errorf("%w: a critical load waited %s at the adaptive concurrency limit of %d loads", ErrShed, sh.wait, sh.limiter.Limit())
		}
		return p, nil
	}
	if p, ok := sh.limiter.TryAcquirePermit(); ok {
		return p, nil
	}
	return nil, fmt.Errorf("%w: at the adaptive concurrency limit of %d loads", ErrShed, sh.limiter.Limit())
}

// limit is the current concurrency limit, 0 for a nil shedder.
func (sh *shedder) limit() int {
	if sh == nil {
		return 0
	}
	return sh.limiter.Limit()
}

// criticalKey marks a critical request's context.
type criticalKey struct{}

// withCritical marks ctx as a critical request's.
func withCritical(ctx context.Context) context.Context {
	return context.WithValue(ctx, criticalKey{}, true)
}

func critical(ctx context.Context) bool { v, _ := ctx.Value(criticalKey{}).(bool); return v }
