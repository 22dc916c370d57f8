package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/herdbench/herdbench/retry"
	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// The cache's key layout, the same in Redis and Memcached. Triggers match
// ItemKeyPattern, which covers the fresh copies only: stale copies and
// locks live under other prefixes. The longest key, a lease's of the
// largest id, is 30 bytes: far under Memcached's 250 (TestKeysFitMemcached).
const (
	ItemKeyPattern = "item:*"
	itemPrefix     = "item:"
	stalePrefix    = "stale:item:"
	lockPrefix     = "lock:item:"
	leasePrefix    = "lease:item:"
)

// ItemKey is the cache key of item id's fresh copy.
func ItemKey(id int64) string { return itemPrefix + strconv.FormatInt(id, 10) }

// staleKey is the cache key of item id's stale copy.
func staleKey(id int64) string { return stalePrefix + strconv.FormatInt(id, 10) }

// ItemQuery is the expensive query the item loader runs: a real read of the
// row and its likes alongside pg_sleep($2), which holds the connection for the query cost
// so the database is connection-bound rather than CPU-bound. Observers find it
// in pg_stat_statements by this exact text.
const ItemQuery = "SELECT i.id, i.name, i.payload, l.n FROM items i, pg_sleep($2), likes l WHERE i.id = $1 AND l.item_id = i.id"

// Item is what GET /items/{id} returns.
type Item struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Payload string `json:"payload"`
	Likes   int64  `json:"likes"` // its likes (POST /items/{id}/likes) when it was loaded
}

var errNotFound = errors.New("item not found")

// serve answers one item request under the strategy of v and says how:
// its admitters, its tiers, then the shared cache.
func (s *Server) serve(ctx context.Context, v view, id int64) (Item, string, error) {
	r := &Request{ctx: ctx, id: id, s: s, v: v}
	for _, a := range v.plan.admitReq {
		if err := a.AdmitRequest(r); err != nil {
			v.m.shed.Inc()
			return Item{}, "", err
		}
	}
	return s.serveTiers(r, v.plan.tiers)
}

// serveTiers answers from the first of tiers, which falls through to the
// next, the last to the shared cache.
func (s *Server) serveTiers(r *Request, tiers []Tier) (Item, string, error) {
	if len(tiers) == 0 {
		return s.serveShared(r)
	}
	return tiers[0].ServeTier(r, func() (Item, string, error) { return s.serveTiers(r, tiers[1:]) })
}

// serveShared answers from Redis and Postgres, the tiers every replica
// shares: a hit is served unless a refresher loads it early; a miss is
// the loader's, or loads (none).
func (s *Server) serveShared(r *Request) (Item, string, error) {
	ctx, v, id := r.ctx, r.v, r.id
	e, ok := s.read(ctx, v, ItemKey(id))
	if ctx.Err() != nil {
		return Item{}, "", errCanceled
	}
	if ok {
		for _, h := range v.plan.refresh {
			if it, outcome, done := h.RefreshHit(r, e); done {
				return it, outcome, nil
			}
		}
		return e.Item, admin.OutcomeHit, nil
	}
	if v.plan.loader != nil {
		return v.plan.loader.LoadMiss(r)
	}
	it, err := s.loadAndSet(ctx, v, id)
	if errors.Is(err, errStaleOK) { // serve the stale copy, or fail fast
		if e, ok := s.read(ctx, v, staleKey(id)); ok {
			v.m.staleServed.Inc()
			return e.Item, admin.OutcomeStale, nil
		}
	}
	return it, admin.OutcomeMiss, err
}

// ErrShed ends a request that a protection refused: 503 at once. A
// mitigation's admitter wraps it.
var ErrShed = errors.New("shed")

// errStaleOK is ErrShed after which a miss under none serves the stale
// copy, if there is one (an open breaker's).
var errStaleOK = fmt.Errorf("%w", ErrShed)

// errCanceled ends a request whose client went away: it must not fall
// through to a load nobody will read.
var errCanceled = errors.New("client went away")

// read gets a cached entry. A cache error counts as a miss, so the
// request falls through to Postgres as cache-aside code usually does; a
// client that went away is not a cache error (see gone).
func (s *Server) read(ctx context.Context, v view, key string) (Entry, bool) {
	b, ok, err := s.cache.Get(ctx, key)
	var e Entry
	switch {
	case err != nil:
		if ctx.Err() == nil {
			v.m.cacheErrors.Inc()
		}
		return e, false
	case !ok:
		v.m.cacheMisses.Inc()
		return e, false
	}
	if err := json.Unmarshal(b, &e); err != nil {
		v.m.cacheErrors.Inc()
		return e, false
	}
	v.m.cacheHits.Inc()
	return e, true
}

// loadAndSet runs the item query and caches the result with its TTL (plus
// jitter when enabled) and a stale copy under the longer stale TTL. The load
// is detached from the client: a client that gives up does not cancel work
// that other requests will use, as in most cache-aside services.
func (s *Server) loadAndSet(ctx context.Context, v view, id int64) (Item, error) {
	it, b, ttl, err := s.load(ctx, v, id)
	if err != nil {
		return it, err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RedisTimeout)
	defer cancel()
	if err := s.cache.Set(ctx, entries(v, id, b, ttl)...); err != nil {
		v.m.cacheErrors.Inc() // the item is still served
	}
	return it, nil
}

// entries are what caching one item stores: its entry under its key for
// ttl, and the same entry as the stale copy for stale_ttl. A miss, the
// lease's holder and the bulk fill store the same.
func entries(v view, id int64, b []byte, ttl time.Duration) []CacheEntry {
	return []CacheEntry{
		{Key: ItemKey(id), Value: b, TTL: ttl},
		{Key: staleKey(id), Value: b, TTL: time.Duration(v.cfg.StaleTTL)},
	}
}

// load runs the item query and returns the item, the entry to cache and
// its TTL, jitter included. A failed query (an error, or db-timeout) is
// retried per the db_retry policy, each attempt with its own db-timeout:
// the layer of a cascade closest to the database.
func (s *Server) load(ctx context.Context, v view, id int64) (Item, []byte, time.Duration, error) {
	// a propagated deadline bounds the whole load, retries included; a
	// detached load outlives its request, a canceled one dies with it
	own := context.WithoutCancel(ctx)
	if v.cfg.AbandonedLoad == replica.AbandonCanceled {
		own = ctx
	}
	base, cancelBase, expired := bounded(own, ctx)
	defer cancelBase()
	if expired {
		return Item{}, nil, 0, fmt.Errorf("load item %d: not started: %w", id, errExpired)
	}
	// the first attempt's db-timeout bounds the wait for an admitter too
	first, cancel := context.WithTimeout(base, s.opts.DBTimeout)
	defer cancel()
	r := &Request{ctx: first, id: id, s: s, v: v}
	for _, a := range v.plan.admitLoad {
		release, err := a.AdmitLoad(r)
		if err != nil {
			v.m.shed.Inc()
			return Item{}, nil, 0, err
		}
		if release != nil {
			defer release()
		}
	}
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	var backoff *retry.Backoff
	var prev time.Duration
	for n := 0; ; n++ {
		ctx := first
		if n > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(base, s.opts.DBTimeout)
			defer cancel()
		}
		it, took, err := s.query(ctx, v, id)
		switch {
		case errors.Is(err, ErrShed): // a guard refused it
			return Item{}, nil, 0, err
		case errors.Is(err, errNotFound):
			return it, nil, 0, errNotFound
		case err == nil:
			b, ttl := s.entry(v, it, took)
			return it, b, ttl, nil
		}
		if base.Err() != nil {
			return it, nil, 0, fmt.Errorf("load item %d: %w: %v", id, errExpired, err)
		}
		if backoff == nil {
			backoff = retry.NewBackoff(v.cfg.DBRetry.Policy, rand.New(rand.NewPCG(math.Float64bits(s.random()), uint64(id))))
		}
		if n >= backoff.Retries() {
			return it, nil, 0, fmt.Errorf("load item %d: %w", id, err)
		}
		prev = backoff.Delay(n, prev)
		if d, ok := base.Deadline(); ok && time.Until(d) <= prev {
			return it, nil, 0, fmt.Errorf("load item %d: no retry past the deadline: %w: %v", id, errExpired, err)
		}
		v.m.loadRetries.Inc()
		time.Sleep(prev)
	}
}

// query runs the item query once under ctx, through the breaker when it is
// on, and counts it: a load when the database completed it
// (pg_stat_statements counts it, or MariaDB's digest table), a load error
// when not.
func (s *Server) query(ctx context.Context, v view, id int64) (Item, time.Duration, error) {
	start := time.Now()
	query := func() (Item, error) { return s.db.Item(ctx, id, time.Duration(v.cfg.QueryCost)) }
	r := &Request{ctx: ctx, id: id, s: s, v: v}
	run := query
	for _, g := range v.plan.guards {
		inner := run
		run = func() (Item, error) { return g.GuardQuery(r, inner) }
	}
	it, err := run()
	if errors.Is(err, ErrShed) {
		v.m.shed.Inc()
		return Item{}, 0, err
	}
	took := time.Since(start)
	switch {
	case errors.Is(err, errNotFound):
		v.m.loads.Inc() // the query completed: pg_stat_statements counts it
	case err != nil:
		v.m.loadErrors.Inc()
	default:
		v.m.loads.Inc()
		v.m.loadDuration.Observe(took.Seconds())
	}
	return it, took, err
}

// entry is the cached form of an item loaded in took, and its TTL, as
// the strategy's TTLAdjusters leave it: what xfetch reads back (the load's
// time, the expiry).
func (s *Server) entry(v view, it Item, took time.Duration) ([]byte, time.Duration) {
	ttl := time.Duration(v.cfg.TTL)
	r := &Request{ctx: context.Background(), id: it.ID, s: s, v: v}
	for _, a := range v.plan.ttl {
		ttl = a.AdjustTTL(r, ttl)
	}
	b, _ := json.Marshal(Entry{
		Item:     it,
		DeltaMS:  float64(took) / float64(time.Millisecond),
		ExpiryMS: time.Now().Add(ttl).UnixMilli(),
	})
	return b, ttl
}
