package api

import (
	"strconv"

	"golang.org/x/sync/singleflight"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// singleflightStrategy shares one load among the concurrent requests of a
// process for the same key.
type singleflightStrategy replica.SingleflightKnobs

var (
	_ MissLoader = singleflightStrategy{}
	_ Reloader   = singleflightStrategy{}
	_ Stateful   = singleflightStrategy{}
)

// NewState is the group of flights, kept through a config change.
func (singleflightStrategy) NewState(_ StateEnv, prev any) any {
	if prev != nil {
		return prev
	}
	return new(singleflight.Group)
}

// LoadMiss shares one load among the process's requests for the key. The
// leader reads the cache again first: a request that missed just before
// the previous flight filled it must not load again.
func (singleflightStrategy) LoadMiss(r *Request) (Item, string, error) {
	sf := r.State(replica.Singleflight).(*singleflight.Group)
	led, loaded := false, false
	res, err, _ := sf.Do(strconv.FormatInt(r.id, 10), func() (any, error) {
		led = true // only the leader's own closure runs
		if e, ok := r.s.read(r.ctx, r.v, ItemKey(r.id)); ok {
			return e.Item, nil
		}
		loaded = true
		return r.Load()
	})
	it, _ := res.(Item)
	switch {
	case led && loaded:
		return it, admin.OutcomeMiss, err
	case led:
		return it, admin.OutcomeHit, err
	}
	r.v.m.coalesced.Inc()
	return it, admin.OutcomeCoalesced, err
}

// Reload shares a load already running in this replica.
func (singleflightStrategy) Reload(r *Request) {
	sf := r.State(replica.Singleflight).(*singleflight.Group)
	_, _, _ = sf.Do(strconv.FormatInt(r.id, 10), func() (any, error) { return r.Load() })
}
