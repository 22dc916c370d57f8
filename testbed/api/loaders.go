package api

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
)

// The loaders: who loads on a miss, under each strategy that decides it
// (singleflight, lock, swr, lease). xfetch and early decide when to load
// (cache.go's serve); the protections decide whether (shed.go, server.go).

// loadCoalesced shares one load among the concurrent requests of this
// process (singleflight). The leader reads the cache again first: a request
// that missed just before the previous flight filled it must not load again.
func (s *Server) loadCoalesced(ctx context.Context, v view, id int64) (Item, string, error) {
	led, loaded := false, false
	res, err, _ := v.sf.Do(strconv.FormatInt(id, 10), func() (any, error) {
		led = true // only the leader's own closure runs
		if e, ok := s.read(ctx, v, ItemKey(id)); ok {
			return e.Item, nil
		}
		loaded = true
		return s.loadAndSet(ctx, v, id)
	})
	it, _ := res.(Item)
	switch {
	case led && loaded:
		return it, OutcomeMiss, err
	case led:
		return it, OutcomeHit, err
	}
	v.m.coalesced.Inc()
	return it, OutcomeCoalesced, err
}

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
	return it, OutcomeMiss, err
}

// loadLocked lets one request in the fleet load: the one that takes the Redis
// lock (SET NX PX) and still finds the cache empty (a request that missed
// just before the previous holder filled it must not load again). The others
// serve the stale copy, or, when there is none, re-read the cache until the
// value appears (after lock_poll, then backing off: pollBackoff). A crashed
// holder's lock expires after lock_ttl and the next waiter takes it; a
// waiter that has waited lock_wait loads by itself rather than fail.
func (s *Server) loadLocked(ctx context.Context, v view, id int64) (Item, string, error) {
	lockKey := lockPrefix + strconv.FormatInt(id, 10)
	token := s.token()
	deadline := time.Now().Add(time.Duration(v.cfg.LockWait))
	waiting, p := false, newPoll(v)
	for {
		ok, err := s.rdb.SetNX(ctx, lockKey, token, time.Duration(v.cfg.LockTTL)).Result()
		switch {
		case ctx.Err() != nil || err != nil: // no lock without Redis: behave as none
			return s.unclaimed(ctx, v, id)
		case ok:
			it, outcome, err := s.loadHolding(ctx, v, id)
			if uerr := s.unlock.Run(context.WithoutCancel(ctx), s.rdb, []string{lockKey}, token).Err(); uerr != nil {
				v.m.cacheErrors.Inc() // the lock expires by itself
			}
			return it, outcome, err
		}
		if !waiting {
			if e, ok := s.read(ctx, v, stalePrefix+strconv.FormatInt(id, 10)); ok {
				v.m.staleServed.Inc()
				return e.Item, OutcomeStale, nil
			}
			waiting = true
			v.m.lockWaits.Inc()
		}
		if time.Now().After(deadline) {
			it, err := s.loadAndSet(ctx, v, id)
			return it, OutcomeMiss, err
		}
		if it, ok, err := s.pollOnce(ctx, v, id, p); ok || err != nil {
			return it, OutcomeWaited, err
		}
	}
}

// pollBackoff is how far a waiter's re-reads back off: the first after
// lock_poll, each next one twice as late, up to pollBackoff times lock_poll
// apart. Every waiter re-reading every lock_poll is a herd of its own on
// Redis: hundreds of waiters behind one slow load at 5 ms each took the
// docker testbed's 2 cores (Redis, toxiproxy) from under the load it waited for.
const pollBackoff = 8

// poll is one waiter's next re-read delay.
type poll struct{ next, max time.Duration }

func newPoll(v view) *poll {
	d := time.Duration(v.cfg.LockPoll)
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
		return e.Item, OutcomeHit, nil
	}
	if ctx.Err() != nil {
		return Item{}, "", errCanceled
	}
	it, err := s.loadAndSet(ctx, v, id)
	return it, OutcomeMiss, err
}

// loadSWR serves the stale copy while one background refresh runs in the
// fleet (stale-while-revalidate): a request that finds the fresh copy gone
// but the stale one there never waits for Postgres.
func (s *Server) loadSWR(ctx context.Context, v view, id int64) (Item, string, error) {
	e, ok := s.read(ctx, v, stalePrefix+strconv.FormatInt(id, 10))
	if !ok {
		it, err := s.loadAndSet(ctx, v, id)
		return it, OutcomeMiss, err
	}
	v.m.staleServed.Inc()
	lockKey := lockPrefix + strconv.FormatInt(id, 10)
	token := fmt.Sprintf("%s:%x", s.opts.Name, math.Float64bits(s.random()))
	if won, err := s.rdb.SetNX(ctx, lockKey, token, time.Duration(v.cfg.LockTTL)).Result(); err == nil && won {
		s.background(func() {
			_, _ = s.loadAndSet(context.Background(), v, id)
			_ = s.unlock.Run(context.Background(), s.rdb, []string{lockKey}, token).Err()
		})
	}
	return e.Item, OutcomeStale, nil
}

// setWithLease stores an entry only while the lease token is still the
// key's: a set without the valid token is refused (memcache leases).
const setWithLease = `if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("SET", KEYS[2], ARGV[2], "PX", ARGV[3])
redis.call("SET", KEYS[3], ARGV[2], "PX", ARGV[4])
return 1`

// loadLeased gives the first miss of a key a lease token (at most one per
// key per lease_interval, as memcache leases); it loads and sets with the
// token. The others wait for its value, re-reading as lock's waiters do for
// up to lease_wait; then they load themselves, and their set is refused.
func (s *Server) loadLeased(ctx context.Context, v view, id int64) (Item, string, error) {
	leaseKey := leasePrefix + strconv.FormatInt(id, 10)
	token := s.token()
	won, err := s.rdb.SetNX(ctx, leaseKey, token, time.Duration(v.cfg.LeaseInterval)).Result()
	switch {
	case ctx.Err() != nil || err != nil: // no lease without Redis: behave as none
		return s.unclaimed(ctx, v, id)
	case won:
		if e, ok := s.read(ctx, v, ItemKey(id)); ok { // filled since this request missed
			return e.Item, OutcomeHit, nil
		}
		it, b, ttl, err := s.load(ctx, v, id)
		if err != nil {
			return it, OutcomeMiss, err
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RedisTimeout)
		defer cancel()
		keys := []string{leaseKey, ItemKey(id), stalePrefix + strconv.FormatInt(id, 10)}
		if err := s.leaseSet.Run(sctx, s.rdb, keys, token, b, ttl.Milliseconds(), time.Duration(v.cfg.StaleTTL).Milliseconds()).Err(); err != nil {
			v.m.cacheErrors.Inc()
		}
		return it, OutcomeMiss, nil
	}
	v.m.lockWaits.Inc()
	deadline := time.Now().Add(time.Duration(v.cfg.LeaseWait))
	for p := newPoll(v); time.Now().Before(deadline); {
		if it, ok, err := s.pollOnce(ctx, v, id, p); ok || err != nil {
			return it, OutcomeWaited, err
		}
	}
	it, _, _, err := s.load(ctx, v, id) // no token: the set would be refused
	return it, OutcomeMiss, err
}
