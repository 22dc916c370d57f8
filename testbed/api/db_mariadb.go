package api

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/herdbench/herdbench/testbed/replica"
)

// The replicas' statements on MariaDB (docs/testbed.md, "On MariaDB").
// Observers select them by digest (ItemDigestMariaDB, FillDigestMariaDB):
// MariaDB normalizes each text, its literals replaced by ?, into the
// DIGEST_TEXT of performance_schema.events_statements_summary_by_digest.
const (
	// ItemQueryMariaDB is the item loader's query: the row and its likes
	// beside SLEEP(cost), which holds the connection for the query cost as
	// pg_sleep does in ItemQuery. The sleep is a derived table of its
	// own, run once per query whether the item exists or not (in the
	// select list or the WHERE clause it would run once per row, or not
	// at all for an unknown item). Arguments: the cost in seconds, the id.
	ItemQueryMariaDB = "SELECT i.id, i.name, i.payload, l.n FROM (SELECT SLEEP(?)) AS cost, items i JOIN likes l ON l.item_id = i.id WHERE i.id = ?"
	// FillQueryMariaDB is the bulk fill's, FillQuery's text with MySQL's
	// placeholders: the items from, to.
	FillQueryMariaDB = "SELECT i.id, i.name, i.payload, l.n FROM items i JOIN likes l ON l.item_id = i.id WHERE i.id BETWEEN ? AND ? ORDER BY i.id"

	// MariaDB has no data-modifying WITH: a write is a transaction of
	// these statements, which commit together or not at all, as
	// Postgres's one statement does. Each takes its rows as one JSON
	// array, read by JSON_TABLE (Postgres: unnest of arrays), so a
	// batch's text, and its digest, is the same whatever its size.

	// WriteAddMariaDB adds c likes to each item of [[item, c], ...]: one
	// row changed per counter; direct's is [[id, 1]].
	WriteAddMariaDB = "UPDATE likes l JOIN JSON_TABLE(?, '$[*]' COLUMNS (item_id BIGINT PATH '$[0]', c BIGINT PATH '$[1]')) AS d ON l.item_id = d.item_id SET l.n = l.n + d.c"
	// WriteFanoutMariaDB inserts, for each like of [[item, c], ...], a
	// feed row per follower of the item, numbered from 1, from the
	// Sequence engine's seq_1_to_4294967295 (a range read of the numbers
	// needed, not a table of them).
	WriteFanoutMariaDB = "INSERT INTO feed (item_id, follower) SELECT l.item_id, f.seq FROM JSON_TABLE(?, '$[*]' COLUMNS (item_id BIGINT PATH '$[0]', c BIGINT PATH '$[1]')) AS d " +
		"JOIN likes l ON l.item_id = d.item_id JOIN seq_1_to_4294967295 k ON k.seq <= d.c JOIN seq_1_to_4294967295 f ON f.seq <= l.followers"
	// WriteDedupMariaDB records the ids of a batch of queued writes,
	// [[write_id, item], ...], and returns the item of each id new to
	// applied_writes: INSERT IGNORE skips the ids already applied (and a
	// batch's repeats), and RETURNING (MariaDB 10.5+) names only the rows
	// inserted.
	WriteDedupMariaDB = "INSERT IGNORE INTO applied_writes (write_id, item_id) SELECT w.write_id, w.item_id FROM JSON_TABLE(?, '$[*]' COLUMNS (write_id VARCHAR(255) PATH '$[0]', item_id BIGINT PATH '$[1]')) AS w RETURNING item_id"
	// WriteCountMariaDB sums the likes of [[item, c], ...] whose item has
	// a counter: what a batch added, read only when WriteAddMariaDB
	// changed fewer counters than the batch named.
	WriteCountMariaDB = "SELECT CAST(COALESCE(SUM(d.c), 0) AS SIGNED) FROM JSON_TABLE(?, '$[*]' COLUMNS (item_id BIGINT PATH '$[0]', c BIGINT PATH '$[1]')) AS d JOIN likes l ON l.item_id = d.item_id"
)

// WriteDigestMariaDB selects, as a regular expression on DIGEST_TEXT, the
// digests of the statements that change the tables when writes apply
// (WriteAddMariaDB, WriteFanoutMariaDB, WriteDedupMariaDB): what a write
// herd's statements and rows count on MariaDB.
const WriteDigestMariaDB = "^(UPDATE .likes. .l. JOIN |INSERT INTO .feed. |INSERT IGNORE INTO .applied_writes. )"

// WriteStatementsMariaDB are the statements that apply writes on MariaDB:
// direct is WriteAddMariaDB and WriteFanoutMariaDB in a transaction,
// coalesce's flush the same, queue's apply WriteDedupMariaDB first (and
// WriteCountMariaDB when an item has no counter).
var WriteStatementsMariaDB = []string{WriteAddMariaDB, WriteFanoutMariaDB, WriteDedupMariaDB, WriteCountMariaDB}

// The digests of ItemQueryMariaDB and FillQueryMariaDB, as regular
// expressions on DIGEST_TEXT (MariaDB's REGEXP, and Go's): for a target
// file's mysql.statements or observe.MySQL's Pattern. Each matches its
// statement's digest and nothing else the replicas run (TestMariaDBDigests).
const (
	ItemDigestMariaDB = "^SELECT .* FROM \\( SELECT .SLEEP. \\(\\?\\) \\) AS .cost. , .items. .i. JOIN .likes. .l. "
	FillDigestMariaDB = "^SELECT .* FROM .items. .i. JOIN .likes. .l. ON .* WHERE .i. \\. .id. BETWEEN \\? AND \\? ORDER BY "
)

// MaxWriteIDMariaDB is the longest write id (X-Herdbench-Write-Id) a
// replica on MariaDB takes: applied_writes.write_id is VARCHAR(255), a
// primary key needing a length where Postgres's text needs none.
const MaxWriteIDMariaDB = 255

// mariaDB is the replicas' MariaDB: one database/sql pool per replica on
// go-sql-driver.
type mariaDB struct {
	db       *sql.DB
	opened   atomic.Int64 // connections established (countingConnector)
	canceled atomic.Int64 // waits for a connection that ended with their context
}

var _ DB = (*mariaDB)(nil)

func newMariaDB(o replica.Options) (*mariaDB, error) {
	cfg, err := mysql.ParseDSN(o.MySQLDSN)
	if err != nil {
		return nil, fmt.Errorf("mysql dsn: %w", err)
	}
	// Statements go as text, their arguments interpolated by the driver,
	// never prepared on the server: MariaDB keeps no digest for a
	// server-side prepared statement's executions, so the digest table
	// would not count the item queries at all.
	cfg.InterpolateParams = true
	cfg.Timeout = o.DBTimeout // dial, as pgx's ConnectTimeout
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql dsn: %w", err)
	}
	m := &mariaDB{}
	m.db = sql.OpenDB(countingConnector{Connector: conn, opened: &m.opened})
	// As full as database/sql keeps a pool: db-pool connections open at
	// most and all kept when idle (HikariCP's maximum and minimumIdle),
	// none closed for its age. It opens them on demand and does not
	// replace a lost one until a statement needs it (pgxpool does within
	// a second).
	m.db.SetMaxOpenConns(int(o.DBPoolSize))
	m.db.SetMaxIdleConns(int(o.DBPoolSize))
	m.db.SetConnMaxLifetime(0)
	m.db.SetConnMaxIdleTime(0)
	return m, nil
}

// countingConnector counts the connections database/sql establishes
// through it: the pool's new connections.
type countingConnector struct {
	driver.Connector
	opened *atomic.Int64
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err == nil {
		c.opened.Add(1)
	}
	return conn, err
}

// conn takes a connection from the pool, counting a wait that ended with
// ctx: database/sql counts no such thing itself (DBStats.WaitCount counts
// every wait), so every statement takes its connection here first.
func (m *mariaDB) conn(ctx context.Context) (*sql.Conn, error) {
	c, err := m.db.Conn(ctx)
	if err != nil && ctx.Err() != nil {
		m.canceled.Add(1)
	}
	return c, err
}

func (m *mariaDB) Item(ctx context.Context, id int64, cost time.Duration) (Item, error) {
	c, err := m.conn(ctx)
	if err != nil {
		return Item{}, err
	}
	defer c.Close()
	var it Item
	err = c.QueryRowContext(ctx, ItemQueryMariaDB, cost.Seconds(), id).Scan(&it.ID, &it.Name, &it.Payload, &it.Likes)
	if errors.Is(err, sql.ErrNoRows) {
		err = errNotFound
	}
	return it, err
}

func (m *mariaDB) Items(ctx context.Context, lo, hi int64) ([]Item, error) {
	c, err := m.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rows, err := c.QueryContext(ctx, FillQueryMariaDB, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanItems(rows)
}

func (m *mariaDB) Like(ctx context.Context, id int64) error {
	return m.tx(ctx, func(tx *sql.Tx) error {
		n, err := addLikes(ctx, tx, []likeCount{{id, 1}})
		if err == nil && n != 1 {
			err = fmt.Errorf("item %d has no likes row", id)
		}
		return err
	})
}

func (m *mariaDB) Apply(ctx context.Context, writeIDs []string, items []int64) (int64, error) {
	pairs := make([][2]any, len(writeIDs))
	for i := range writeIDs {
		pairs[i] = [2]any{writeIDs[i], items[i]}
	}
	var applied int64
	err := m.tx(ctx, func(tx *sql.Tx) error {
		applied = 0
		fresh, err := dedup(ctx, tx, pairs)
		if err != nil || len(fresh) == 0 {
			return err
		}
		changed, err := addLikes(ctx, tx, fresh)
		if err != nil {
			return err
		}
		for _, f := range fresh {
			applied += f.c
		}
		if changed < int64(len(fresh)) { // some item has no counter: count what was added
			return tx.QueryRowContext(ctx, WriteCountMariaDB, likesJSON(fresh)).Scan(&applied)
		}
		return nil
	})
	return applied, err
}

func (m *mariaDB) Add(ctx context.Context, items, counts []int64) error {
	lc := make([]likeCount, len(items))
	for i := range items {
		lc[i] = likeCount{items[i], counts[i]}
	}
	return m.tx(ctx, func(tx *sql.Tx) error {
		_, err := addLikes(ctx, tx, lc)
		return err
	})
}

func (m *mariaDB) Ping(ctx context.Context) error { return m.db.PingContext(ctx) }

func (m *mariaDB) Pool() PoolStats {
	return PoolStats{NewConns: m.opened.Load(), CanceledAcquires: m.canceled.Load()}
}

func (m *mariaDB) Close() { _ = m.db.Close() }

// tx runs f in a transaction on a connection of its own, committed when f
// succeeds and rolled back when not.
func (m *mariaDB) tx(ctx context.Context, f func(*sql.Tx) error) error {
	c, err := m.conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// likeCount is c likes to add to item.
type likeCount struct{ item, c int64 }

// likesJSON is lc as WriteAddMariaDB's argument, [[item, c], ...].
func likesJSON(lc []likeCount) string {
	pairs := make([][2]int64, len(lc))
	for i, l := range lc {
		pairs[i] = [2]int64{l.item, l.c}
	}
	b, _ := json.Marshal(pairs)
	return string(b)
}

// addLikes adds lc's likes and their fan-out in tx, the counters in the
// order of their ids (so that transactions on the same rows lock them in
// one order and never deadlock), and says how many counters changed.
func addLikes(ctx context.Context, tx *sql.Tx, lc []likeCount) (int64, error) {
	slices.SortFunc(lc, func(a, b likeCount) int { return cmp.Compare(a.item, b.item) })
	arg := likesJSON(lc)
	res, err := tx.ExecContext(ctx, WriteAddMariaDB, arg)
	if err != nil {
		return 0, err
	}
	changed, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, WriteFanoutMariaDB, arg)
	return changed, err
}

// dedup records the queued writes' ids in tx and returns the likes of
// those applied for the first time, per item.
func dedup(ctx context.Context, tx *sql.Tx, pairs [][2]any) ([]likeCount, error) {
	b, err := json.Marshal(pairs)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, WriteDedupMariaDB, string(b))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	per := map[int64]int64{}
	for rows.Next() {
		var item int64
		if err := rows.Scan(&item); err != nil {
			return nil, err
		}
		per[item]++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	lc := make([]likeCount, 0, len(per))
	for item, c := range per {
		lc = append(lc, likeCount{item, c})
	}
	return lc, nil
}
