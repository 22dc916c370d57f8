package api

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Seed creates the items table with n rows and lets role read it. It runs
// as the database owner and is idempotent: a second call recreates the table.
func Seed(ctx context.Context, conn *pgx.Conn, n int, role string) error {
	if n < 1 {
		return fmt.Errorf("seed: %d items; want at least 1", n)
	}
	for _, q := range SeedStatements(n, role) {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("seed: %s: %w", q, err)
		}
	}
	return nil
}

// SeedStatements are the statements Seed runs, for providers that seed the
// database by script (docker compose's init script holds them).
func SeedStatements(n int, role string) []string {
	return []string{
		`DROP TABLE IF EXISTS items`,
		`CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, payload text NOT NULL)`,
		fmt.Sprintf(`INSERT INTO items SELECT g, 'item ' || g, repeat(md5(g::text), 8) FROM generate_series(1, %d) AS g`, n),
		`ANALYZE items`,
		fmt.Sprintf(`GRANT SELECT ON items TO %s`, pgx.Identifier{role}.Sanitize()),
		// the writes' tables: one counter row per item, every row there
		// from the start, so a hot item's writes contend for its row lock;
		// and its followers (none until a write herd gives the hot items
		// some), each of whom gets a feed row per applied like: the
		// fan-out; the ids of the queued writes applied, so a write
		// redelivered after a consumer died is applied once
		`DROP TABLE IF EXISTS likes`,
		`CREATE TABLE likes (item_id bigint PRIMARY KEY, n bigint NOT NULL, followers int NOT NULL DEFAULT 0)`,
		fmt.Sprintf(`INSERT INTO likes SELECT g, 0 FROM generate_series(1, %d) AS g`, n),
		`DROP TABLE IF EXISTS feed`,
		`CREATE TABLE feed (item_id bigint NOT NULL, follower int NOT NULL)`,
		`DROP TABLE IF EXISTS applied_writes`,
		`CREATE TABLE applied_writes (write_id text PRIMARY KEY, item_id bigint NOT NULL)`,
		fmt.Sprintf(`GRANT SELECT, UPDATE ON likes TO %s`, pgx.Identifier{role}.Sanitize()),
		fmt.Sprintf(`GRANT SELECT, INSERT ON feed TO %s`, pgx.Identifier{role}.Sanitize()),
		fmt.Sprintf(`GRANT SELECT, INSERT ON applied_writes TO %s`, pgx.Identifier{role}.Sanitize()),
	}
}
