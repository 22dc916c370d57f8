package api

import (
	"context"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// leaseStrategy is memcache's leases: one token per key per interval, and
// a set needs it.
type leaseStrategy replica.LeaseKnobs

var _ MissLoader = leaseStrategy{}

// LoadMiss gives the first miss of a key a lease token (at most one per
// key per lease_interval, as memcache leases); it loads and sets with the
// token. The others wait for its value, re-reading as lock's waiters do for
// up to lease_wait; then they load themselves, and their set is refused.
func (l leaseStrategy) LoadMiss(r *Request) (Item, string, error) {
	s, ctx, v, id := r.s, r.ctx, r.v, r.id
	leaseKey := leasePrefix + strconv.FormatInt(id, 10)
	token := s.token()
	claim := Claim{Key: leaseKey, Token: token, Expires: time.Now().Add(time.Duration(l.Interval))}
	won, err := s.cache.Add(ctx, leaseKey, token, time.Duration(l.Interval))
	switch {
	case ctx.Err() != nil || err != nil: // no lease without the cache: behave as none
		return s.unclaimed(ctx, v, id)
	case won:
		if e, ok := s.read(ctx, v, ItemKey(id)); ok { // filled since this request missed
			return e.Item, admin.OutcomeHit, nil
		}
		it, b, ttl, err := s.load(ctx, v, id)
		if err != nil {
			return it, admin.OutcomeMiss, err
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RedisTimeout)
		defer cancel()
		// a set with the token, refused once another holds the key's lease
		if _, err := s.cache.SetIfHeld(sctx, claim, entries(v, id, b, ttl)...); err != nil {
			v.m.cacheErrors.Inc()
		}
		return it, admin.OutcomeMiss, nil
	}
	v.m.lockWaits.Inc()
	deadline := time.Now().Add(time.Duration(l.Wait))
	for p := newPoll(v); time.Now().Before(deadline); {
		if it, ok, err := s.pollOnce(ctx, v, id, p); ok || err != nil {
			return it, admin.OutcomeWaited, err
		}
	}
	it, _, _, err := s.load(ctx, v, id) // no token: the set would be refused
	return it, admin.OutcomeMiss, err
}
