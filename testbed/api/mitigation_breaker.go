package api

import (
	"errors"
	"fmt"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/herdbench/herdbench/testbed/replica"
)

// breakerStrategy is a circuit breaker around the DB: while it is open a
// miss serves the stale copy, or fails fast.
type breakerStrategy replica.BreakerKnobs

var (
	_ QueryGuard = breakerStrategy{}
	_ Stateful   = breakerStrategy{}
	_ Counted    = breakerStrategy{}
)

// MetricBreakerOpens counts the breaker's openings.
const MetricBreakerOpens = "herdbench_api_breaker_opens_total"

func (breakerStrategy) Counters() []Counter {
	return []Counter{{MetricBreakerOpens, "Times the breaker around the DB opened."}}
}

// errBreakerOpen ends a load the open breaker refused; a miss under none
// serves the stale copy instead (errStaleOK).
var errBreakerOpen = fmt.Errorf("%w: the breaker around the database is open", errStaleOK)

// NewState is the breaker, closed.
func (b breakerStrategy) NewState(env StateEnv, _ any) any {
	return gobreaker.NewCircuitBreaker[Item](gobreaker.Settings{
		Name:    env.Replica,
		Timeout: time.Duration(b.Open),
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= b.Failures
		},
		IsSuccessful: func(err error) bool { return err == nil || errors.Is(err, errNotFound) },
		OnStateChange: func(_ string, _, to gobreaker.State) {
			if to == gobreaker.StateOpen {
				env.Count(MetricBreakerOpens)
			}
		},
	})
}

// GuardQuery runs the query through the breaker.
func (breakerStrategy) GuardQuery(r *Request, query func() (Item, error)) (Item, error) {
	it, err := r.State(replica.Breaker).(*gobreaker.CircuitBreaker[Item]).Execute(query)
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return Item{}, errBreakerOpen
	}
	return it, err
}
