package api

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
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
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: admin.MetricWrites,
			Help: "Writes (POST /items/{id}/likes) answered, by outcome (acked: committed, queued or held per write_strategy; error; invalid)."},
			[]string{"outcome"}),
		writesApplied: counter(admin.MetricWritesApplied, "Likes this replica added to Postgres: direct's commits, the queue's applied batches, coalesce's flushes."),
		writeErrors:   counter(admin.MetricWriteErrors, "Failures of the queue's consumer (reading, applying, acknowledging) or of coalesce's flush; their writes are retried."),
		writeLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: admin.MetricWriteLag,
			Help:    "Queue: from a write's acknowledgement to its application in Postgres.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
	}
	for _, o := range []string{admin.WriteAcked, admin.WriteError, admin.WriteInvalid} {
		w.writes.WithLabelValues(o)
	}
	return w
}

func (w writeMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{w.writes, w.writesApplied, w.writeErrors, w.writeLag}
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

// counter is the counter name, described by help.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

// gauges are what a replica is doing now, read at each scrape; a reset
// keeps them.
type gauges struct {
	loads     *atomic.Int64 // item queries running
	busy      *atomic.Int64 // item requests being served, and the loads they left running
	shedLimit func() float64
	pool      func() PoolStats // the pool's counters; nil: none
	db        string           // the database pool counts connections to: replica.Options.DB
}

func (g gauges) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: admin.MetricLoadsInFlight,
			Help: "Item queries running now; not cleared by a reset.",
		}, func() float64 { return float64(g.loads.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: admin.MetricBusy,
			Help: "Item requests being served now, with the loads they started in the background; not cleared by a reset.",
		}, func() float64 { return float64(g.busy.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: admin.MetricShedLimit,
			Help: "shed's adaptive limit on concurrent DB loads now; 0 when shed is off.",
		}, g.shedLimit),
	}
}

// newMetrics makes the series afresh, with the Counters of reg's
// mitigations.
func newMetrics(reg *replica.Mitigations, g gauges) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(), writeMetrics: newWriteMetrics(), own: map[string]prometheus.Counter{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: admin.MetricRequests,
			Help: "Item requests served, by outcome (hit, local, miss, early, stale, coalesced, waited, not_found, invalid, error, shed, canceled).",
		}, []string{"outcome"}),
		cacheHits:     counter(admin.MetricCacheHits, "Cache reads (Redis or Memcached) of an item key that found a value."),
		cacheMisses:   counter(admin.MetricCacheMisses, "Cache reads (Redis or Memcached) of an item key that found nothing."),
		cacheErrors:   counter(admin.MetricCacheErrors, "Cache commands (Redis or Memcached) that failed; a failed read falls through to Postgres."),
		loads:         counter(admin.MetricLoads, "Item queries that completed in the database; matches pg_stat_statements calls of the item query (Postgres), or the item digest's COUNT_STAR (MariaDB) less the queries canceled after they were sent."),
		loadErrors:    counter(admin.MetricLoadErrors, "Item queries that failed or timed out."),
		loadRetries:   counter(admin.MetricLoadRetries, "Item queries retried per db_retry after one failed or timed out."),
		earlyLoads:    counter(admin.MetricEarlyLoads, "Loads started before expiry by xfetch or early."),
		coalesced:     counter(admin.MetricCoalesced, "Requests that shared another request's load (singleflight)."),
		staleServed:   counter(admin.MetricStaleServed, "Requests answered with the stale copy while another request loads (lock, swr)."),
		lockWaits:     counter(admin.MetricLockWaits, "Requests that waited for the fleet lock or lease holder's value."),
		notifications: counter(admin.MetricNotifications, "Broadcast invalidations received; each reloads the items it names."),
		shed:          counter(admin.MetricShed, "Loads refused by ratelimit (bucket empty, or the ramp-up), an open breaker, or shed's concurrency limit."),
		loadDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    admin.MetricLoadDuration,
			Help:    "Time the item query took in Postgres, including the wait for a pooled connection.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
	}
	for _, c := range counters(reg) {
		m.own[c.Name] = counter(c.Name, c.Help)
		m.reg.MustRegister(m.own[c.Name])
	}
	m.reg.MustRegister(append(append(g.collectors(), poolCollectors(g.db, g.pool)...), m.writeMetrics.collectors()...)...)
	m.reg.MustRegister(m.requests, m.cacheHits, m.cacheMisses, m.cacheErrors, m.loads, m.loadErrors, m.loadRetries,
		m.earlyLoads, m.coalesced, m.staleServed, m.lockWaits, m.notifications, m.shed, m.loadDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range admin.Outcomes {
		m.requests.WithLabelValues(o) // export zeros so rates start at reset
	}
	return m
}

// MetricFamilies are the families a replica running mitigations exports
// at /metrics, as its own registry gathers them (the Go and process
// collectors' too): what a dashboard may select from the replicas. A
// pooled database's families are those of db (replica.DBPostgres or
// replica.DBMariaDB).
func MetricFamilies(mitigations *replica.Mitigations, db string) ([]*dto.MetricFamily, error) {
	var loads, busy atomic.Int64
	m := newMetrics(mitigations, gauges{loads: &loads, busy: &busy, shedLimit: func() float64 { return 0 },
		pool: func() PoolStats { return PoolStats{} }, db: db})
	return m.reg.Gather()
}
