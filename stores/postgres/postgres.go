// Package postgres is herdbench's Postgres: how a target's is opened
// (read-only) and the testbed's (as its owner), the counters a sample
// reads (pg_stat_statements, pg_stat_activity, pg_locks), what conndrop
// does (Conns: pg_terminate_backend) and its version. It is the only
// package that imports pgx, the testbed's API server excepted.
//
// Guarantees: the statistics are read as they are, never reset;
// herdbench's own session is never counted nor terminated.
package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/herdbench/herdbench/observe"
)

// DB is a target's Postgres, as herdbench holds it: pgx's pool, which a
// test may query directly.
type DB struct{ *pgxpool.Pool }

var _ observe.DB = (*DB)(nil)

// Open opens a pool of at most conns connections on dsn, each session
// with params (nil: none), and pings it. Its error says which step
// failed, in the testbed's words, wrapping pgx's own.
func Open(ctx context.Context, dsn string, conns int32, params map[string]string) (*DB, error) {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres dsn: %w", err)
	}
	pcfg.MaxConns = conns
	for k, v := range params {
		pcfg.ConnConfig.RuntimeParams[k] = v
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		return &DB{pool}, fmt.Errorf("postgres %s: %w", dsn, err)
	}
	return &DB{pool}, nil
}

// Hosts are every host a DSN reaches, as pgx reads it: its hosts and
// fallbacks, with the environment's PGHOST and service files. A Unix
// socket is this machine: localhost. A DSN that does not parse is an
// error.
func Hosts(dsn string) ([]string, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	var hosts []string
	add := func(h string) {
		if strings.HasPrefix(h, "/") {
			h = "localhost"
		}
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	add(cfg.Host)
	for _, fb := range cfg.Fallbacks {
		add(fb.Host)
	}
	return hosts, nil
}

// Connect opens one connection on dsn: the testbed's seed.
func Connect(ctx context.Context, dsn string) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }

// Identifier is name quoted as an SQL identifier.
func Identifier(name string) string { return pgx.Identifier{name}.Sanitize() }

// Version asks the server at dsn its version: its number alone.
func Version(ctx context.Context, dsn string) (string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "", err
	}
	v, _, _ = strings.Cut(v, " ")
	return v, nil
}

const sampleSQL = `SELECT
	(SELECT coalesce(sum(s.calls), 0)::bigint FROM pg_stat_statements s
		JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $2
		AND (s.query = $1 OR s.queryid = ANY($4::bigint[]) OR ($5 <> '' AND s.query ~ $5))),
	(SELECT count(*) FROM pg_stat_activity WHERE usename = $2),
	(SELECT count(*) FROM pg_stat_activity WHERE usename = $2 AND backend_start >= $3),
	pg_postmaster_start_time(),
	(SELECT coalesce(sum(s.calls), 0)::bigint FROM pg_stat_statements s
		JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $2 AND $6 <> '' AND s.query = $6),
	(SELECT count(*) FROM pg_stat_activity WHERE usename = $2 AND wait_event_type = 'Lock'),
	(SELECT count(*) FROM pg_locks WHERE NOT granted),
	(SELECT count(*) FROM pg_stat_activity WHERE usename = $2 AND state = 'active' AND pid <> pg_backend_pid())`

// ReadDB reads the sample's database figures: src's statements' calls
// and its role's connections, new ones since src.Since, lock waits and
// statements running. A nil DB (a target without Postgres) reads nothing.
func (d *DB) ReadDB(ctx context.Context, src observe.Source, smp *observe.Sample) error {
	if d == nil {
		return nil
	}
	st := src.Statements
	ids := st.QueryIDs
	if ids == nil {
		ids = []int64{}
	}
	err := d.QueryRow(ctx, sampleSQL, st.Text, src.Role, src.Since, ids, st.Pattern, st.Fill).Scan(&smp.Calls, &smp.Connections,
		&smp.NewConnections, &smp.DBStart, &smp.FillCalls, &smp.LockWaits, &smp.LocksWaiting, &smp.Active)
	if err != nil {
		return fmt.Errorf("sample postgres: %w", err)
	}
	return nil
}

// statementTotalsSQL sums the calls and rows of statements by their exact
// text, run by a role.
const statementTotalsSQL = `SELECT coalesce(sum(s.calls), 0)::bigint, coalesce(sum(s.rows), 0)::bigint
	FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1 AND s.query = ANY($2)`

// StatementTotals reads pg_stat_statements' calls and rows, so far, of the
// statements whose text is one of queries, run by role: a write herd's
// statements, read before and after its arm.
func (d *DB) StatementTotals(ctx context.Context, role string, queries []string) (calls, rows int64, err error) {
	if err = d.QueryRow(ctx, statementTotalsSQL, role, queries).Scan(&calls, &rows); err != nil {
		err = fmt.Errorf("read pg_stat_statements: %w", err)
	}
	return calls, rows, err
}
