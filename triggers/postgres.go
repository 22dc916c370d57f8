package triggers

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is a Postgres as conndrop touches it: the connections of the
// service's Role, ended with pg_terminate_backend, never herdbench's own
// session.
type Postgres struct {
	DB   *pgxpool.Pool // herdbench's session; nil before the target connects
	Role string
}

var _ ConnKiller = (*Postgres)(nil)

func (p *Postgres) DescribeKill() string {
	return fmt.Sprintf("pg_terminate_backend every connection of role %s", p.Role)
}

// Kill terminates every backend of Role but herdbench's own, and says
// how many.
func (p *Postgres) Kill(ctx context.Context) (ConndropDetail, error) {
	var n int64
	err := p.DB.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE usename = $1 AND pid <> pg_backend_pid()`, p.Role).Scan(&n)
	if err != nil {
		return ConndropDetail{}, fmt.Errorf("terminate the connections of %s: %w", p.Role, err)
	}
	return ConndropDetail{Role: p.Role, ConnectionsReset: &n}, nil
}
