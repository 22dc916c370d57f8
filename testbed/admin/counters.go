package admin

// Outcomes of a GET /items/{id} request, the values of the X-Cache header
// for served items and of the outcome label of MetricRequests.
const (
	OutcomeHit       = "hit"       // fresh value from Redis
	OutcomeMiss      = "miss"      // this request loaded the item from Postgres
	OutcomeEarly     = "early"     // xfetch: this request recomputed before expiry
	OutcomeStale     = "stale"     // lock: another replica holds the lock; stale copy served
	OutcomeCoalesced = "coalesced" // singleflight: shared another request's load
	OutcomeLocal     = "local"     // local: from the replica's in-process tier
	OutcomeWaited    = "waited"    // lock: waited for the holder's value
	OutcomeNotFound  = "not_found" // no such item
	OutcomeInvalid   = "invalid"   // the id is not a positive integer
	OutcomeError     = "error"     // the load failed
	OutcomeShed      = "shed"      // ratelimit, breaker or shed refused the load: 503 (shed_priority: after queueing up to shed_wait)
	OutcomeCanceled  = "canceled"  // the client went away before an answer
	// OutcomeExpired is a request whose propagated deadline
	// (DeadlineHeader) passed before the replica had an answer: 504, and
	// no load started past it.
	OutcomeExpired = "expired"
)

// Outcomes lists every outcome of an item request, in the order the
// server exports them.
var Outcomes = []string{OutcomeHit, OutcomeLocal, OutcomeMiss, OutcomeEarly, OutcomeStale, OutcomeCoalesced,
	OutcomeWaited, OutcomeNotFound, OutcomeInvalid, OutcomeError, OutcomeShed, OutcomeCanceled, OutcomeExpired}

// The replicas' metric names: the server registers them and the client
// reads them by these names, so a rename cannot silently zero a figure.
const (
	MetricRequests      = "herdbench_api_requests_total"
	MetricCacheHits     = "herdbench_api_cache_hits_total"
	MetricCacheMisses   = "herdbench_api_cache_misses_total"
	MetricCacheErrors   = "herdbench_api_cache_errors_total"
	MetricLoads         = "herdbench_api_loads_total"
	MetricLoadErrors    = "herdbench_api_load_errors_total"
	MetricLoadRetries   = "herdbench_api_load_retries_total"
	MetricEarlyLoads    = "herdbench_api_early_loads_total"
	MetricCoalesced     = "herdbench_api_coalesced_total"
	MetricStaleServed   = "herdbench_api_stale_served_total"
	MetricLockWaits     = "herdbench_api_lock_waits_total"
	MetricNotifications = "herdbench_api_notifications_total"
	MetricShed          = "herdbench_api_shed_total"
	MetricLoadDuration  = "herdbench_api_load_duration_seconds"
	MetricLoadsInFlight = "herdbench_api_loads_in_flight"
	MetricBusy          = "herdbench_api_requests_in_flight"
	MetricShedLimit     = "herdbench_api_shed_limit"

	MetricWrites        = "herdbench_api_writes_total"         // by outcome: acked, error, invalid
	MetricWritesApplied = "herdbench_api_writes_applied_total" // likes added to Postgres
	MetricWriteErrors   = "herdbench_api_write_errors_total"   // failures of the queue's consumer or coalesce's flush
	MetricWriteLag      = "herdbench_api_write_lag_seconds"    // queue: from acknowledged to applied

	// The replica's connection pool, as it counts itself (testbed/api's
	// pool_metrics.go says what each database counts).
	MetricDBNewConns         = "herdbench_api_db_new_conns_total"
	MetricDBCanceledAcquires = "herdbench_api_db_canceled_acquires_total"
)

// Outcomes of a write, the outcome label of MetricWrites.
const (
	WriteAcked   = "acked"
	WriteError   = "error"
	WriteInvalid = "invalid"
)

// Counters are the replicas' counters an experiment reads: the loads the
// mitigations cause or save. The JSON is the results' api figures.
type Counters struct {
	Requests    int64 `json:"requests"`     // MetricRequests: item requests answered, every outcome
	Loads       int64 `json:"loads"`        // MetricLoads: item queries completed in Postgres
	LoadErrors  int64 `json:"load_errors"`  // MetricLoadErrors
	LoadRetries int64 `json:"load_retries"` // MetricLoadRetries: db_retry's
	EarlyLoads  int64 `json:"early_loads"`  // MetricEarlyLoads: xfetch and early
	Coalesced   int64 `json:"coalesced"`    // MetricCoalesced: singleflight
	StaleServed int64 `json:"stale_served"` // MetricStaleServed: lock and swr
	LockWaits   int64 `json:"lock_waits"`   // MetricLockWaits: lock and lease
	// DBNewConns and DBCanceledAcquires are the pool's
	DBNewConns         int64 `json:"db_new_conns"`
	DBCanceledAcquires int64 `json:"db_canceled_acquires"`
	LoadsInFlight      int64 `json:"-"` // MetricLoadsInFlight: a gauge, read to drain
	Busy               int64 `json:"-"` // MetricBusy: a gauge, read to drain
}

// byName maps each metric name to its field.
func (c *Counters) byName() map[string]*int64 {
	return map[string]*int64{MetricRequests: &c.Requests, MetricLoads: &c.Loads, MetricLoadErrors: &c.LoadErrors, MetricLoadRetries: &c.LoadRetries, MetricEarlyLoads: &c.EarlyLoads,
		MetricCoalesced: &c.Coalesced, MetricStaleServed: &c.StaleServed, MetricLockWaits: &c.LockWaits,
		MetricDBNewConns: &c.DBNewConns, MetricDBCanceledAcquires: &c.DBCanceledAcquires,
		MetricLoadsInFlight: &c.LoadsInFlight, MetricBusy: &c.Busy}
}

// CountersOf reads the Counters from one scrape of a replica.
func CountersOf(m Metrics) Counters {
	var cs Counters
	for name, v := range cs.byName() {
		*v = m.Sum(name)
	}
	return cs
}

// Plus is c and o summed, field by field.
func (c Counters) Plus(o Counters) Counters {
	return c.combine(o, func(a, b int64) int64 { return a + b })
}

// Grown is how much each counter grew from prev to c. A counter that went
// down was reset (its replica restarted) and counts from zero, as
// Prometheus' rate() reads it. The gauges, LoadsInFlight and Busy, are c's.
func (c Counters) Grown(prev Counters) Counters {
	g := c.combine(prev, func(cur, prev int64) int64 {
		if cur < prev {
			return cur
		}
		return cur - prev
	})
	g.LoadsInFlight, g.Busy = c.LoadsInFlight, c.Busy
	return g
}

func (c Counters) combine(o Counters, f func(a, b int64) int64) Counters {
	out := c
	ob := o.byName()
	for name, v := range out.byName() {
		*v = f(*v, *ob[name])
	}
	return out
}
