// Package postgres is herdbench's Postgres (see package stores): how a
// target's is opened (read-only) and the testbed's, its counters
// (pg_stat_statements, pg_stat_activity, pg_locks, never reset) and what
// conndrop does (Conns: pg_terminate_backend, never herdbench's session).
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
	"github.com/herdbench/herdbench/triggers"
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

// Conns is a Postgres as conndrop touches it: the connections of the
// service's Role, ended with pg_terminate_backend, never herdbench's own
// session.
type Conns struct {
	DB   *DB // herdbench's session; nil before the target connects
	Role string
}

var _ triggers.ConnKiller = (*Conns)(nil)

func (p *Conns) DescribeKill() string {
	return fmt.Sprintf("pg_terminate_backend every connection of role %s", p.Role)
}

// Kill terminates every backend of Role but herdbench's own, and says
// how many.
func (p *Conns) Kill(ctx context.Context) (triggers.ConndropDetail, error) {
	var n int64
	err := p.DB.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE usename = $1 AND pid <> pg_backend_pid()`, p.Role).Scan(&n)
	if err != nil {
		return triggers.ConndropDetail{}, fmt.Errorf("terminate the connections of %s: %w", p.Role, err)
	}
	return triggers.ConndropDetail{Role: p.Role, ConnectionsReset: &n}, nil
}
