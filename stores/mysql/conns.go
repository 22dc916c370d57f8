package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/herdbench/herdbench/triggers"
)

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
