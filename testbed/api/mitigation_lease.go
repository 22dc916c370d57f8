package api

import (
	"context"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// leaseStrategy is memcache's leases: one token per key per interval, and
// a set needs it.
type leaseStrategy struct {
	Interval herd.Duration `json:"lease_interval" help:"lease: at most one token per key per interval"`
	Wait     herd.Duration `json:"lease_wait" help:"lease: longest a request waits for the token holder's value"`
}

const (
	leaseInterval = 2 * time.Second
	leaseWait     = time.Second
)

var _ MissLoader = leaseStrategy{}

func (leaseStrategy) Name() string { return Lease }
func (leaseStrategy) Describe() string {
	return "memcache leases: one token per key per interval; sets need it"
}
func (leaseStrategy) Kind() string           { return KindLoader }
func (leaseStrategy) ExclusiveGroup() string { return KindLoader }

func (l leaseStrategy) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if l.Interval < herd.Duration(time.Millisecond) {
		errs.Add("lease_interval", "%s is too short (accepted: 1ms or more)", l.Interval)
	}
	if l.Wait < 0 {
		errs.Add("lease_wait", "%s is negative (accepted: 0 or more)", l.Wait)
	}
	return errs
}

// setWithLease stores an entry only while the lease token is still the
// key's: a set without the valid token is refused (memcache leases).
const setWithLease = `if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end
redis.call("SET", KEYS[2], ARGV[2], "PX", ARGV[3])
redis.call("SET", KEYS[3], ARGV[2], "PX", ARGV[4])
return 1`

// LoadMiss gives the first miss of a key a lease token (at most one per
// key per lease_interval, as memcache leases); it loads and sets with the
// token. The others wait for its value, re-reading as lock's waiters do for
// up to lease_wait; then they load themselves, and their set is refused.
func (l leaseStrategy) LoadMiss(r *Request) (Item, string, error) {
	s, ctx, v, id := r.s, r.ctx, r.v, r.id
	leaseKey := leasePrefix + strconv.FormatInt(id, 10)
	token := s.token()
	won, err := s.rdb.SetNX(ctx, leaseKey, token, time.Duration(l.Interval)).Result()
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
	deadline := time.Now().Add(time.Duration(l.Wait))
	for p := newPoll(v); time.Now().Before(deadline); {
		if it, ok, err := s.pollOnce(ctx, v, id, p); ok || err != nil {
			return it, OutcomeWaited, err
		}
	}
	it, _, _, err := s.load(ctx, v, id) // no token: the set would be refused
	return it, OutcomeMiss, err
}
