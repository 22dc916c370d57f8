package api

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/herdbench/herdbench/testbed/replica"
)

// DB is the replicas' database, shared by the fleet: Postgres
// (db_postgres.go) or MariaDB (db_mariadb.go), as replica.Options.DB says. The
// item loader (cache.go), the fill (fill.go), the write strategies
// (writes.go) and /healthz use it and nothing else of the database; each
// implementation holds its statements' texts, so what observers count is
// fixed per database (ItemQuery, FillQuery and WriteStatements in
// Postgres; ItemQueryMariaDB, FillQueryMariaDB and WriteStatementsMariaDB
// in MariaDB).
type DB interface {
	// Item runs the item query for id, holding its connection for cost
	// in the database (pg_sleep, SLEEP): errNotFound when there is no
	// such item, which is still a query the database completed.
	Item(ctx context.Context, id int64, cost time.Duration) (Item, error)
	// Items reads the items lo..hi in one query: the bulk fill.
	Items(ctx context.Context, lo, hi int64) ([]Item, error)
	// Like adds one like to item id and its fan-out (a feed row per
	// follower), committed together: direct's write.
	Like(ctx context.Context, id int64) error
	// Apply applies queued writes, each write id once (applied_writes),
	// with their fan-out, atomically; applied are the likes it added.
	Apply(ctx context.Context, writeIDs []string, items []int64) (applied int64, err error)
	// Add adds counts[i] likes to items[i] with their fan-out,
	// atomically: coalesce's flush.
	Add(ctx context.Context, items, counts []int64) error
	// Ping checks the database answers.
	Ping(ctx context.Context) error
	// Pool is what the replica's connection pool counted since it opened.
	Pool() PoolStats
	Close()
}

// PoolStats are a pool's counters since it opened.
type PoolStats struct {
	NewConns         int64 // connections opened to the database
	CanceledAcquires int64 // waits for a connection that ended with their context
}

// newDB opens the pool of the database o names. Connections open lazily,
// so it succeeds while the database is down.
func newDB(o replica.Options) (DB, error) {
	switch o.DB {
	case replica.DBPostgres, "":
		return newPostgresDB(o)
	case replica.DBMariaDB:
		return newMariaDB(o)
	}
	return nil, fmt.Errorf("db %q (accepted: %s)", o.DB, strings.Join(replica.DBs, ", "))
}

// itemRows are the rows of FillQuery or FillQueryMariaDB, from either
// driver.
type itemRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanItems reads the fill's rows into items.
func scanItems(rows itemRows) ([]Item, error) {
	var items []Item
	for rows.Next() {
		var it Item
		if err := rows.Scan(&it.ID, &it.Name, &it.Payload, &it.Likes); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, rows.Err()
}
