package api

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// What a write herd reads and sets of the testbed's likes in Postgres
// (the tables of SeedStatements): the SQL of the testbed's tables stays
// in the package that creates them.

// PostgresLikes is the likes and feed in Postgres, as a write herd reads
// and sets them (triggers.LikesTable).
type PostgresLikes struct{ Pool *pgxpool.Pool }

// Likes sums the items' like counters.
func (p PostgresLikes) Likes(ctx context.Context, ids []int64) (int64, error) {
	var n int64
	err := p.Pool.QueryRow(ctx, `SELECT coalesce(sum(n), 0)::bigint FROM likes WHERE item_id = ANY($1)`, ids).Scan(&n)
	return n, err
}

// LikesAndFeed reads the items' like counters and feed rows in one
// snapshot.
func (p PostgresLikes) LikesAndFeed(ctx context.Context, ids []int64) (likes, feed int64, err error) {
	err = p.Pool.QueryRow(ctx, `SELECT (SELECT coalesce(sum(n), 0)::bigint FROM likes WHERE item_id = ANY($1)),
		(SELECT count(*) FROM feed WHERE item_id = ANY($1))`, ids).Scan(&likes, &feed)
	return likes, feed, err
}

// SetFollowers gives the items n followers each and every other item
// none, so their likes fan out to n feed rows each, whatever was set
// before.
func (p PostgresLikes) SetFollowers(ctx context.Context, ids []int64, n int) error {
	_, err := p.Pool.Exec(ctx, `UPDATE likes SET followers = CASE WHEN item_id = ANY($1) THEN $2 ELSE 0 END WHERE followers <> 0 OR item_id = ANY($1)`, ids, n)
	return err
}

// WriteStatements are the statements that apply writes, one per write
// strategy: what pg_stat_statements counts of a write herd.
var WriteStatements = []string{WriteDirectQuery, WriteApplyQuery, WriteFlushQuery}
