package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/sony/gobreaker/v2"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/api"
)

// policy is a Config with its state: the backoff's random source, the
// budget's window, the breaker and the bulkhead. A new config or a reset
// makes a new one; a request keeps the one it started with.
type policy struct {
	cfg Config

	mu      sync.Mutex // guards backoff (its random source) and spender
	backoff *retry.Backoff
	spender *retry.Spender

	breaker  *gobreaker.TwoStepCircuitBreaker[any] // nil: off
	bulkhead bulkhead.Bulkhead[any]                // nil: off
}

func newPolicy(c Config, name string, rng *rand.Rand) *policy {
	p := &policy{cfg: c, backoff: retry.NewBackoff(c.Retry, rng), spender: retry.NewSpender(c.Budget)}
	if b := c.Breaker; b.Failures > 0 {
		p.breaker = gobreaker.NewTwoStepCircuitBreaker[any](gobreaker.Settings{
			Name:        name,
			MaxRequests: 1,
			Timeout:     b.Open,
			ReadyToTrip: func(n gobreaker.Counts) bool { return n.ConsecutiveFailures >= b.Failures },
		})
	}
	if c.Bulkhead > 0 {
		p.bulkhead = bulkhead.New[any](uint(c.Bulkhead))
	}
	return p
}

// next says whether a failed attempt n (from 0) may be retried, and after
// how long: the policy's retries, then the budget's say.
// cost is what the retry cost the budget, refunded if it succeeds.
func (p *policy) next(n int, prev time.Duration, err error) (delay time.Duration, cost int, outcome string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n >= p.backoff.Retries() {
		return 0, 0, OutcomeFailed
	}
	cost, ok := p.spender.Allow(time.Now(), errors.Is(err, context.DeadlineExceeded))
	if !ok {
		return 0, 0, OutcomeBudget
	}
	return p.backoff.Delay(n, prev), cost, ""
}

// request counts a request in the budget's window.
func (p *policy) request() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spender.Request(time.Now())
}

// succeeded refunds what the retry that succeeded cost the budget.
func (p *policy) succeeded(cost int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spender.Succeeded(cost)
}

// deadline is when a request must be answered by, per the config and the
// caller's own admin.DeadlineHeader, the sooner; zero without a deadline.
func (p *policy) deadline(r *http.Request, now time.Time) time.Time {
	if p.cfg.Deadline <= 0 {
		return time.Time{}
	}
	d := now.Add(time.Duration(p.cfg.Deadline))
	if ms, err := strconv.ParseInt(r.Header.Get(admin.DeadlineHeader), 10, 64); err == nil && ms >= 0 {
		if c := now.Add(time.Duration(ms) * time.Millisecond); c.Before(d) {
			d = c
		}
	}
	return d
}

func (e *Edge) getItem(w http.ResponseWriter, r *http.Request) {
	e.busy.Add(1)
	defer e.busy.Add(-1)
	w.Header().Set("X-Edge", e.name)
	p, m := e.current()
	id := r.PathValue("id")
	ctx := r.Context()
	deadline := p.deadline(r, time.Now())
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	end := func(outcome string, code int, msg string) {
		m.requests.WithLabelValues(outcome).Inc()
		api.RespondError(w, code, msg)
	}
	if p.bulkhead != nil {
		if !p.bulkhead.TryAcquirePermit() {
			end(OutcomeBulkhead, http.StatusServiceUnavailable, fmt.Sprintf("item %s: the bulkhead's %d calls to the API replicas are taken", id, p.cfg.Bulkhead))
			return
		}
		defer p.bulkhead.ReleasePermit()
	}
	p.request()
	var prev time.Duration
	cost := 0 // what the last retry cost the budget
	for n := 0; ; n++ {
		done := func(bool) {}
		if p.breaker != nil {
			var err error
			if done, err = p.breaker.Allow(); err != nil {
				end(OutcomeBreaker, http.StatusServiceUnavailable, fmt.Sprintf("item %s: the breaker on the calls to the API replicas is open", id))
				return
			}
		}
		status, body, err := e.attempt(ctx, p, m, id, r.Header, deadline)
		done(err == nil)
		if err == nil {
			p.succeeded(cost)
			m.requests.WithLabelValues(OutcomeOK).Inc()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(body)
			return
		}
		if r.Context().Err() != nil {
			m.requests.WithLabelValues(OutcomeCanceled).Inc()
			return
		}
		// B's 504: its copy of the deadline (whole ms) passed a moment before ours
		if ctx.Err() != nil || (!deadline.IsZero() && errors.Is(err, errStatus{http.StatusGatewayTimeout})) {
			end(OutcomeExpired, http.StatusGatewayTimeout, fmt.Sprintf("item %s: the deadline passed after %d attempts, the last: %v", id, n+1, err))
			return
		}
		delay, c, outcome := p.next(n, prev, err)
		switch {
		case outcome == OutcomeFailed:
			end(outcome, http.StatusBadGateway, fmt.Sprintf("item %s: %d attempts to the API replicas failed, the last: %v", id, n+1, err))
			return
		case outcome == OutcomeBudget:
			end(outcome, http.StatusBadGateway, fmt.Sprintf("item %s: attempt %d failed (%v) and the retry budget %s refused a retry", id, n+1, err, p.cfg.Budget))
			return
		case !deadline.IsZero() && time.Until(deadline) <= delay:
			end(OutcomeExpired, http.StatusGatewayTimeout, fmt.Sprintf("item %s: attempt %d failed (%v) and a retry would start past the deadline", id, n+1, err))
			return
		}
		prev, cost = delay, c
		select {
		case <-ctx.Done():
			if r.Context().Err() != nil {
				m.requests.WithLabelValues(OutcomeCanceled).Inc()
			} else {
				end(OutcomeExpired, http.StatusGatewayTimeout, fmt.Sprintf("item %s: the deadline passed in the backoff after attempt %d", id, n+1))
			}
			return
		case <-time.After(delay):
		}
	}
}

// errStatus is a 5xx from B.
type errStatus struct{ code int }

func (e errStatus) Error() string { return "HTTP " + strconv.Itoa(e.code) }

// forwarded are the request headers an edge passes on to B: a request's
// own strategy and priority (testbed/admin's headers) travel with it.
var forwarded = []string{admin.StrategyHeader, admin.PriorityHeader}

// attempt calls one B replica, the next in turn, under the policy's
// timeout and the request's deadline, which it passes on: B's answer below
// 500, or why the attempt failed.
func (e *Edge) attempt(ctx context.Context, p *policy, m *metrics, id string, h http.Header, deadline time.Time) (int, []byte, error) {
	m.attempts.Inc()
	timeout := time.Duration(p.cfg.Timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	base := e.upstreams[e.turn.Add(1)%uint64(len(e.upstreams))]
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/items/"+id, nil)
	if err != nil {
		m.failures.WithLabelValues(ReasonTransport).Inc()
		return 0, nil, err
	}
	for _, k := range forwarded {
		if v := h.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	if !deadline.IsZero() {
		req.Header.Set(admin.DeadlineHeader, strconv.FormatInt(max(time.Until(deadline).Milliseconds(), 0), 10))
	}
	resp, err := e.client.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		m.failures.WithLabelValues(ReasonTimeout).Inc()
		return 0, nil, fmt.Errorf("no answer within %s: %w", timeout, err)
	case err != nil:
		m.failures.WithLabelValues(ReasonTransport).Inc()
		return 0, nil, err
	case resp.StatusCode >= 500:
		m.failures.WithLabelValues(ReasonStatus).Inc()
		return 0, nil, errStatus{resp.StatusCode}
	}
	return resp.StatusCode, body, nil
}
