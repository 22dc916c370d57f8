package subject

import (
	"context"

	"github.com/herdbench/herdbench/experiment/result"
	"github.com/herdbench/herdbench/testbed/admin"
)

// counters are the replicas' counters a run's results hold (api.*), in
// their order, each with the field of admin.Counters it reads: the
// testbed's kind declares them to the engine (result.DeclareCounters).
var counters = []struct {
	name string
	of   func(*admin.Counters) int64
}{
	{"requests", func(c *admin.Counters) int64 { return c.Requests }},
	{"loads", func(c *admin.Counters) int64 { return c.Loads }},
	{"load_errors", func(c *admin.Counters) int64 { return c.LoadErrors }},
	{"load_retries", func(c *admin.Counters) int64 { return c.LoadRetries }},
	{"early_loads", func(c *admin.Counters) int64 { return c.EarlyLoads }},
	{"coalesced", func(c *admin.Counters) int64 { return c.Coalesced }},
	{"stale_served", func(c *admin.Counters) int64 { return c.StaleServed }},
	{"lock_waits", func(c *admin.Counters) int64 { return c.LockWaits }},
	{"db_new_conns", func(c *admin.Counters) int64 { return c.DBNewConns }},
	{"db_canceled_acquires", func(c *admin.Counters) int64 { return c.DBCanceledAcquires }},
}

// rowCounters are the replicas' counters the timeline reads every row
// and the loop compares after the trigger with before, each with its
// label in the loop's held_by and the field of admin.Counters it reads.
var rowCounters = []struct {
	result.RowCounter
	of func(*admin.Counters) int64
}{
	{result.RowCounter{Name: "loads", Label: "loads"}, func(c *admin.Counters) int64 { return c.Loads }},
	{result.RowCounter{Name: "load_errors", Label: "load errors"}, func(c *admin.Counters) int64 { return c.LoadErrors }},
	{result.RowCounter{Name: "new_conns", Label: "new conns"}, func(c *admin.Counters) int64 { return c.DBNewConns }},
	{result.RowCounter{Name: "canceled_acquires", Label: "canceled waits"}, func(c *admin.Counters) int64 { return c.DBCanceledAcquires }},
}

// counterRows are the results contract's rows of the counters.
var counterRows = []result.ContractRow{
	{Fields: "`api.requests`, `api.loads`, `api.coalesced`, `api.stale_served`, `api.lock_waits`, `api.early_loads`, `api.load_errors`, `api.load_retries`",
		Source: "the replicas' `herdbench_api_*` counters, summed; `api.loads` equals `db.queries_total` (tested)",
		Window: "load start to end"},
	{Fields: "`api.db_new_conns`, `api.db_canceled_acquires`",
		Source: "the replicas' connection pools, summed (pgxpool's own counts, from the reset: `herdbench_api_db_new_conns_total`, `herdbench_api_db_canceled_acquires_total`): connections opened to Postgres, and waits for a pooled connection that ended with their context, the query never sent. A query cancelled mid-flight costs its connection (pgx closes it), so a herd of abandoned loads shows as both (tested)",
		Window: "load start to end"},
}

func init() {
	names := make([]string, len(counters))
	for i, c := range counters {
		names[i] = c.name
	}
	result.DeclareCounters(counterRows, names...)
	for _, c := range rowCounters {
		result.DeclareRowCounters(c.RowCounter)
	}
}

// Counters sums the replicas' counters.
func (s *Testbed) Counters(ctx context.Context) (result.Counters, error) {
	c, err := s.Admin.Counters(ctx)
	if err != nil {
		return nil, err
	}
	out := make(result.Counters, len(counters))
	for i, x := range counters {
		out[i] = result.Counter{Name: x.name, Value: x.of(&c)}
	}
	return out, nil
}

// Loads is the loads the replicas completed: each one statement Postgres
// (or MariaDB) counted.
func (s *Testbed) Loads(c result.Counters) int64 { return c.Value("loads") }

// Layer is the replicas' layer of a two-tier call chain: the requests they
// answered and their database attempts, loads and load errors.
func (s *Testbed) Layer(c result.Counters) (requests, dbAttempts int64) {
	return c.Value("requests"), c.Value("loads") + c.Value("load_errors")
}
