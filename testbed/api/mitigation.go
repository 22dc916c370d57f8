package api

import (
	"context"
	"time"

	"github.com/herdbench/herdbench/testbed/replica"
)

// hooksOf is the value whose hooks (below) do what m says, m's words
// (name, kind, knobs) being package replica's: the type of this package
// over a default mitigation's knobs, or m itself, a mitigation of another
// registry with hooks of its own. Hooks have value receivers: the server
// calls them on the value configured now. Adding a mitigation is its
// words in package replica, its type here and its case.
func hooksOf(m replica.Mitigation) any {
	switch k := m.(type) {
	case replica.SingleflightKnobs:
		return singleflightStrategy(k)
	case replica.LockKnobs:
		return lockStrategy(k)
	case replica.XFetchKnobs:
		return xfetchStrategy(k)
	case replica.SWRKnobs:
		return swrStrategy(k)
	case replica.LeaseKnobs:
		return leaseStrategy(k)
	case replica.EarlyKnobs:
		return earlyStrategy(k)
	case replica.TTLJitterKnobs:
		return jitterStrategy(k)
	case replica.LocalKnobs:
		return localStrategy(k)
	case replica.RateLimitKnobs:
		return ratelimitStrategy(k)
	case replica.BreakerKnobs:
		return breakerStrategy(k)
	case replica.ShedKnobs:
		return shedStrategy(k)
	case replica.ShedPriorityKnobs:
		return shedPriorityStrategy(k)
	}
	return m
}

// counters are every Counter the mitigations of reg declare.
func counters(reg *replica.Mitigations) []Counter {
	var out []Counter
	for _, m := range reg.Mitigations() {
		if c, ok := hooksOf(m).(Counted); ok {
			out = append(out, c.Counters()...)
		}
	}
	return out
}

// MissLoader answers a request the shared cache missed: who loads, and
// what the others do meanwhile. Without one, the request loads (none).
type MissLoader interface {
	LoadMiss(r *Request) (Item, string, error)
}

// HitRefresher may load a hit's item before its entry expires. done: it
// answered the request (item and outcome); else the hit is served.
type HitRefresher interface {
	RefreshHit(r *Request, e Entry) (it Item, outcome string, done bool)
}

// Reloader reloads an item a broadcast invalidation names (notify).
// Without one, every replica loads it.
type Reloader interface {
	Reload(r *Request)
}

// TTLAdjuster changes how long a loaded entry is cached.
type TTLAdjuster interface {
	AdjustTTL(r *Request, ttl time.Duration) time.Duration
}

// Tier answers before the shared cache; next serves from Redis and
// Postgres.
type Tier interface {
	ServeTier(r *Request, next func() (Item, string, error)) (Item, string, error)
}

// RequestAdmitter may refuse a request at its start: an error wrapping
// ErrShed answers 503 and counts as shed.
type RequestAdmitter interface {
	AdmitRequest(r *Request) error
}

// LoadAdmitter may refuse a load before it queries Postgres: an error
// wrapping ErrShed answers 503 and counts as shed. release, when not nil,
// runs once the load ended.
type LoadAdmitter interface {
	AdmitLoad(r *Request) (release func(), err error)
}

// QueryGuard runs each attempt of the item query: an error wrapping
// ErrShed ends the load at once and counts as shed.
type QueryGuard interface {
	GuardQuery(r *Request, query func() (Item, error)) (Item, error)
}

// Stateful mitigations keep state across requests (a limiter, a breaker,
// an in-process tier). NewState makes it for the replica's config, at
// start, at every PUT /admin/config and at every reset; prev is the state
// it replaces (nil at start and reset). Hooks find it with Request.State.
// A state of nil means the mitigation is not available to a request that
// names it in admin.StrategyHeader.
type Stateful interface {
	NewState(env StateEnv, prev any) any
}

// Forgetter is a state holding copies of items (local's tier): a write
// that deletes their cache entries (write_invalidate delete) drops them.
type Forgetter interface {
	Forget(ids []int64)
}

// StateEnv is what NewState may use.
type StateEnv struct {
	Replica    string         // the replica's name
	Config     replica.Config // the replica's config: every mitigation's knobs
	Configured bool           // the replica's own strategy has this mitigation
	Count      func(metric string)
}

// Counted mitigations have counters of their own, registered and reset
// with the replica's others; Request.Count adds one.
type Counted interface {
	Counters() []Counter
}

// Counter is one counter of a mitigation's.
type Counter struct{ Name, Help string }

// Entry is a cached item with what a refresh decision needs: how long
// its load took and when it expires.
type Entry struct {
	Item     Item    `json:"item"`
	DeltaMS  float64 `json:"delta_ms"`
	ExpiryMS int64   `json:"expiry_ms"` // Unix milliseconds
}

// Request is one item request as a mitigation's hooks see it.
type Request struct {
	ctx context.Context
	id  int64
	s   *Server
	v   view
}

// Context is the request's: it ends when the client goes away or its
// propagated deadline passes.
func (r *Request) Context() context.Context { return r.ctx }

// ID is the requested item's.
func (r *Request) ID() int64 { return r.id }

// Load loads the item from Postgres through the admitters and guards, and
// caches it: what a miss does under none.
func (r *Request) Load() (Item, error) { return r.s.loadAndSet(r.ctx, r.v, r.id) }

// Random is a uniform draw in [0, 1) from the replica's seeded source.
func (r *Request) Random() float64 { return r.s.random() }

// Count adds one to the counter metric, one of the Counters of a
// mitigation of the replica's registry.
func (r *Request) Count(metric string) { r.v.m.count(metric) }

// State is mitigation name's state (Stateful), nil without one.
func (r *Request) State(name string) any { return r.v.state[name] }
