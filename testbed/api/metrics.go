package api

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Outcomes of a GET /items/{id} request, the values of the X-Cache header
// for served items and of the outcome label of herdbench_api_requests_total.
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
)

var outcomes = []string{OutcomeHit, OutcomeLocal, OutcomeMiss, OutcomeEarly, OutcomeStale, OutcomeCoalesced,
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
)

// Outcomes of a write, the outcome label of MetricWrites.
const (
	WriteAcked   = "acked"
	WriteError   = "error"
	WriteInvalid = "invalid"
)

// writeMetrics are the writes' series.
type writeMetrics struct {
	writes        *prometheus.CounterVec
	writesApplied prometheus.Counter
	writeErrors   prometheus.Counter
	writeLag      prometheus.Histogram
}

func newWriteMetrics() writeMetrics {
	w := writeMetrics{
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricWrites,
			Help: "Writes (POST /items/{id}/likes) answered, by outcome (acked: committed, queued or held per write_strategy; error; invalid)."},
			[]string{"outcome"}),
		writesApplied: prometheus.NewCounter(prometheus.CounterOpts{Name: MetricWritesApplied,
			Help: "Likes this replica added to Postgres: direct's commits, the queue's applied batches, coalesce's flushes."}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: MetricWriteErrors,
			Help: "Failures of the queue's consumer (reading, applying, acknowledging) or of coalesce's flush; their writes are retried."}),
		writeLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: MetricWriteLag,
			Help:    "Queue: from a write's acknowledgement to its application in Postgres.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
	}
	for _, o := range []string{WriteAcked, WriteError, WriteInvalid} {
		w.writes.WithLabelValues(o)
	}
	return w
}

func (w writeMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{w.writes, w.writesApplied, w.writeErrors, w.writeLag}
}

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
	// DBNewConns and DBCanceledAcquires are the pool's (pool_metrics.go)
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

// metrics are one replica's herdbench_api_* series. A reset replaces the
// whole set with a fresh registry, so every arm starts from zero.
type metrics struct {
	writeMetrics
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	cacheHits     prometheus.Counter
	cacheMisses   prometheus.Counter
	cacheErrors   prometheus.Counter
	loads         prometheus.Counter
	loadErrors    prometheus.Counter
	loadRetries   prometheus.Counter
	earlyLoads    prometheus.Counter
	coalesced     prometheus.Counter
	staleServed   prometheus.Counter
	lockWaits     prometheus.Counter
	notifications prometheus.Counter
	shed          prometheus.Counter
	loadDuration  prometheus.Histogram
	own           map[string]prometheus.Counter // the mitigations' Counters
}

// count adds one to a mitigation's counter; one its registry does not
// declare panics.
func (m *metrics) count(name string) {
	c, ok := m.own[name]
	if !ok {
		panic("api: no counter " + name + " among the mitigations' Counters")
	}
	c.Inc()
}

// gauges are what a replica is doing now, read at each scrape; a reset
// keeps them.
type gauges struct {
	loads     *atomic.Int64 // item queries running
	busy      *atomic.Int64 // item requests being served, and the loads they left running
	shedLimit func() float64
	pool      func() PoolStats // the pool's counters; nil: none
	db        string           // the database pool counts connections to: Options.DB
}

func (g gauges) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: MetricLoadsInFlight,
			Help: "Item queries running now; not cleared by a reset.",
		}, func() float64 { return float64(g.loads.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: MetricBusy,
			Help: "Item requests being served now, with the loads they started in the background; not cleared by a reset.",
		}, func() float64 { return float64(g.busy.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: MetricShedLimit,
			Help: "shed's adaptive limit on concurrent DB loads now; 0 when shed is off.",
		}, g.shedLimit),
	}
}

// newMetrics makes the series afresh, with the Counters of reg's
// mitigations.
func newMetrics(reg *Mitigations, g gauges) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(), writeMetrics: newWriteMetrics(), own: map[string]prometheus.Counter{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricRequests,
			Help: "Item requests served, by outcome (hit, local, miss, early, stale, coalesced, waited, not_found, invalid, error, shed, canceled).",
		}, []string{"outcome"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricCacheHits,
			Help: "Cache reads (Redis or Memcached) of an item key that found a value.",
		}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricCacheMisses,
			Help: "Cache reads (Redis or Memcached) of an item key that found nothing.",
		}),
		cacheErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricCacheErrors,
			Help: "Cache commands (Redis or Memcached) that failed; a failed read falls through to Postgres.",
		}),
		loads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricLoads,
			Help: "Item queries that completed in the database; matches pg_stat_statements calls of the item query (Postgres), or the item digest's COUNT_STAR (MariaDB) less the queries canceled after they were sent.",
		}),
		loadErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricLoadErrors,
			Help: "Item queries that failed or timed out.",
		}),
		loadRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricLoadRetries,
			Help: "Item queries retried per db_retry after one failed or timed out.",
		}),
		earlyLoads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricEarlyLoads,
			Help: "Loads started before expiry by xfetch or early.",
		}),
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricCoalesced,
			Help: "Requests that shared another request's load (singleflight).",
		}),
		staleServed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricStaleServed,
			Help: "Requests answered with the stale copy while another request loads (lock, swr).",
		}),
		lockWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricLockWaits,
			Help: "Requests that waited for the fleet lock or lease holder's value.",
		}),
		notifications: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricNotifications,
			Help: "Broadcast invalidations received; each reloads the items it names.",
		}),
		shed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricShed,
			Help: "Loads refused by ratelimit (bucket empty, or the ramp-up), an open breaker, or shed's concurrency limit.",
		}),
		loadDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "herdbench_api_load_duration_seconds",
			Help:    "Time the item query took in Postgres, including the wait for a pooled connection.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
	}
	for _, c := range reg.counters() {
		m.own[c.Name] = prometheus.NewCounter(prometheus.CounterOpts{Name: c.Name, Help: c.Help})
		m.reg.MustRegister(m.own[c.Name])
	}
	m.reg.MustRegister(append(append(g.collectors(), poolCollectors(g.db, g.pool)...), m.writeMetrics.collectors()...)...)
	m.reg.MustRegister(m.requests, m.cacheHits, m.cacheMisses, m.cacheErrors, m.loads, m.loadErrors, m.loadRetries,
		m.earlyLoads, m.coalesced, m.staleServed, m.lockWaits, m.notifications, m.shed, m.loadDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range outcomes {
		m.requests.WithLabelValues(o) // export zeros so rates start at reset
	}
	return m
}
