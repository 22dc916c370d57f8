package api

import (
	"context"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// swrStrategy is stale-while-revalidate: the stale copy is served while
// one background refresh runs in the fleet.
type swrStrategy replica.SWRKnobs

var _ MissLoader = swrStrategy{}

// LoadMiss serves the stale copy while one background refresh runs in
// the fleet, under lock's lock (lock_ttl): a request that finds the fresh
// copy gone but the stale one there never waits for Postgres.
func (swrStrategy) LoadMiss(r *Request) (Item, string, error) {
	s, ctx, v, id := r.s, r.ctx, r.v, r.id
	e, ok := s.read(ctx, v, staleKey(id))
	if !ok {
		it, err := r.Load()
		return it, admin.OutcomeMiss, err
	}
	v.m.staleServed.Inc()
	lockKey := lockPrefix + strconv.FormatInt(id, 10)
	token := s.token()
	ttl := time.Duration(replica.KnobsOf[replica.LockKnobs](v.cfg).TTL)
	if won, err := s.cache.Add(ctx, lockKey, token, ttl); err == nil && won {
		bg := *r
		bg.ctx = context.Background()
		s.background(func() {
			_, _ = bg.Load()
			_ = s.cache.DeleteIfEqual(context.Background(), lockKey, token)
		})
	}
	return e.Item, admin.OutcomeStale, nil
}
