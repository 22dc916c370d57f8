package api

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5/pgxpool"
)

// What a write herd reads and sets of the testbed's likes in Postgres
// (the tables of SeedStatements): the SQL of the testbed's tables stays
// in the package that creates them.

// Likes sums the items' like counters.
func Likes(ctx context.Context, db *pgxpool.Pool, ids []int64) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, `SELECT coalesce(sum(n), 0)::bigint FROM likes WHERE item_id = ANY($1)`, ids).Scan(&n)
	return n, err
}

// LikesAndFeed reads the items' like counters and feed rows in one
// snapshot.
func LikesAndFeed(ctx context.Context, db *pgxpool.Pool, ids []int64) (likes, feed int64, err error) {
	err = db.QueryRow(ctx, `SELECT (SELECT coalesce(sum(n), 0)::bigint FROM likes WHERE item_id = ANY($1)),
		(SELECT count(*) FROM feed WHERE item_id = ANY($1))`, ids).Scan(&likes, &feed)
	return likes, feed, err
}

// SetFollowers gives the items n followers each and every other item
// none, so their likes fan out to n feed rows each, whatever was set
// before.
func SetFollowers(ctx context.Context, db *pgxpool.Pool, ids []int64, n int) error {
	_, err := db.Exec(ctx, `UPDATE likes SET followers = CASE WHEN item_id = ANY($1) THEN $2 ELSE 0 END WHERE followers <> 0 OR item_id = ANY($1)`, ids, n)
	return err
}

// WriteStatements are the statements that apply writes, one per write
// strategy: what pg_stat_statements counts of a write herd.
var WriteStatements = []string{WriteDirectQuery, WriteApplyQuery, WriteFlushQuery}

// LikesTable is what a write herd reads and sets of the testbed's likes
// and feed, in whichever database holds them.
type LikesTable interface {
	Likes(ctx context.Context, ids []int64) (int64, error)
	LikesAndFeed(ctx context.Context, ids []int64) (likes, feed int64, err error)
	SetFollowers(ctx context.Context, ids []int64, n int) error
}

// PostgresLikes is the LikesTable in Postgres.
type PostgresLikes struct{ Pool *pgxpool.Pool }

func (p PostgresLikes) Likes(ctx context.Context, ids []int64) (int64, error) {
	return Likes(ctx, p.Pool, ids)
}

func (p PostgresLikes) LikesAndFeed(ctx context.Context, ids []int64) (int64, int64, error) {
	return LikesAndFeed(ctx, p.Pool, ids)
}

func (p PostgresLikes) SetFollowers(ctx context.Context, ids []int64, n int) error {
	return SetFollowers(ctx, p.Pool, ids, n)
}

// MariaDBLikes is the LikesTable in MariaDB (schema_mariadb.go).
type MariaDBLikes struct{ DB *sql.DB }

func (m MariaDBLikes) Likes(ctx context.Context, ids []int64) (int64, error) {
	return LikesMariaDB(ctx, m.DB, ids)
}

func (m MariaDBLikes) LikesAndFeed(ctx context.Context, ids []int64) (int64, int64, error) {
	return LikesAndFeedMariaDB(ctx, m.DB, ids)
}

func (m MariaDBLikes) SetFollowers(ctx context.Context, ids []int64, n int) error {
	return SetFollowersMariaDB(ctx, m.DB, ids, n)
}
