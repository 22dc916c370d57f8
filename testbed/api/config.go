package api

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
	"github.com/herdbench/herdbench/retry"
)

// Mitigation names accepted in Config.Strategy. Strategies lists them in the
// order they appear in help text and error messages.
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

// Strategies is the one list of valid strategy names.
var Strategies = []string{None, Singleflight, Lock, XFetch, SWR, Lease, Early, TTLJitter, Local, RateLimit, Breaker, Shed, ShedPriority}

// StrategyHeader chooses the strategy of one request, over the replica's
// own: a service whose mitigation a header selects, as a feature flag
// carried by the request would. The other knobs stay the replica's.
const StrategyHeader = "X-Herdbench-Strategy"

// Protections are the strategies that refuse loads to protect the
// database.
var Protections = []string{RateLimit, Breaker, Shed, ShedPriority}

// loaders are the strategies that decide who loads on a miss or when to
// refresh; at most one of them may be active. TTLJitter, Local, RateLimit,
// Breaker and one of Shed or ShedPriority compose with any of them.
var loaders = []string{Singleflight, Lock, XFetch, SWR, Lease, Early}

// Config is a replica's run-time configuration, switchable through
// PUT /admin/config. Strategy is one name or several joined with "+", such as
// "lock+ttl_jitter". Every other field is a Knob (knobs.go): its help tag
// is its flag's help. Knobs of mitigations that are not enabled are kept
// but have no effect.
type Config struct {
	Strategy string `json:"strategy"`

	TTL        herd.Duration `json:"ttl" help:"lifetime of a cached item"`
	StaleTTL   herd.Duration `json:"stale_ttl" help:"lifetime of the stale copy the lock strategy serves"`
	TTLJitter  float64       `json:"ttl_jitter" help:"fraction of the TTL added at random by ttl_jitter, 0 to 1"`
	XFetchBeta float64       `json:"xfetch_beta" help:"xfetch's beta (greater than 0); larger recomputes earlier"`
	LockTTL    herd.Duration `json:"lock_ttl" help:"expiry of the fleet lock, so a crashed holder's lock ends"`
	LockWait   herd.Duration `json:"lock_wait" help:"longest a lock waiter waits before loading itself"`
	LockPoll   herd.Duration `json:"lock_poll" help:"when a lock or lease waiter first re-reads the cache; each next re-read waits twice as long, up to 8 times this"`
	QueryCost  herd.Duration `json:"query_cost" help:"time the item query holds its connection (pg_sleep)"`
	DBRetry    DBRetry       `json:"db_retry" help:"retries of a failed item query (an error or --db-timeout), each with its own timeout: none, immediate:N, fixed:D:N, exp|full-jitter|equal-jitter|decorrelated:BASE:CAP:N"`

	EarlyProbability float64       `json:"early_probability" help:"early: chance of a background refresh on each hit, 0 to 1"`
	LeaseInterval    herd.Duration `json:"lease_interval" help:"lease: at most one token per key per interval"`
	LeaseWait        herd.Duration `json:"lease_wait" help:"lease: longest a request waits for the token holder's value"`
	LocalTTL         herd.Duration `json:"local_ttl" help:"local: lifetime of a replica's in-process copy"`
	LocalJitter      float64       `json:"local_jitter" help:"local: fraction of local-ttl added at random, 0 to 1"`
	RateLimit        float64       `json:"rate_limit" help:"ratelimit: DB loads per second per replica"`
	RateBurst        int           `json:"rate_burst" help:"ratelimit: loads the bucket holds"`
	RampUp           herd.Duration `json:"ramp_up" help:"ratelimit: admit a share of requests growing to all over this, from a replica's start (0: off)"`
	BreakerFailures  uint32        `json:"breaker_failures" help:"breaker: consecutive failed loads that open it"`
	BreakerOpen      herd.Duration `json:"breaker_open" help:"breaker: how long it stays open before one trial load"`
	ShedMinLimit     int           `json:"shed_min_limit" help:"shed: the adaptive limit's floor, concurrent DB loads per replica"`
	ShedMaxLimit     int           `json:"shed_max_limit" help:"shed: the adaptive limit's ceiling"`
	ShedInitialLimit int           `json:"shed_initial_limit" help:"shed: the limit it starts from"`
	ShedWait         herd.Duration `json:"shed_wait" help:"shed_priority: longest an admitted load queues for a permit"`

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

// WriteStrategies is the one list of write strategy names.
var WriteStrategies = []string{WriteDirect, WriteQueue, WriteCoalesce}

// What an applied write does to the written item's cache entry, accepted
// in Config.WriteInvalidate.
const (
	InvalidateNone    = "none"    // nothing: reads see the write once the entry expires
	InvalidateDelete  = "delete"  // delete it: the next reads miss, and load under the read strategy
	InvalidateRefresh = "refresh" // broadcast it: every replica reloads it at once, under the read strategy
)

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
// otherwise.
var DefaultConfig = Config{
	Strategy:   None,
	TTL:        herd.Duration(60 * time.Second),
	StaleTTL:   herd.Duration(10 * time.Minute),
	TTLJitter:  0.2,
	XFetchBeta: 1,
	// lock_ttl outlasts the default DB timeout (5s), so a slow holder keeps
	// its lock while it loads; lock_wait outlasts lock_ttl, so waiters are
	// still there to take over a crashed holder's lock when it expires.
	LockTTL:  herd.Duration(6 * time.Second),
	LockWait: herd.Duration(8 * time.Second),
	LockPoll: herd.Duration(5 * time.Millisecond),
	// a recompute expensive enough that duplicate loads of a hot key pile
	// up, as in a real stampede: the one default of every command
	QueryCost: herd.Duration(200 * time.Millisecond),
	DBRetry:   DBRetry{retry.Policy{Kind: retry.None}},

	EarlyProbability: 0.01,
	LeaseInterval:    herd.Duration(2 * time.Second),
	LeaseWait:        herd.Duration(time.Second),
	LocalTTL:         herd.Duration(5 * time.Second),
	LocalJitter:      0.2,
	RateLimit:        50,
	RateBurst:        10,
	BreakerFailures:  5,
	BreakerOpen:      herd.Duration(2 * time.Second),
	// the ceiling is the default DB pool: past it, loads would queue for a
	// connection, which is what shedding answers at once instead
	ShedMinLimit:     1,
	ShedMaxLimit:     10,
	ShedInitialLimit: 5,
	ShedWait:         herd.Duration(500 * time.Millisecond),
	WriteStrategy:    WriteDirect,
	ApplyRate:        0,
	WriteBatch:       100,
	CoalesceInterval: herd.Duration(time.Second),
	WriteInvalidate:  InvalidateDelete,
}

// Validate returns every problem with c at once, each naming the field and
// the accepted values.
func (c Config) Validate() error { return c.Problems().Err() }

// Problems are every problem with c, each a FieldError naming its field.
func (c Config) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	bad := errs.Add
	if _, err := parseStrategy(c.Strategy); err != nil {
		errs = append(errs, err)
	}
	if c.TTL < herd.Duration(time.Millisecond) {
		bad("ttl", "%s is too short (accepted: 1ms or more)", c.TTL)
	}
	if c.StaleTTL <= c.TTL {
		bad("stale_ttl", "%s must be longer than ttl %s", c.StaleTTL, c.TTL)
	}
	if c.TTLJitter < 0 || c.TTLJitter > 1 {
		bad("ttl_jitter", "%g out of range (accepted: 0 to 1, a fraction of ttl)", c.TTLJitter)
	}
	if c.XFetchBeta <= 0 {
		bad("xfetch_beta", "%g out of range (accepted: greater than 0; 1 is the paper's default)", c.XFetchBeta)
	}
	if c.LockTTL < herd.Duration(time.Millisecond) {
		bad("lock_ttl", "%s is too short (accepted: 1ms or more)", c.LockTTL)
	}
	if c.LockWait < 0 {
		bad("lock_wait", "%s is negative (accepted: 0 or more)", c.LockWait)
	}
	if c.LockPoll < herd.Duration(time.Millisecond) {
		bad("lock_poll", "%s is too short (accepted: 1ms or more)", c.LockPoll)
	}
	if c.EarlyProbability < 0 || c.EarlyProbability > 1 {
		bad("early_probability", "%g out of range (accepted: 0 to 1)", c.EarlyProbability)
	}
	if c.LeaseInterval < herd.Duration(time.Millisecond) {
		bad("lease_interval", "%s is too short (accepted: 1ms or more)", c.LeaseInterval)
	}
	if c.LeaseWait < 0 {
		bad("lease_wait", "%s is negative (accepted: 0 or more)", c.LeaseWait)
	}
	if c.LocalTTL < herd.Duration(time.Millisecond) {
		bad("local_ttl", "%s is too short (accepted: 1ms or more)", c.LocalTTL)
	}
	if c.LocalJitter < 0 || c.LocalJitter > 1 {
		bad("local_jitter", "%g out of range (accepted: 0 to 1, a fraction of local_ttl)", c.LocalJitter)
	}
	if c.RateLimit <= 0 {
		bad("rate_limit", "%g out of range (accepted: more than 0 loads/s)", c.RateLimit)
	}
	if c.RateBurst < 1 {
		bad("rate_burst", "%d out of range (accepted: 1 or more)", c.RateBurst)
	}
	if c.RampUp < 0 {
		bad("ramp_up", "%s is negative (accepted: 0, off, or more)", c.RampUp)
	}
	if c.BreakerFailures < 1 {
		bad("breaker_failures", "%d out of range (accepted: 1 or more)", c.BreakerFailures)
	}
	if c.BreakerOpen < herd.Duration(time.Millisecond) {
		bad("breaker_open", "%s is too short (accepted: 1ms or more)", c.BreakerOpen)
	}
	if c.ShedMinLimit < 1 || c.ShedMinLimit > MaxShedLimit {
		bad("shed_min_limit", "%d out of range (accepted: 1 to %d)", c.ShedMinLimit, MaxShedLimit)
	}
	if c.ShedMaxLimit < c.ShedMinLimit || c.ShedMaxLimit > MaxShedLimit {
		bad("shed_max_limit", "%d out of range (accepted: shed_min_limit, %d, to %d)", c.ShedMaxLimit, c.ShedMinLimit, MaxShedLimit)
	}
	if c.ShedInitialLimit < c.ShedMinLimit || c.ShedInitialLimit > c.ShedMaxLimit {
		bad("shed_initial_limit", "%d out of range (accepted: shed_min_limit to shed_max_limit, %d to %d)", c.ShedInitialLimit, c.ShedMinLimit, c.ShedMaxLimit)
	}
	if c.ShedWait < 0 || c.ShedWait > herd.Duration(time.Minute) {
		bad("shed_wait", "%s out of range (accepted: 0 to 1m)", c.ShedWait)
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
	if c.ApplyRate < 0 {
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

// MaxShedLimit bounds the shed limits: concurrent loads of one replica.
const MaxShedLimit = 10_000

// strategy is a parsed Config.Strategy.
type strategy struct {
	loader    string // None or one of loaders
	jitter    bool
	local     bool
	ratelimit bool
	breaker   bool
	shed      string // "", Shed or ShedPriority
}

// ErrUnknownStrategy is the cause of a strategy's FieldError when one of
// its parts is no strategy at all.
var ErrUnknownStrategy = errors.New("unknown strategy")

func parseStrategy(s string) (strategy, *herd.FieldError) {
	accepted := fmt.Sprintf("accepted: %s, or several joined with +, such as lock+ttl_jitter", strings.Join(Strategies, ", "))
	st := strategy{loader: None}
	bad := func(format string, args ...any) (strategy, *herd.FieldError) {
		return st, herd.Errorf("strategy", format, args...)
	}
	if s == "" {
		return bad("empty (%s)", accepted)
	}
	parts := strings.Split(s, "+")
	for _, p := range parts {
		switch {
		case p == None:
			if len(parts) > 1 {
				return bad("%q: none cannot be combined with other strategies", s)
			}
		case p == TTLJitter:
			st.jitter = true
		case p == Local:
			st.local = true
		case p == RateLimit:
			st.ratelimit = true
		case p == Breaker:
			st.breaker = true
		case p == Shed || p == ShedPriority:
			if st.shed != "" {
				return bad("%q combines %s and %s; use one of them", s, st.shed, p)
			}
			st.shed = p
		case slices.Contains(loaders, p):
			if st.loader != None {
				return bad("%q combines %s and %s; at most one of %s may be used", s, st.loader, p, strings.Join(loaders, ", "))
			}
			st.loader = p
		default:
			e := herd.Errorf("strategy", "unknown %q (%s)", p, accepted)
			e.Err = ErrUnknownStrategy
			return st, e
		}
	}
	return st, nil
}
