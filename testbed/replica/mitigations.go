package replica

import (
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Mitigation is one strategy of the replicas, a part of Config.Strategy:
// its name, a line saying what it does and its kind. Its knobs are the
// fields of its struct, each with a json tag (its flat key in PUT
// /admin/config, scenario files and results, beside Config's own) and a
// help tag (its flag's help); the value a registry holds is their
// defaults, and a Problems method, when it has one, checks their ranges.
// What it does is the server's (testbed/api): the hooks of the type it
// gives the mitigation's knobs, or of the mitigation's own type, with
// value receivers, called on the value configured now.
//
// Adding a mitigation is its words here and one line in
// DefaultMitigations, and its hooks in testbed/api (docs/architecture.md,
// "Recipe: add a mitigation").
type Mitigation interface {
	Name() string
	Describe() string
	Kind() string // one of the Kind constants
}

// Kinds of mitigation, what `herdbench mitigations` shows. A strategy has
// at most one of KindLoader and KindRefresh together (Exclusive), and none
// only alone. The hooks named are testbed/api's.
const (
	KindNone       = "none"       // plain cache-aside
	KindLoader     = "loader"     // decides who loads on a miss (MissLoader)
	KindRefresh    = "refresh"    // decides when a hit loads before expiry (HitRefresher)
	KindTTL        = "ttl"        // changes what is cached for how long (TTLAdjuster)
	KindTier       = "tier"       // answers before the shared cache (Tier)
	KindProtection = "protection" // refuses loads to protect the database (LoadAdmitter, QueryGuard, RequestAdmitter)
)

// Exclusive mitigations of one group cannot be combined: the loaders and
// refreshers (who loads on a miss, or when a hit reloads) are one group,
// shed and shed_priority another.
type Exclusive interface{ ExclusiveGroup() string }

// DefaultMitigations returns every mitigation the replicas have, each
// with its default knobs. The order is that of help text, error messages
// and listings.
func DefaultMitigations() *Mitigations {
	return NewMitigations(
		NoneKnobs{},
		SingleflightKnobs{},
		LockKnobs{TTL: herd.Duration(lockTTL), Wait: herd.Duration(lockWait), Poll: herd.Duration(lockPoll)},
		XFetchKnobs{Beta: 1},
		SWRKnobs{},
		LeaseKnobs{Interval: herd.Duration(leaseInterval), Wait: herd.Duration(leaseWait)},
		EarlyKnobs{Probability: 0.01},
		TTLJitterKnobs{Fraction: 0.2},
		LocalKnobs{TTL: herd.Duration(localTTL), Jitter: 0.2},
		RateLimitKnobs{Rate: 50, Burst: 10},
		BreakerKnobs{Failures: 5, Open: herd.Duration(breakerOpen)},
		ShedKnobs{MinLimit: 1, MaxLimit: 10, InitialLimit: 5},
		ShedPriorityKnobs{Wait: herd.Duration(shedWait)},
	)
}

// NoneKnobs are none's: plain cache-aside, every miss loads. It has no
// knobs and no hooks: the server's own paths are none's.
type NoneKnobs struct{}

func (NoneKnobs) Name() string     { return None }
func (NoneKnobs) Describe() string { return "plain cache-aside: every miss loads" }
func (NoneKnobs) Kind() string     { return KindNone }

// SingleflightKnobs are singleflight's, which shares one load among the
// concurrent requests of a process for the same key: none.
type SingleflightKnobs struct{}

func (SingleflightKnobs) Name() string           { return Singleflight }
func (SingleflightKnobs) Describe() string       { return "coalesce concurrent loads per process" }
func (SingleflightKnobs) Kind() string           { return KindLoader }
func (SingleflightKnobs) ExclusiveGroup() string { return KindLoader }

// LockKnobs are lock's, which lets one request in the fleet load a key:
// the one that takes its lock in the cache (Redis SET NX, Memcached add).
type LockKnobs struct {
	TTL  herd.Duration `json:"lock_ttl" help:"expiry of the fleet lock, so a crashed holder's lock ends"`
	Wait herd.Duration `json:"lock_wait" help:"longest a lock waiter waits before loading itself"`
	Poll herd.Duration `json:"lock_poll" help:"when a lock or lease waiter first re-reads the cache; each next re-read waits twice as long, up to 8 times this"`
}

// lock_ttl outlasts the default DB timeout (5s), so a slow holder keeps its
// lock while it loads; lock_wait outlasts lock_ttl, so waiters are still
// there to take over a crashed holder's lock when it expires.
const (
	lockTTL  = 6 * time.Second
	lockWait = 8 * time.Second
	lockPoll = 5 * time.Millisecond
)

func (LockKnobs) Name() string { return Lock }
func (LockKnobs) Describe() string {
	return "fleet-wide lock in the cache, stale copy or wait for the rest"
}
func (LockKnobs) Kind() string           { return KindLoader }
func (LockKnobs) ExclusiveGroup() string { return KindLoader }

func (l LockKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if l.TTL < herd.Duration(time.Millisecond) {
		errs.Add("lock_ttl", "%s is too short (accepted: 1ms or more)", l.TTL)
	}
	if l.Wait < 0 {
		errs.Add("lock_wait", "%s is negative (accepted: 0 or more)", l.Wait)
	}
	if l.Poll < herd.Duration(time.Millisecond) {
		errs.Add("lock_poll", "%s is too short (accepted: 1ms or more)", l.Poll)
	}
	return errs
}

// XFetchKnobs are xfetch's, probabilistic early recomputation (Vattani,
// Chierichetti, Lowenstein, VLDB 2015): a hit recomputes when
// now - delta*beta*ln(rand()) >= expiry.
type XFetchKnobs struct {
	Beta float64 `json:"xfetch_beta" help:"xfetch's beta (greater than 0); larger recomputes earlier"`
}

func (XFetchKnobs) Name() string { return XFetch }
func (XFetchKnobs) Describe() string {
	return "probabilistic early recomputation (Vattani et al. 2015)"
}
func (XFetchKnobs) Kind() string           { return KindRefresh }
func (XFetchKnobs) ExclusiveGroup() string { return KindLoader }

func (x XFetchKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if !herd.Finite(x.Beta) || x.Beta <= 0 {
		errs.Add("xfetch_beta", "%g out of range (accepted: greater than 0; 1 is the paper's default)", x.Beta)
	}
	return errs
}

// SWRKnobs are swr's, stale-while-revalidate: the stale copy is served
// while one background refresh runs in the fleet, under lock's lock
// (lock_ttl). It has no knobs of its own.
type SWRKnobs struct{}

func (SWRKnobs) Name() string { return SWR }
func (SWRKnobs) Describe() string {
	return "stale-while-revalidate: stale copy served while one background refresh runs"
}
func (SWRKnobs) Kind() string           { return KindLoader }
func (SWRKnobs) ExclusiveGroup() string { return KindLoader }

// LeaseKnobs are lease's, memcache's leases: one token per key per
// interval, and a set needs it.
type LeaseKnobs struct {
	Interval herd.Duration `json:"lease_interval" help:"lease: at most one token per key per interval"`
	Wait     herd.Duration `json:"lease_wait" help:"lease: longest a request waits for the token holder's value"`
}

const (
	leaseInterval = 2 * time.Second
	leaseWait     = time.Second
)

func (LeaseKnobs) Name() string { return Lease }
func (LeaseKnobs) Describe() string {
	return "memcache leases: one token per key per interval; sets need it"
}
func (LeaseKnobs) Kind() string           { return KindLoader }
func (LeaseKnobs) ExclusiveGroup() string { return KindLoader }

func (l LeaseKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if l.Interval < herd.Duration(time.Millisecond) {
		errs.Add("lease_interval", "%s is too short (accepted: 1ms or more)", l.Interval)
	}
	if l.Wait < 0 {
		errs.Add("lease_wait", "%s is negative (accepted: 0 or more)", l.Wait)
	}
	return errs
}

// EarlyKnobs are early's, which refreshes in the background on a fixed
// share of hits.
type EarlyKnobs struct {
	Probability float64 `json:"early_probability" help:"early: chance of a background refresh on each hit, 0 to 1"`
}

func (EarlyKnobs) Name() string { return Early }
func (EarlyKnobs) Describe() string {
	return "a fixed probability of background refresh on each hit"
}
func (EarlyKnobs) Kind() string           { return KindRefresh }
func (EarlyKnobs) ExclusiveGroup() string { return KindLoader }

func (e EarlyKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if !herd.Finite(e.Probability) || e.Probability < 0 || e.Probability > 1 {
		errs.Add("early_probability", "%g out of range (accepted: 0 to 1)", e.Probability)
	}
	return errs
}

// TTLJitterKnobs are ttl_jitter's, which adds a random fraction of the TTL
// on every set, so keys cached together do not expire together.
type TTLJitterKnobs struct {
	Fraction float64 `json:"ttl_jitter" help:"fraction of the TTL added at random by ttl_jitter, 0 to 1"`
}

func (TTLJitterKnobs) Name() string     { return TTLJitter }
func (TTLJitterKnobs) Describe() string { return "random fraction of the TTL added on every set" }
func (TTLJitterKnobs) Kind() string     { return KindTTL }

func (j TTLJitterKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if !herd.Finite(j.Fraction) || j.Fraction < 0 || j.Fraction > 1 {
		errs.Add("ttl_jitter", "%g out of range (accepted: 0 to 1, a fraction of ttl)", j.Fraction)
	}
	return errs
}

// LocalKnobs are local's, an in-process tier in front of Redis, with its
// own TTL and jitter.
type LocalKnobs struct {
	TTL    herd.Duration `json:"local_ttl" help:"local: lifetime of a replica's in-process copy"`
	Jitter float64       `json:"local_jitter" help:"local: fraction of local-ttl added at random, 0 to 1"`
}

const localTTL = 5 * time.Second

func (LocalKnobs) Name() string { return Local }
func (LocalKnobs) Describe() string {
	return "an in-process tier in front of Redis, with its own TTL and jitter"
}
func (LocalKnobs) Kind() string { return KindTier }

func (l LocalKnobs) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if l.TTL < herd.Duration(time.Millisecond) {
		errs.Add("local_ttl", "%s is too short (accepted: 1ms or more)", l.TTL)
	}
	if !herd.Finite(l.Jitter) || l.Jitter < 0 || l.Jitter > 1 {
		errs.Add("local_jitter", "%g out of range (accepted: 0 to 1, a fraction of local_ttl)", l.Jitter)
	}
	return errs
}
