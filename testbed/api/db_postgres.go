package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herdbench/herdbench/testbed/replica"
)

// postgresDB is the replicas' Postgres: one pgxpool per replica, and the
// statements ItemQuery, FillQuery and WriteStatements, one round trip
// each.
type postgresDB struct{ pool *pgxpool.Pool }

var _ DB = (*postgresDB)(nil)

func newPostgresDB(o replica.Options) (*postgresDB, error) {
	pcfg, err := pgxpool.ParseConfig(o.PostgresDSN)
	if err != nil {
		return nil, fmt.Errorf("postgres dsn: %w", err)
	}
	// The pool stays full, as HikariCP's default (minimumIdle = maximum)
	// keeps it, and repairs itself within a second: a dropped connection
	// is replaced at once, so a connection drop is a reconnect storm.
	pcfg.MaxConns = o.DBPoolSize
	pcfg.MinConns = o.DBPoolSize
	pcfg.HealthCheckPeriod = time.Second
	pcfg.ConnConfig.ConnectTimeout = o.DBTimeout
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres pool: %w", err)
	}
	return &postgresDB{pool: pool}, nil
}

func (p *postgresDB) Item(ctx context.Context, id int64, cost time.Duration) (Item, error) {
	var it Item
	err := p.pool.QueryRow(ctx, ItemQuery, id, cost.Seconds()).Scan(&it.ID, &it.Name, &it.Payload, &it.Likes)
	if errors.Is(err, pgx.ErrNoRows) {
		err = errNotFound
	}
	return it, err
}

func (p *postgresDB) Items(ctx context.Context, lo, hi int64) ([]Item, error) {
	rows, err := p.pool.Query(ctx, FillQuery, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanItems(rows)
}

func (p *postgresDB) Like(ctx context.Context, id int64) error {
	tag, err := p.pool.Exec(ctx, WriteDirectQuery, id, 1)
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("item %d has no likes row", id)
	}
	return err
}

func (p *postgresDB) Apply(ctx context.Context, writeIDs []string, items []int64) (int64, error) {
	rows, err := p.pool.Query(ctx, WriteApplyQuery, writeIDs, items, 1)
	if err != nil {
		return 0, err
	}
	var applied int64
	for rows.Next() {
		var c int64
		if err = rows.Scan(&c); err != nil {
			break
		}
		applied += c
	}
	rows.Close()
	return applied, errors.Join(err, rows.Err())
}

func (p *postgresDB) Add(ctx context.Context, items, counts []int64) error {
	_, err := p.pool.Exec(ctx, WriteFlushQuery, items, counts, 1)
	return err
}

func (p *postgresDB) Ping(ctx context.Context) error { return p.pool.Ping(ctx) }

func (p *postgresDB) Pool() PoolStats {
	st := p.pool.Stat()
	return PoolStats{NewConns: st.NewConnsCount(), CanceledAcquires: st.CanceledAcquireCount()}
}

func (p *postgresDB) Close() { p.pool.Close() }
