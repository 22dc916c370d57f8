package postgres

import (
	"context"
	"fmt"

	"github.com/herdbench/herdbench/triggers"
)

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
