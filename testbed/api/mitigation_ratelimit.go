package api

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/herdbench/herdbench/herd"
)

// ratelimitStrategy is a token bucket on DB loads, and a ramp-up after a
// replica's start.
type ratelimitStrategy struct {
	Rate   float64       `json:"rate_limit" help:"ratelimit: DB loads per second per replica"`
	Burst  int           `json:"rate_burst" help:"ratelimit: loads the bucket holds"`
	RampUp herd.Duration `json:"ramp_up" help:"ratelimit: admit a share of requests growing to all over this, from a replica's start (0: off)"`
}

var (
	_ RequestAdmitter = ratelimitStrategy{}
	_ LoadAdmitter    = ratelimitStrategy{}
	_ Stateful        = ratelimitStrategy{}
)

func (ratelimitStrategy) Name() string { return RateLimit }
func (ratelimitStrategy) Describe() string {
	return "a token bucket on DB loads, and a ramp-up after a start"
}
func (ratelimitStrategy) Kind() string { return KindProtection }

func (l ratelimitStrategy) Problems() herd.FieldErrors {
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

// NewState is the bucket, full, for the config's rate.
func (l ratelimitStrategy) NewState(StateEnv, any) any {
	return rate.NewLimiter(rate.Limit(l.Rate), l.Burst)
}

// AdmitRequest admits a share of requests growing to all over ramp_up
// from the replica's start.
func (l ratelimitStrategy) AdmitRequest(r *Request) error {
	ramp := time.Duration(l.RampUp)
	if ramp <= 0 {
		return nil
	}
	if up := time.Since(r.s.started); up < ramp && r.Random() >= float64(up)/float64(ramp) {
		return fmt.Errorf("%w: ramping up after start (%s of %s)", ErrShed, up.Round(time.Millisecond), ramp)
	}
	return nil
}

// AdmitLoad takes a token from the bucket, or refuses the load.
func (l ratelimitStrategy) AdmitLoad(r *Request) (func(), error) {
	if !r.State(RateLimit).(*rate.Limiter).Allow() {
		return nil, fmt.Errorf("%w: over %g loads/s", ErrShed, l.Rate)
	}
	return nil, nil
}
