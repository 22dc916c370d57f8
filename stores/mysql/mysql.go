// Package mysql is herdbench's MySQL and MariaDB: how a target's is
// opened (read-only) and the testbed's (as root), the counters a sample
// reads (performance_schema's digests and users, the lock waits), what
// conndrop does (Conns: KILL CONNECTION) and its version. It is the only
// package that imports go-sql-driver/mysql, the testbed's API server
// excepted; others use database/sql on the handles it opens.
//
// Guarantees: herdbench's connections carry its program_name, which
// conndrop spares; its own reads of performance_schema never count as the
// service's statements.
package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/herdbench/herdbench/observe"
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
