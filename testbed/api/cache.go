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

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"

	"github.com/herdbench/herdbench/retry"
)

// Redis key layout. Triggers match ItemKeyPattern, which covers the fresh
// copies only: stale copies and locks live under other prefixes.
const (
	ItemKeyPattern = "item:*"
	itemPrefix     = "item:"
	stalePrefix    = "stale:item:"
	lockPrefix     = "lock:item:"
	leasePrefix    = "lease:item:"
)

// ItemKey is the Redis key of item id's fresh copy.
func ItemKey(id int64) string { return itemPrefix + strconv.FormatInt(id, 10) }

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

// entry is a cached item with what xfetch needs: how long the load took and
// when the entry expires.
type entry struct {
	Item     Item    `json:"item"`
	DeltaMS  float64 `json:"delta_ms"`
	ExpiryMS int64   `json:"expiry_ms"` // Unix milliseconds
}

var errNotFound = errors.New("item not found")

// serve answers one item request under the strategy of v and says how.
func (s *Server) serve(ctx context.Context, v view, id int64) (Item, string, error) {
	// ramp-up after a start: admit a share of requests growing to all
	if ramp := time.Duration(v.cfg.RampUp); v.st.ratelimit && ramp > 0 {
		if up := time.Since(s.started); up < ramp && s.random() >= float64(up)/float64(ramp) {
			v.m.shed.Inc()
			return Item{}, "", fmt.Errorf("%w: ramping up after start (%s of %s)", errShed, up.Round(time.Millisecond), ramp)
		}
	}
	if !v.st.local {
		return s.serveShared(ctx, v, id)
	}
	if it, ok := s.localGet(id); ok {
		v.m.localHits.Inc()
		return it, OutcomeLocal, nil
	}
	// a local miss fills the tier once per key, as loading caches such as
	// Caffeine's do: the replica's other requests for it wait and share it
	type filled struct {
		it      Item
		outcome string
	}
	led := false
	res, err, _ := v.sf.Do("local:"+strconv.FormatInt(id, 10), func() (any, error) {
		led = true
		it, outcome, err := s.serveShared(ctx, v, id)
		if err == nil {
			s.localPut(v, id, it)
		}
		return filled{it, outcome}, err
	})
	f, _ := res.(filled)
	if !led && err == nil {
		v.m.coalesced.Inc()
		return f.it, OutcomeCoalesced, nil
	}
	return f.it, f.outcome, err
}

// serveShared answers from Redis and Postgres, the tiers every replica
// shares.
func (s *Server) serveShared(ctx context.Context, v view, id int64) (Item, string, error) {
	e, ok := s.read(ctx, v, ItemKey(id))
	if ctx.Err() != nil {
		return Item{}, "", errCanceled
	}
	if ok {
		if v.st.loader == XFetch && s.xfetchDue(e, v.cfg.XFetchBeta) {
			v.m.earlyLoads.Inc()
			if it, err := s.loadAndSet(ctx, v, id); err == nil {
				return it, OutcomeEarly, nil
			}
			// the cached value is still valid: serve it
		}
		if v.st.loader == Early && s.random() < v.cfg.EarlyProbability {
			v.m.earlyLoads.Inc()
			s.background(func() { _, _ = s.loadAndSet(context.Background(), v, id) })
		}
		return e.Item, OutcomeHit, nil
	}
	switch v.st.loader {
	case Singleflight:
		return s.loadCoalesced(ctx, v, id)
	case Lock:
		return s.loadLocked(ctx, v, id)
	case SWR:
		return s.loadSWR(ctx, v, id)
	case Lease:
		return s.loadLeased(ctx, v, id)
	default:
		it, err := s.loadAndSet(ctx, v, id)
		if errors.Is(err, errBreakerOpen) { // serve the stale copy while open, or fail fast
			if e, ok := s.read(ctx, v, stalePrefix+strconv.FormatInt(id, 10)); ok {
				v.m.staleServed.Inc()
				return e.Item, OutcomeStale, nil
			}
		}
		return it, OutcomeMiss, err
	}
}

// errShed ends a request that a protection refused: 503 at once.
var errShed = errors.New("shed")

// errBreakerOpen is errShed by an open breaker.
var errBreakerOpen = fmt.Errorf("%w: the breaker around the database is open", errShed)

// errCanceled ends a request whose client went away: it must not fall
// through to a load nobody will read.
var errCanceled = errors.New("client went away")

// read gets a cached entry. A Redis error counts as a miss, so the request
// falls through to Postgres as cache-aside code usually does; a client that
// went away is not a Redis error (see gone).
func (s *Server) read(ctx context.Context, v view, key string) (entry, bool) {
	b, err := s.rdb.Get(ctx, key).Bytes()
	var e entry
	switch {
	case errors.Is(err, redis.Nil):
		v.m.cacheMisses.Inc()
		return e, false
	case err != nil:
		if ctx.Err() == nil {
			v.m.cacheErrors.Inc()
		}
		return e, false
	}
	if err := json.Unmarshal(b, &e); err != nil {
		v.m.cacheErrors.Inc()
		return e, false
	}
	v.m.cacheHits.Inc()
	return e, true
}

// xfetchDue is XFetch's test (Vattani, Chierichetti, Lowenstein, VLDB 2015):
// recompute when now - delta*beta*ln(rand()) >= expiry.
func (s *Server) xfetchDue(e entry, beta float64) bool {
	r := 1 - s.random() // (0, 1], so ln(r) is finite
	now := float64(time.Now().UnixMilli())
	return now-e.DeltaMS*beta*math.Log(r) >= float64(e.ExpiryMS)
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
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		s.set(ctx, p, v, id, b, ttl)
		return nil
	})
	if err != nil {
		v.m.cacheErrors.Inc() // the item is still served
	}
	return it, nil
}

// set queues what caching one item stores: its entry under its key for
// ttl, and the same entry as the stale copy for stale_ttl. A miss and the
// bulk fill store the same.
func (s *Server) set(ctx context.Context, p redis.Pipeliner, v view, id int64, b []byte, ttl time.Duration) {
	p.Set(ctx, ItemKey(id), b, ttl)
	p.Set(ctx, stalePrefix+strconv.FormatInt(id, 10), b, time.Duration(v.cfg.StaleTTL))
}

// load runs the item query and returns the item, the entry to cache and
// its TTL, jitter included. A failed query (an error, or db-timeout) is
// retried per the db_retry policy, each attempt with its own db-timeout:
// the layer of a cascade closest to the database.
func (s *Server) load(ctx context.Context, v view, id int64) (Item, []byte, time.Duration, error) {
	// a propagated deadline bounds the whole load, retries included
	base, cancelBase, expired := bounded(context.WithoutCancel(ctx), ctx)
	defer cancelBase()
	if expired {
		return Item{}, nil, 0, fmt.Errorf("load item %d: not started: %w", id, errExpired)
	}
	if v.st.ratelimit && !v.limiter.Allow() {
		v.m.shed.Inc()
		return Item{}, nil, 0, fmt.Errorf("%w: over %g loads/s", errShed, v.cfg.RateLimit)
	}
	// the first attempt's db-timeout bounds the wait for shed's permit too
	first, cancel := context.WithTimeout(base, s.opts.DBTimeout)
	defer cancel()
	if v.shed != nil {
		permit, err := v.shed.acquire(first)
		if err != nil {
			v.m.shed.Inc()
			return Item{}, nil, 0, err
		}
		// every completed load, failed ones too, tells the limit how long
		// loads take now
		defer permit.Record()
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
		case errors.Is(err, errBreakerOpen):
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
// on, and counts it: a load when Postgres completed it (pg_stat_statements
// counts it), a load error when not.
func (s *Server) query(ctx context.Context, v view, id int64) (Item, time.Duration, error) {
	start := time.Now()
	query := func() (Item, error) {
		var it Item
		err := s.db.QueryRow(ctx, ItemQuery, id, time.Duration(v.cfg.QueryCost).Seconds()).Scan(&it.ID, &it.Name, &it.Payload, &it.Likes)
		if errors.Is(err, pgx.ErrNoRows) {
			err = errNotFound
		}
		return it, err
	}
	var it Item
	var err error
	if v.st.breaker {
		it, err = v.breaker.Execute(query)
		if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
			v.m.shed.Inc()
			return Item{}, 0, errBreakerOpen
		}
	} else {
		it, err = query()
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

// entry is the cached form of an item loaded in took, and its TTL, jitter
// included: what xfetch reads back (the load's time, the expiry).
func (s *Server) entry(v view, it Item, took time.Duration) ([]byte, time.Duration) {
	ttl := time.Duration(v.cfg.TTL)
	if v.st.jitter {
		ttl += time.Duration(s.random() * v.cfg.TTLJitter * float64(ttl))
	}
	b, _ := json.Marshal(entry{
		Item:     it,
		DeltaMS:  float64(took) / float64(time.Millisecond),
		ExpiryMS: time.Now().Add(ttl).UnixMilli(),
	})
	return b, ttl
}

// localEntry is an item in the replica's in-process tier.
type localEntry struct {
	item    Item
	expires time.Time
}

func (s *Server) localGet(id int64) (Item, bool) {
	s.localMu.Lock()
	defer s.localMu.Unlock()
	e, ok := s.local[id]
	if !ok || time.Now().After(e.expires) {
		return Item{}, false
	}
	return e.item, true
}

// localPut keeps it for local_ttl plus up to local_jitter of it.
func (s *Server) localPut(v view, id int64, it Item) {
	ttl := time.Duration(v.cfg.LocalTTL)
	ttl += time.Duration(s.random() * v.cfg.LocalJitter * float64(ttl))
	s.localMu.Lock()
	defer s.localMu.Unlock()
	s.local[id] = localEntry{item: it, expires: time.Now().Add(ttl)}
}
