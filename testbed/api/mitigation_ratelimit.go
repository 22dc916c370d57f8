package api

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/herdbench/herdbench/testbed/replica"
)

// ratelimitStrategy is a token bucket on DB loads, and a ramp-up after a
// replica's start.
type ratelimitStrategy replica.RateLimitKnobs

var (
	_ RequestAdmitter = ratelimitStrategy{}
	_ LoadAdmitter    = ratelimitStrategy{}
	_ Stateful        = ratelimitStrategy{}
)

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
	if !r.State(replica.RateLimit).(*rate.Limiter).Allow() {
		return nil, fmt.Errorf("%w: over %g loads/s", ErrShed, l.Rate)
	}
	return nil, nil
}
