package api

import (
	"context"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// lockStrategy lets one request in the fleet load a key: the one that
// takes its lock in the cache (Redis SET NX, Memcached add).
type lockStrategy replica.LockKnobs

var (
	_ MissLoader = lockStrategy{}
	_ Reloader   = lockStrategy{}
)

// LoadMiss lets one request in the fleet load: the one that takes the
// lock (Cache.Add: SET NX PX, or Memcached's add) and still finds the cache empty (a request that
// missed just before the previous holder filled it must not load again).
// The others serve the stale copy, or, when there is none, re-read the
// cache until the value appears (after lock_poll, then backing off:
// pollBackoff). A crashed holder's lock expires after lock_ttl and the next
// waiter takes it; a waiter that has waited lock_wait loads by itself
// rather than fail.
func (l lockStrategy) LoadMiss(r *Request) (Item, string, error) {
	s, ctx, v, id := r.s, r.ctx, r.v, r.id
	lockKey := lockPrefix + strconv.FormatInt(id, 10)
	token := s.token()
	deadline := time.Now().Add(time.Duration(l.Wait))
	waiting, p := false, newPoll(v)
	for {
		ok, err := s.cache.Add(ctx, lockKey, token, time.Duration(l.TTL))
		switch {
		case ctx.Err() != nil || err != nil: // no lock without the cache: behave as none
			return s.unclaimed(ctx, v, id)
		case ok:
			it, outcome, err := s.loadHolding(ctx, v, id)
			if uerr := s.cache.DeleteIfEqual(context.WithoutCancel(ctx), lockKey, token); uerr != nil {
				v.m.cacheErrors.Inc() // the lock expires by itself
			}
			return it, outcome, err
		}
		if !waiting {
			if e, ok := s.read(ctx, v, staleKey(id)); ok {
				v.m.staleServed.Inc()
				return e.Item, admin.OutcomeStale, nil
			}
			waiting = true
			v.m.lockWaits.Inc()
		}
		if time.Now().After(deadline) {
			it, err := r.Load()
			return it, admin.OutcomeMiss, err
		}
		if it, ok, err := s.pollOnce(ctx, v, id, p); ok || err != nil {
			return it, admin.OutcomeWaited, err
		}
	}
}

// Reload lets one replica in the fleet reload the key; the others skip it.
func (l lockStrategy) Reload(r *Request) {
	s, ctx := r.s, r.ctx
	lockKey := lockPrefix + strconv.FormatInt(r.id, 10)
	token := "notify:" + s.opts.Name
	ok, err := s.cache.Add(ctx, lockKey, token, time.Duration(l.TTL))
	if err != nil || !ok {
		return // another replica reloads it
	}
	_, _ = r.Load()
	_ = s.cache.DeleteIfEqual(ctx, lockKey, token)
}
