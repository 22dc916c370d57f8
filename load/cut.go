package load

import (
	"sync"
	"sync/atomic"
	"time"
)

// Cut ends a schedule before its Duration: once cut at an instant, no
// request is due after it, the requests already sent are answered (or
// time out) as usual, and none is counted Unsent for the part cut off. It
// is how a run that decides its own length (until the service recovered)
// ends the load without cancelling requests in flight. A nil Cut never
// cuts. It is safe for concurrent use.
type Cut struct {
	at           atomic.Int64 // Unix nanoseconds; 0: not cut
	made, closed sync.Once
	ch           chan struct{} // closed at the first cut
}

// At cuts the schedule at t, or at the earlier instant already set.
func (c *Cut) At(t time.Time) {
	defer c.closed.Do(func() { c.cut(); close(c.ch) })
	ns := t.UnixNano()
	for {
		old := c.at.Load()
		if old != 0 && old <= ns {
			return
		}
		if c.at.CompareAndSwap(old, ns) {
			return
		}
	}
}

// cut is closed once the schedule is cut; nil (never) for a nil Cut.
func (c *Cut) cut() <-chan struct{} {
	if c == nil {
		return nil
	}
	c.made.Do(func() { c.ch = make(chan struct{}) })
	return c.ch
}

// When is the instant the schedule was cut at, and whether it was.
func (c *Cut) When() (time.Time, bool) {
	if c == nil {
		return time.Time{}, false
	}
	ns := c.at.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// after says whether due falls after the cut.
func (c *Cut) after(due time.Time) bool {
	at, ok := c.When()
	return ok && due.After(at)
}

// Bound is the longest one request of c may take, its retries and their
// waits included: the client's own deadline, so a request intended at t
// has its record by t + Bound (and the generator's lag).
func (c Config) Bound() time.Duration {
	return time.Duration(c.Retry.Retries+1)*c.Timeout + time.Duration(c.Retry.Retries)*max(c.Retry.Base, c.Retry.Cap)
}

// Done is closed once the schedule is cut; nil (never) for a nil Cut. It
// lets a caller pass the cut on, such as to workers sending the schedule.
func (c *Cut) Done() <-chan struct{} { return c.cut() }
