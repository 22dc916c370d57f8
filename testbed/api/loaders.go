package api

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// What the loaders (mitigation_lock.go, mitigation_lease.go and the
// others of KindLoader) share: a claim's token, a waiter's re-reads, and
// the fallback when a claim cannot be asked for.

// token is this replica's claim on a lock or lease: its name and a draw.
func (s *Server) token() string {
	return fmt.Sprintf("%s:%x", s.opts.Name, math.Float64bits(s.random()))
}

// unclaimed answers a request whose lock or lease could not be asked for:
// a client that went away, or Redis that did not answer, which makes the
// strategy none for this request.
func (s *Server) unclaimed(ctx context.Context, v view, id int64) (Item, string, error) {
	if ctx.Err() != nil {
		return Item{}, "", errCanceled
	}
	v.m.cacheErrors.Inc()
	it, err := s.loadAndSet(ctx, v, id)
	return it, admin.OutcomeMiss, err
}

// pollBackoff is how far a waiter's re-reads back off: the first after
// lock_poll, each next one twice as late, up to pollBackoff times lock_poll
// apart. Every waiter re-reading every lock_poll is a herd of its own on
// Redis: hundreds of waiters behind one slow load at 5 ms each took the
// docker testbed's 2 cores (Redis, toxiproxy) from under the load it waited for.
const pollBackoff = 8

// poll is one waiter's next re-read delay.
type poll struct{ next, max time.Duration }

// newPoll starts a waiter's re-reads at lock's lock_poll, which lease's
// waiters share.
func newPoll(v view) *poll {
	d := time.Duration(replica.KnobsOf[replica.LockKnobs](v.cfg).Poll)
	if d <= 0 { // a registry without lock
		d = time.Duration(replica.KnobsOf[replica.LockKnobs](replica.DefaultConfig).Poll)
	}
	return &poll{next: d, max: pollBackoff * d}
}

// pollOnce waits the waiter's next delay, then reads the item's fresh
// copy: ok when another request has filled it meanwhile.
func (s *Server) pollOnce(ctx context.Context, v view, id int64, p *poll) (Item, bool, error) {
	t := time.NewTimer(p.next)
	p.next = min(2*p.next, p.max)
	select {
	case <-ctx.Done():
		t.Stop()
		return Item{}, false, errCanceled
	case <-t.C:
	}
	e, ok := s.read(ctx, v, ItemKey(id))
	return e.Item, ok, nil
}

// loadHolding runs under the lock: it loads unless the cache was filled
// since this request missed.
func (s *Server) loadHolding(ctx context.Context, v view, id int64) (Item, string, error) {
	if e, ok := s.read(ctx, v, ItemKey(id)); ok {
		return e.Item, admin.OutcomeHit, nil
	}
	if ctx.Err() != nil {
		return Item{}, "", errCanceled
	}
	it, err := s.loadAndSet(ctx, v, id)
	return it, admin.OutcomeMiss, err
}
