package api

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// The replica's connection pool, as pgxpool counts it: what a herd costs
// the pool besides the queries Postgres runs. A load whose query is
// cancelled mid-flight (its db-timeout, or its client gone with
// abandoned_load canceled) costs its connection, which pgx closes, and the
// pool opens a new one; a load that waits longer than its db-timeout for a
// connection gives up in the queue and never reaches Postgres.
const (
	MetricDBNewConns         = "herdbench_api_db_new_conns_total"
	MetricDBCanceledAcquires = "herdbench_api_db_canceled_acquires_total"
)

// poolCollectors are the pool's counters from now (a reset): pgxpool's
// own, which count from the pool's start, less their values now.
func poolCollectors(stat func() *pgxpool.Stat) []prometheus.Collector {
	if stat == nil {
		return nil
	}
	base := stat()
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: MetricDBNewConns,
			Help: "Connections the replica's pool opened to Postgres (pgxpool's NewConnsCount), from the last reset.",
		}, func() float64 { return float64(stat().NewConnsCount() - base.NewConnsCount()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: MetricDBCanceledAcquires,
			Help: "Waits for a pooled connection that ended with their context, the query never sent (pgxpool's CanceledAcquireCount), from the last reset.",
		}, func() float64 { return float64(stat().CanceledAcquireCount() - base.CanceledAcquireCount()) }),
	}
}
