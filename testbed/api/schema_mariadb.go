package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// SeedMariaDB creates the testbed's tables in db's database with n items,
// the same rows and payloads as Seed's in Postgres, and grants user (at
// host '%') what the replicas need. It runs as a user that may create
// tables and grant, and is idempotent: a second call recreates them.
func SeedMariaDB(ctx context.Context, db *sql.DB, n int, user string) error {
	if n < 1 {
		return fmt.Errorf("seed: %d items; want at least 1", n)
	}
	for _, q := range SeedStatementsMariaDB(n, user) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("seed: %s: %w", q, err)
		}
	}
	return nil
}

// SeedStatementsMariaDB are the statements SeedMariaDB runs, for providers
// that seed the database by script. The rows come from the Sequence
// engine's seq_1_to_N (built into MariaDB since 10.1; Debian 12's 10.11
// has it on), as generate_series makes them in Postgres: MD5 of the id
// as text, so each payload is Postgres's. The fan-out reads
// seq_1_to_4294967295 too (WriteFanoutMariaDB), which user needs SELECT
// on like any table.
func SeedStatementsMariaDB(n int, user string) []string {
	to := fmt.Sprintf("'%s'@'%%'", quoteMariaDB(user))
	return []string{
		`DROP TABLE IF EXISTS items`,
		`CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT NOT NULL, payload TEXT NOT NULL) ENGINE=InnoDB`,
		fmt.Sprintf(`INSERT INTO items SELECT seq, CONCAT('item ', seq), REPEAT(MD5(seq), 8) FROM seq_1_to_%d`, n),
		`ANALYZE TABLE items`,
		`GRANT SELECT ON items TO ` + to,
		// the writes' tables, as Seed's: a counter row per item, its
		// followers, their feed, and the queued writes applied
		`DROP TABLE IF EXISTS likes`,
		`CREATE TABLE likes (item_id BIGINT PRIMARY KEY, n BIGINT NOT NULL, followers INT NOT NULL DEFAULT 0) ENGINE=InnoDB`,
		fmt.Sprintf(`INSERT INTO likes (item_id, n) SELECT seq, 0 FROM seq_1_to_%d`, n),
		`DROP TABLE IF EXISTS feed`,
		`CREATE TABLE feed (item_id BIGINT NOT NULL, follower INT NOT NULL) ENGINE=InnoDB`,
		`DROP TABLE IF EXISTS applied_writes`,
		fmt.Sprintf(`CREATE TABLE applied_writes (write_id VARCHAR(%d) PRIMARY KEY, item_id BIGINT NOT NULL) ENGINE=InnoDB`, MaxWriteIDMariaDB),
		`GRANT SELECT, UPDATE ON likes TO ` + to,
		`GRANT SELECT, INSERT ON feed TO ` + to,
		`GRANT SELECT, INSERT ON applied_writes TO ` + to,
		`GRANT SELECT ON seq_1_to_4294967295 TO ` + to,
	}
}

// quoteMariaDB escapes s for a single-quoted MariaDB string.
func quoteMariaDB(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s)
}

// MariaDBLikes is the likes and feed in MariaDB, as a write herd reads
// and sets them (triggers.LikesTable): likes.go's PostgresLikes, the ids
// passed as one JSON array.
type MariaDBLikes struct{ DB *sql.DB }

const idsTable = `SELECT id FROM JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT PATH '$')) AS j`

// Likes sums the items' like counters.
func (m MariaDBLikes) Likes(ctx context.Context, ids []int64) (int64, error) {
	var n int64
	err := m.DB.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM likes WHERE item_id IN (`+idsTable+`)`, idsJSON(ids)).Scan(&n)
	return n, err
}

// LikesAndFeed reads the items' like counters and feed rows in one
// statement, so of one snapshot (InnoDB's consistent read).
func (m MariaDBLikes) LikesAndFeed(ctx context.Context, ids []int64) (likes, feed int64, err error) {
	arg := idsJSON(ids)
	err = m.DB.QueryRowContext(ctx, `SELECT (SELECT CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM likes WHERE item_id IN (`+idsTable+`)),
		(SELECT COUNT(*) FROM feed WHERE item_id IN (`+idsTable+`))`, arg, arg).Scan(&likes, &feed)
	return likes, feed, err
}

// SetFollowers gives the items n followers each and every other item
// none, whatever was set before.
func (m MariaDBLikes) SetFollowers(ctx context.Context, ids []int64, n int) error {
	arg := idsJSON(ids)
	_, err := m.DB.ExecContext(ctx, `UPDATE likes SET followers = CASE WHEN item_id IN (`+idsTable+`) THEN ? ELSE 0 END WHERE followers <> 0 OR item_id IN (`+idsTable+`)`, arg, n, arg)
	return err
}

// idsJSON is ids as a JSON array.
func idsJSON(ids []int64) string {
	if ids == nil {
		ids = []int64{}
	}
	b, _ := json.Marshal(ids)
	return string(b)
}
