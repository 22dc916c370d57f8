package replica

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
)

// The names of the mitigations of DefaultMitigations, each a file
// mitigation_NAME.go.
const (
	None         = "none"          // plain cache-aside: every miss loads
	Singleflight = "singleflight"  // coalesce concurrent loads per process
	Lock         = "lock"          // fleet-wide Redis lock, stale copy or wait for the rest
	XFetch       = "xfetch"        // probabilistic early recomputation (Vattani et al. 2015)
	TTLJitter    = "ttl_jitter"    // random fraction of the TTL added on every set
	SWR          = "swr"           // stale-while-revalidate: stale copy served while one background refresh runs
	Lease        = "lease"         // memcache leases: one token per key per interval; sets need it
	Early        = "early"         // a fixed probability of background refresh on each hit
	Local        = "local"         // an in-process tier in front of Redis, with its own TTL and jitter
	RateLimit    = "ratelimit"     // a token bucket on DB loads, and a ramp-up after a start
	Breaker      = "breaker"       // a circuit breaker around the DB: stale copy or fail fast while open
	Shed         = "shed"          // an adaptive concurrency limit on DB loads: 503 at once above it
	ShedPriority = "shed_priority" // shed, but requests marked critical are admitted first and may queue
)

// Strategies lists the default registry's mitigations, in the order of
// help text and error messages.
var Strategies = defaultRegistry().Names()

// Protections are the default registry's strategies that refuse loads to
// protect the database (KindProtection).
var Protections = defaultRegistry().OfKind(KindProtection)

// Config is a replica's run-time configuration, switchable through
// PUT /admin/config. Strategy is one name or several joined with "+", such as
// "lock+ttl_jitter", each a mitigation of the config's registry. Every
// other field is a Knob (knobs.go): its help tag is its flag's help. The
// mitigations' own knobs (mit) are knobs too, flat among them in JSON;
// knobs of mitigations that are not enabled are kept but have no effect.
// A zero Config's mitigation knobs are the default registry's, all zero.
type Config struct {
	Strategy string `json:"strategy"`

	TTL       herd.Duration `json:"ttl" help:"lifetime of a cached item"`
	StaleTTL  herd.Duration `json:"stale_ttl" help:"lifetime of the stale copy the lock strategy serves"`
	QueryCost herd.Duration `json:"query_cost" help:"time the item query holds its connection (pg_sleep)"`
	// AbandonedLoad is what a load does once the request that started
	// it is gone (its client gave up): AbandonDetached or AbandonCanceled
	AbandonedLoad string  `json:"abandoned_load" help:"what a load does once the request that started it is gone: detached (it runs on and fills the cache) or canceled (it dies with its request)"`
	DBRetry       DBRetry `json:"db_retry" help:"retries of a failed item query (an error or --db-timeout), each with its own timeout: none, immediate:N, fixed:D:N, exp|full-jitter|equal-jitter|decorrelated:BASE:CAP:N"`

	mit *knobSet // the mitigations' knobs (Mitigation), nil: the default registry's, zero
	// Writes (POST /items/{id}/likes, writes.go): how a like reaches Postgres
	WriteStrategy    string        `json:"write_strategy" help:"how a write (POST /items/{id}/likes) reaches Postgres"`
	ApplyRate        float64       `json:"apply_rate" help:"queue: queued writes each replica applies per second; 0: as fast as they come"`
	WriteBatch       int           `json:"write_batch" help:"queue: writes a consumer applies in one statement"`
	CoalesceInterval herd.Duration `json:"coalesce_interval" help:"coalesce: how often a replica flushes the increments it holds"`
	WriteInvalidate  string        `json:"write_invalidate" help:"what an applied write does to the item's cache entry"`
}

// Write strategies accepted in Config.WriteStrategy.
const (
	WriteDirect   = "direct"   // one UPDATE per request, acknowledged once committed
	WriteQueue    = "queue"    // acknowledged once in a Redis stream; consumers apply batches
	WriteCoalesce = "coalesce" // acknowledged at once; each replica sums in memory and flushes
)

// The queue of the queue strategy: a Redis stream read by a consumer
// group, one consumer per replica.
const (
	WriteStream = "herdbench:writes"
	WriteGroup  = "appliers"
)

// WriteKnobs are the knobs of one write strategy each: set for another,
// they do nothing.
var WriteKnobs = map[string]string{"apply_rate": WriteQueue, "write_batch": WriteQueue, "coalesce_interval": WriteCoalesce}

// WriteStrategies is the one list of write strategy names.
var WriteStrategies = []string{WriteDirect, WriteQueue, WriteCoalesce}

// What an applied write does to the written item's cache entry, accepted
// in Config.WriteInvalidate.
const (
	InvalidateNone    = "none"    // nothing: reads see the write once the entry expires
	InvalidateDelete  = "delete"  // delete it: the next reads miss, and load under the read strategy
	InvalidateRefresh = "refresh" // broadcast it: every replica reloads it at once, under the read strategy
)

// What a load does once the request that started it is gone, accepted in
// Config.AbandonedLoad. The two published shapes of metastable failure
// need the two (docs/testbed.md): a retry storm sustains itself on
// detached loads, work done for clients that left; a look-aside cache
// stays cold on canceled ones, loads that die before they refill it.
const (
	AbandonDetached = "detached" // runs on to its end and caches its item, bounded by the db-timeout: work done for a client that left
	AbandonCanceled = "canceled" // canceled with the request's context: Postgres cancels the query, nothing is cached
)

// AbandonedLoads is the one list of Config.AbandonedLoad's values.
var AbandonedLoads = []string{AbandonDetached, AbandonCanceled}

// WriteInvalidations is the one list of Config.WriteInvalidate's values.
var WriteInvalidations = []string{InvalidateNone, InvalidateDelete, InvalidateRefresh}

// DBRetry is db_retry's policy, in the clients' forms (package retry),
// whose errors name the field.
type DBRetry struct{ retry.Policy }

// UnmarshalText reads the policy's short form.
func (d *DBRetry) UnmarshalText(b []byte) error {
	if err := d.Policy.UnmarshalText(b); err != nil {
		return fmt.Errorf("db_retry: %w", err)
	}
	return nil
}

// DefaultConfig is the configuration a replica starts with unless told
// otherwise: the default registry's (Mitigations.DefaultConfig).
var DefaultConfig = defaultRegistry().DefaultConfig()

// baseDefaults are Config's own knobs' defaults.
var baseDefaults = Config{
	Strategy: None,
	TTL:      herd.Duration(60 * time.Second),
	StaleTTL: herd.Duration(10 * time.Minute),
	// a recompute expensive enough that duplicate loads of a hot key pile
	// up, as in a real stampede: the one default of every command
	QueryCost:        herd.Duration(200 * time.Millisecond),
	AbandonedLoad:    AbandonDetached,
	DBRetry:          DBRetry{retry.Policy{Kind: retry.None}},
	WriteStrategy:    WriteDirect,
	ApplyRate:        0,
	WriteBatch:       100,
	CoalesceInterval: herd.Duration(time.Second),
	WriteInvalidate:  InvalidateDelete,
}

// Registry is the registry of c's strategy and mitigation knobs.
func (c Config) Registry() *Mitigations { return c.knobs().reg }

// Mitigation is the mitigation called name with c's knobs, if c's
// registry has it.
func (c Config) Mitigation(name string) (Mitigation, bool) {
	m, ok := c.knobs().vals[name]
	return m, ok
}

// knobs are c's mitigation knobs: the default registry's zeros when c
// has none.
func (c Config) knobs() *knobSet {
	if c.mit == nil {
		return defaultRegistry().zero
	}
	return c.mit
}

// KnobsOf is c's configured value of the mitigation of type T: its
// knobs, all zero when c's registry has no T.
func KnobsOf[T Mitigation](c Config) T {
	var zero T
	m, _ := c.knobs().vals[zero.Name()].(T)
	return m
}

// Validate returns every problem with c at once, each naming the field and
// the accepted values.
func (c Config) Validate() error { return c.Problems().Err() }

// Problems are every problem with c, each a FieldError naming its field.
func (c Config) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	bad := errs.Add
	if _, err := c.Registry().Parse(c.Strategy); err != nil {
		errs = append(errs, err)
	}
	if c.TTL < herd.Duration(time.Millisecond) {
		bad("ttl", "%s is too short (accepted: 1ms or more)", c.TTL)
	}
	if c.StaleTTL <= c.TTL {
		errs = append(errs, &herd.FieldError{Field: "stale_ttl",
			Msg: fmt.Sprintf("%s is not longer than ttl, %s (accepted: above %s, or a shorter ttl)", c.StaleTTL, c.TTL, c.TTL),
			Other: &herd.FieldError{Field: "ttl",
				Msg: fmt.Sprintf("%s is not shorter than stale_ttl's default, %s (accepted: below %s, or a stale_ttl above %s)", c.TTL, c.StaleTTL, c.StaleTTL, c.TTL)}})
	}
	if !slices.Contains(AbandonedLoads, c.AbandonedLoad) {
		bad("abandoned_load", "%q is not accepted (accepted: %s)", c.AbandonedLoad, strings.Join(AbandonedLoads, ", "))
	}
	set := c.knobs()
	for _, n := range set.reg.names {
		if p, ok := set.vals[n].(interface{ Problems() herd.FieldErrors }); ok {
			errs = append(errs, p.Problems()...)
		}
	}
	errs = append(errs, c.writeProblems()...)
	if c.QueryCost < 0 || c.QueryCost > herd.Duration(time.Minute) {
		bad("query_cost", "%s out of range (accepted: 0 to 1m)", c.QueryCost)
	}
	return errs
}

// writeProblems are Problems of the writes' knobs.
func (c Config) writeProblems() herd.FieldErrors {
	var errs herd.FieldErrors
	bad := errs.Add
	if !slices.Contains(WriteStrategies, c.WriteStrategy) {
		bad("write_strategy", "%q is not a write strategy (accepted: %s)", c.WriteStrategy, strings.Join(WriteStrategies, ", "))
	}
	if !herd.Finite(c.ApplyRate) || c.ApplyRate < 0 {
		bad("apply_rate", "%g out of range (accepted: 0, unbounded, or more writes/s)", c.ApplyRate)
	}
	if c.WriteBatch < 1 || c.WriteBatch > 10_000 {
		bad("write_batch", "%d out of range (accepted: 1 to 10000)", c.WriteBatch)
	}
	if c.CoalesceInterval < herd.Duration(time.Millisecond) || c.CoalesceInterval > herd.Duration(time.Minute) {
		bad("coalesce_interval", "%s out of range (accepted: 1ms to 1m)", c.CoalesceInterval)
	}
	if !slices.Contains(WriteInvalidations, c.WriteInvalidate) {
		bad("write_invalidate", "%q is not accepted (accepted: %s)", c.WriteInvalidate, strings.Join(WriteInvalidations, ", "))
	}
	return errs
}
