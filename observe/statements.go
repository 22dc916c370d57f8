package observe

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// statementTotalsSQL sums the calls and rows of statements by their exact
// text, run by a role.
const statementTotalsSQL = `SELECT coalesce(sum(s.calls), 0)::bigint, coalesce(sum(s.rows), 0)::bigint
	FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1 AND s.query = ANY($2)`

// StatementTotals reads pg_stat_statements' calls and rows, so far, of the
// statements whose text is one of queries, run by role: a write herd's
// statements, read before and after its arm.
func StatementTotals(ctx context.Context, db *pgxpool.Pool, role string, queries []string) (calls, rows int64, err error) {
	if err = db.QueryRow(ctx, statementTotalsSQL, role, queries).Scan(&calls, &rows); err != nil {
		err = fmt.Errorf("read pg_stat_statements: %w", err)
	}
	return calls, rows, err
}
