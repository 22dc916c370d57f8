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
	OutcomeWaited, OutcomeNotFound, OutcomeInvalid, OutcomeError, OutcomeShed, OutcomeCanceled}

// metrics are one replica's herdbench_api_* series. A reset replaces the
// whole set with a fresh registry, so every arm starts from zero.
type metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	cacheHits     prometheus.Counter
	cacheMisses   prometheus.Counter
	cacheErrors   prometheus.Counter
	loads         prometheus.Counter
	loadErrors    prometheus.Counter
	earlyLoads    prometheus.Counter
	coalesced     prometheus.Counter
	staleServed   prometheus.Counter
	lockWaits     prometheus.Counter
	notifications prometheus.Counter
	localHits     prometheus.Counter
	shed          prometheus.Counter
	breakerOpens  prometheus.Counter
	loadDuration  prometheus.Histogram
}

func newMetrics(inFlight *atomic.Int64, shedLimit func() float64) *metrics {
	reg := prometheus.NewRegistry()
	m := &metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herdbench_api_requests_total",
			Help: "Item requests served, by outcome (hit, local, miss, early, stale, coalesced, waited, not_found, invalid, error, shed, canceled).",
		}, []string{"outcome"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_cache_hits_total",
			Help: "Redis reads of an item key that found a value.",
		}),
		cacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_cache_misses_total",
			Help: "Redis reads of an item key that found nothing.",
		}),
		cacheErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_cache_errors_total",
			Help: "Redis commands that failed; a failed read falls through to Postgres.",
		}),
		loads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_loads_total",
			Help: "Item queries that completed in Postgres; matches pg_stat_statements calls of the item query.",
		}),
		loadErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_load_errors_total",
			Help: "Item queries that failed or timed out.",
		}),
		earlyLoads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_early_loads_total",
			Help: "Loads started before expiry by xfetch or early.",
		}),
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_coalesced_total",
			Help: "Requests that shared another request's load (singleflight).",
		}),
		staleServed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_stale_served_total",
			Help: "Requests answered with the stale copy while another request loads (lock, swr).",
		}),
		lockWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_lock_waits_total",
			Help: "Requests that waited for the fleet lock or lease holder's value.",
		}),
		notifications: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_notifications_total",
			Help: "Broadcast invalidations received; each reloads the items it names.",
		}),
		localHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_local_hits_total",
			Help: "Requests answered from the replica's in-process tier (local), without Redis.",
		}),
		shed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_shed_total",
			Help: "Loads refused by ratelimit (bucket empty, or the ramp-up), an open breaker, or shed's concurrency limit.",
		}),
		breakerOpens: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herdbench_api_breaker_opens_total",
			Help: "Times the breaker around the DB opened.",
		}),
		loadDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "herdbench_api_load_duration_seconds",
			Help:    "Time the item query took in Postgres, including the wait for a pooled connection.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
	}
	loadsInFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "herdbench_api_loads_in_flight",
		Help: "Item queries running now; not cleared by a reset.",
	}, func() float64 { return float64(inFlight.Load()) })
	limit := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "herdbench_api_shed_limit",
		Help: "shed's adaptive limit on concurrent DB loads now; 0 when shed is off.",
	}, shedLimit)
	reg.MustRegister(loadsInFlight, limit, m.requests, m.cacheHits, m.cacheMisses, m.cacheErrors, m.loads, m.loadErrors,
		m.earlyLoads, m.coalesced, m.staleServed, m.lockWaits, m.notifications, m.localHits, m.shed, m.breakerOpens, m.loadDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range outcomes {
		m.requests.WithLabelValues(o) // export zeros so rates start at reset
	}
	return m
}
