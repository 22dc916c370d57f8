package api

import (
	"context"
	"fmt"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/herdbench/herdbench/testbed/replica"
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
type shedStrategy replica.ShedKnobs

// shedPriorityStrategy is shed, with shed's limits, but requests marked
// critical are admitted first and may queue.
type shedPriorityStrategy replica.ShedPriorityKnobs

var (
	_ LoadAdmitter = shedStrategy{}
	_ Stateful     = shedStrategy{}
	_ LoadAdmitter = shedPriorityStrategy{}
	_ Stateful     = shedPriorityStrategy{}
)

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
	return shedStrategy(replica.KnobsOf[replica.ShedKnobs](env.Config)).shedder(true, time.Duration(p.Wait))
}

func (c shedStrategy) shedder(priority bool, wait time.Duration) *shedder {
	l := adaptivelimiter.NewBuilder[Item]().WithLimits(uint(c.MinLimit), uint(c.MaxLimit), uint(c.InitialLimit)).Build()
	return &shedder{limiter: l, priority: priority, wait: wait}
}

// AdmitLoad takes a permit; every completed load, failed ones too, tells
// the limit how long loads take now.
func (shedStrategy) AdmitLoad(r *Request) (func(), error) { return admitShed(r, replica.Shed) }

// AdmitLoad takes a permit, a critical request queueing for it.
func (shedPriorityStrategy) AdmitLoad(r *Request) (func(), error) {
	return admitShed(r, replica.ShedPriority)
}

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
