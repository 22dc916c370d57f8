// Package mysql is herdbench's MySQL and MariaDB (see package stores):
// how a target's is opened (read-only) and the testbed's, its counters
// (performance_schema's digests and users, lock waits) and what conndrop
// does (Conns: KILL CONNECTION), sparing herdbench's own connections,
// which carry its program_name.
package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/herdbench/herdbench/observe"
	"github.com/herdbench/herdbench/triggers"
)

// DB is a target's MySQL or MariaDB, as herdbench holds it, read through
// performance_schema and information_schema, in a read-only session: the
// statements that count as DB queries by digest, the service user's
// connections and lock waits.
type DB struct {
	DB   *sql.DB // a user with SELECT on performance_schema and PROCESS
	User string  // the service's user: its connections and lock waits
	// Digests are the DIGEST values of the statements that count; Pattern
	// a regular expression (REGEXP) on DIGEST_TEXT. A digest either
	// selects counts; herdbench's own reads of performance_schema and
	// information_schema never do.
	Digests []string
	Pattern string
}

// The digest table has no user column: COUNT_STAR counts a digest's
// statements by every user. Its own reads name the schemas, so they are
// left out; a service's statements do not read them.
const mysqlOwn = `DIGEST_TEXT NOT LIKE '%performance\_schema%' AND DIGEST_TEXT NOT LIKE '%information\_schema%'`

// mysqlSampleSQL reads one sample in one statement, so every figure is of
// one instant. The server's start is UNIX_TIMESTAMP() - Uptime, both of
// the statement's start, in whole seconds: the same for every read until
// the server restarts. {selection} is the digest selection.
const mysqlSampleSQL = `SELECT
	(SELECT CAST(COALESCE(SUM(COUNT_STAR), 0) AS SIGNED) FROM performance_schema.events_statements_summary_by_digest
		WHERE ({selection}) AND ` + mysqlOwn + `),
	(SELECT CAST(COALESCE(SUM(CURRENT_CONNECTIONS), 0) AS SIGNED) FROM performance_schema.users WHERE USER = ?),
	(SELECT CAST(COALESCE(SUM(TOTAL_CONNECTIONS), 0) AS SIGNED) FROM performance_schema.users WHERE USER = ?),
	CAST(UNIX_TIMESTAMP() - (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME') AS SIGNED),
	(SELECT COUNT(*) FROM information_schema.PROCESSLIST p WHERE p.USER = ? AND (p.STATE LIKE 'Waiting for%lock'
		OR p.ID IN (SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'))),
	CAST((SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_ROW_LOCK_CURRENT_WAITS') AS SIGNED)
	+ (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for%lock'),
	(SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = ? AND COMMAND IN ('Query', 'Execute') AND ID <> CONNECTION_ID())`

// selection is the WHERE clause that selects the digests, and its
// arguments.
func (m *DB) selection() (string, []any) {
	var or []string
	var args []any
	if len(m.Digests) > 0 {
		or = append(or, "DIGEST IN (?"+strings.Repeat(", ?", len(m.Digests)-1)+")")
		for _, d := range m.Digests {
			args = append(args, strings.ToLower(d))
		}
	}
	if m.Pattern != "" {
		or = append(or, "DIGEST_TEXT REGEXP ?")
		args = append(args, m.Pattern)
	}
	if len(or) == 0 {
		return "FALSE", nil
	}
	return strings.Join(or, " OR "), args
}

// ReadDB fills the sample's database figures: Calls (the selected digests'
// COUNT_STAR), Connections and ConnectionsOpened (performance_schema.users
// CURRENT_CONNECTIONS and TOTAL_CONNECTIONS of User), LockWaits (User's
// connections waiting on a row lock, INNODB_TRX in LOCK WAIT, or on a
// metadata lock), LocksWaiting (every user's: Innodb_row_lock_current_waits
// and the metadata lock waits), Active (User's connections executing a
// statement, this reading excepted), DBStart.
//
// InnoDB refreshes INNODB_TRX only when it was last read more than 100 ms
// before, so LockWaits may be a sample late; Innodb_row_lock_current_waits
// is live. MariaDB gives a digest to statements sent as text, not to
// executions of server-side prepared statements (statement/com/Execute):
// a service that prepares its statements on the server is not counted.
//
// A nil DB (a target without MySQL) reads nothing.
func (m *DB) ReadDB(ctx context.Context, _ observe.Source, smp *observe.Sample) error {
	if m == nil {
		return nil
	}
	where, args := m.selection()
	args = append(args, m.User, m.User, m.User, m.User)
	var start int64
	err := m.DB.QueryRowContext(ctx, strings.Replace(mysqlSampleSQL, "{selection}", where, 1), args...).Scan(&smp.Calls, &smp.Connections,
		&smp.ConnectionsOpened, &start, &smp.LockWaits, &smp.LocksWaiting, &smp.Active)
	if err != nil {
		return fmt.Errorf("sample mysql: %w", err)
	}
	smp.DBStart = time.Unix(start, 0)
	return nil
}

// Totals are the selected digests' statements and the rows they changed
// or returned so far (COUNT_STAR, and SUM_ROWS_AFFECTED plus
// SUM_ROWS_SENT), every user's: what pg_stat_statements' calls and rows
// are to Postgres' StatementTotals.
func (m *DB) Totals(ctx context.Context) (calls, rows int64, err error) {
	where, args := m.selection()
	q := `SELECT CAST(COALESCE(SUM(COUNT_STAR), 0) AS SIGNED), CAST(COALESCE(SUM(SUM_ROWS_AFFECTED + SUM_ROWS_SENT), 0) AS SIGNED)
		FROM performance_schema.events_statements_summary_by_digest WHERE (` + where + `) AND ` + mysqlOwn
	if err = m.DB.QueryRowContext(ctx, q, args...).Scan(&calls, &rows); err != nil {
		err = fmt.Errorf("read performance_schema's digests: %w", err)
	}
	return calls, rows, err
}

var _ observe.DB = (*DB)(nil)

// Config is a DSN as the Go MySQL driver reads it.
type Config = mysql.Config

// ParseDSN reads dsn as the Go MySQL driver does.
func ParseDSN(dsn string) (*Config, error) { return mysql.ParseDSN(dsn) }

// DSN is the Go MySQL driver's DSN of user with password on database db,
// over net ("tcp" or "unix") at addr.
func DSN(user, password, net, addr, db string) string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr, c.DBName = user, password, net, addr, db
	return c.FormatDSN()
}

// Open opens herdbench's own connections on cfg, at most conns of them:
// its statements sent as text (no server-side statements: MariaDB keeps
// no digest of them), 5 s timeouts, program as their program_name
// connection attribute (conndrop spares them), and read-only sessions
// when readOnly (herdbench reads the statistics tables, and KILL is not a
// write). Nothing is contacted yet.
func Open(cfg *Config, program string, readOnly bool, conns int) (*sql.DB, error) {
	cfg.InterpolateParams = true
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 5*time.Second, 5*time.Second
	cfg.ConnectionAttributes = "program_name:" + program
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	if readOnly {
		conn = readOnlyConnector{conn}
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(conns)
	return db, nil
}

// readOnlyConnector opens connections whose session is read-only.
type readOnlyConnector struct{ driver.Connector }

func (r readOnlyConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := c.(driver.ExecerContext)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("the MySQL driver cannot set the session read-only")
	}
	if _, err := ex.ExecContext(ctx, "SET SESSION TRANSACTION READ ONLY", nil); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Version asks the server at dsn its version.
func Version(ctx context.Context, dsn string) (string, error) {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	err = db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
	return v, err
}

// Conns is a MySQL or MariaDB as conndrop touches it: the connections of
// the service's User, never herdbench's own (its session, and every
// connection whose program_name connection attribute is Spare).
type Conns struct {
	DB    *sql.DB // herdbench's session; its user needs CONNECTION ADMIN (or SUPER) to KILL another user's connections
	User  string
	Spare string // the program_name of herdbench's own connections
}

var _ triggers.ConnKiller = (*Conns)(nil)

func (m *Conns) DescribeKill() string {
	return fmt.Sprintf("KILL every connection of MySQL user %s, but herdbench's own", m.User)
}

// Kill ends every connection of User but herdbench's own (KILL
// CONNECTION), and says how many it ended; one that ended meanwhile is
// not counted.
func (m *Conns) Kill(ctx context.Context) (triggers.ConndropDetail, error) {
	n, err := m.kill(ctx)
	if err != nil {
		return triggers.ConndropDetail{}, err
	}
	return triggers.ConndropDetail{User: m.User, ConnectionsReset: &n}, nil
}

// errUnknownThread is MySQL's answer to a KILL of a connection that ended
// meanwhile.
const errUnknownThread = 1094

// kill ends the connections and returns how many.
func (m *Conns) kill(ctx context.Context) (int64, error) {
	rows, err := m.DB.QueryContext(ctx, `SELECT p.ID FROM information_schema.PROCESSLIST p
		WHERE p.USER = ? AND p.ID <> CONNECTION_ID() AND p.ID NOT IN (SELECT PROCESSLIST_ID
			FROM performance_schema.session_connect_attrs WHERE ATTR_NAME = 'program_name' AND ATTR_VALUE = ?)`, m.User, m.Spare)
	if err != nil {
		return 0, fmt.Errorf("list the connections of %s: %w", m.User, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var n int64
	for _, id := range ids {
		_, err := m.DB.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id))
		if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == errUnknownThread {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("kill connection %d of %s: %w", id, m.User, err)
		}
		n++
	}
	return n, nil
}
