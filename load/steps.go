package load

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Steps lower a schedule's rate at instants set while it runs (an arm that
// steps its load down once the service is stuck, to find the load it
// escapes at). The schedule stays a function of the request's number:
// before the first step, request k is due at start + (k+1)/rate; a step at
// instant at to rate r gives the requests not yet due at it, numbered n
// on, the instants at + (k-n+1)/r. So every request's intended instant is
// known from its number and the steps, as the constant schedule's is, and
// the records count latency from it.
//
// A step must be set before any request due after its instant was paced:
// at least one interval of the rate so far past now (the pacer asks for
// hit k once hit k-1 has left, at most one interval before k is due). The
// caller picks such an instant (the experiment: a row's edge). A nil
// Steps never steps. It is safe for concurrent use.
type Steps struct {
	mu    sync.Mutex                // serializes Step
	steps atomic.Pointer[[]Stepped] // in time order; read without the lock
	added chan struct{}             // closed at the next Step; nil until Added asks
}

// Stepped is one step: from At on, the schedule sends Rate requests a second.
type Stepped struct {
	At   time.Time
	Rate float64
}

// Step makes the schedule send rate requests a second from at on. The
// steps' instants increase: one at or before the last step's is refused,
// as is a rate that is not a positive number.
func (s *Steps) Step(at time.Time, rate float64) error {
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate <= 0 {
		return fmt.Errorf("step rate %g (accepted: more than 0 requests/s)", rate)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.List()
	if n := len(old); n > 0 && !at.After(old[n-1].At) {
		return fmt.Errorf("step at %s: not after the last step, at %s", at.Format(time.RFC3339Nano), old[n-1].At.Format(time.RFC3339Nano))
	}
	next := append(old[:len(old):len(old)], Stepped{At: at, Rate: rate})
	s.steps.Store(&next)
	if s.added != nil {
		close(s.added)
		s.added = nil
	}
	return nil
}

// Added is closed at the next Step: read List after taking it, and a step
// set meanwhile closes it. It lets a caller pass the steps on, such as to
// workers sending the schedule. Nil (never) for a nil Steps.
func (s *Steps) Added() <-chan struct{} {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.added == nil {
		s.added = make(chan struct{})
	}
	return s.added
}

// List is the steps set so far, in time order; nil for a nil Steps.
func (s *Steps) List() []Stepped {
	if s == nil {
		return nil
	}
	if p := s.steps.Load(); p != nil {
		return *p
	}
	return nil
}

// intervalOf is the time between two requests at rate a second.
func intervalOf(rate float64) time.Duration { return time.Duration(float64(time.Second) / rate) }

// due is when request k is due on a schedule that starts at start, one
// request every interval, stepped by s.
func (s *Steps) due(start time.Time, interval time.Duration, k uint64) time.Time {
	at, first, iv := start, uint64(0), interval
	for _, st := range s.List() {
		n := first // the requests due at or before st.At under the rate so far
		if d := st.At.Sub(at); d > 0 {
			n += uint64(d / iv)
		}
		if k < n {
			break
		}
		at, first, iv = later(at, st.At), n, intervalOf(st.Rate)
	}
	return at.Add(time.Duration(k-first+1) * iv)
}

// rateAt is the schedule's rate at instant t: base, or the last step's
// at or before t.
func (s *Steps) rateAt(base float64, t time.Time) float64 {
	for _, st := range s.List() {
		if st.At.After(t) {
			break
		}
		base = st.Rate
	}
	return base
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
