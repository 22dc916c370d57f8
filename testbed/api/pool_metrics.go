package api

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herdbench/herdbench/testbed/admin"
	"github.com/herdbench/herdbench/testbed/replica"
)

// The replica's connection pool, as it counts itself: what a herd costs
// the pool besides the queries the database runs. A load whose query is
// cancelled mid-flight (its db-timeout, or its client gone with
// abandoned_load canceled) costs its connection, which the driver closes
// (pgx, and go-sql-driver alike), and the pool opens a new one; a load
// that waits longer than its db-timeout for a connection gives up in the
// queue and never reaches the database.
// poolHelp is each database's Help of the two counters: what counts them.
var poolHelp = map[string][2]string{
	replica.DBPostgres: {
		"Connections the replica's pool opened to Postgres (pgxpool's NewConnsCount), from the last reset.",
		"Waits for a pooled connection that ended with their context, the query never sent (pgxpool's CanceledAcquireCount), from the last reset.",
	},
	replica.DBMariaDB: {
		"Connections the replica's pool opened to MariaDB (counted by its driver.Connector as each connection is established), from the last reset.",
		"Waits for a pooled connection (database/sql's DB.Conn) that ended with their context, the statement never sent (counted by the replica around DB.Conn), from the last reset.",
	},
}

// poolCollectors are the pool's counters from now (a reset): the pool's
// own, which count from its start, less their values now.
func poolCollectors(db string, stat func() PoolStats) []prometheus.Collector {
	if stat == nil {
		return nil
	}
	help, ok := poolHelp[db]
	if !ok {
		help = poolHelp[replica.DBPostgres]
	}
	base := stat()
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: admin.MetricDBNewConns, Help: help[0]},
			func() float64 { return float64(stat().NewConns - base.NewConns) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: admin.MetricDBCanceledAcquires, Help: help[1]},
			func() float64 { return float64(stat().CanceledAcquires - base.CanceledAcquires) }),
	}
}
