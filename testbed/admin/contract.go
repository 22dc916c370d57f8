package admin

import (
	"fmt"

	"github.com/herdbench/herdbench/herd"
)

// The endpoints of a replica. The edge role serves PathConfig, PathReset,
// PathHealth and PathMetrics too.
const (
	PathConfig  = "/admin/config" // GET: the run-time config; PUT: a Patch over the start-up config, answered with the config run now
	PathReset   = "/admin/reset"  // POST: clear in-process state and counters; an optional ResetRequest reseeds
	PathFill    = "/admin/fill"   // POST: a FillRequest, answered with a FillResponse
	PathHealth  = "/healthz"      // GET: Health, 503 when a dependency is away
	PathMetrics = "/metrics"      // GET: the Prometheus text format
)

// ItemPath is the request for item id: GET answers it, POST to its
// "/likes" writes one like.
func ItemPath(id int64) string { return fmt.Sprintf("/items/%d", id) }

// Patch is what an arm sets of the replicas' run-time config: the knobs it
// names (and the strategy), each by its JSON name. PUT /admin/config reads
// a patch over the config the replica was started with, so whatever an
// arm does not name stays as the testbed was started. It is herd's
// Settings: the engine carries it without knowing the knobs.
type Patch = herd.Settings

// ResetRequest is the optional body of POST /admin/reset: a seed that
// reseeds the replica, so an experiment on a testbed it did not start
// still replays from its seed.
type ResetRequest struct {
	Seed *uint64 `json:"seed"`
}

// FillRequest is the body of POST /admin/fill: the items from..to.
type FillRequest struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// FillResponse answers it.
type FillResponse struct {
	Filled  int64 `json:"filled"`  // items cached
	Queries int   `json:"queries"` // fill queries it took
}

// Health is the body of /healthz.
type Health struct {
	Replica   string `json:"replica"`
	Seed      uint64 `json:"seed"`
	Redis     string `json:"redis"`               // "ok", the error, or "unused" (Memcached without a Redis)
	Memcached string `json:"memcached,omitempty"` // with Cache memcached: "ok" or the error
	Postgres  string `json:"postgres"`            // "ok" or the error; "unused" on MariaDB
	MariaDB   string `json:"mariadb,omitempty"`   // with DB mariadb: "ok" or the error
	// DBTimeoutMS is the replica's --db-timeout: the longest one item
	// query may take, its pool wait included (a stuck arm's settle time
	// is at least it)
	DBTimeoutMS int64 `json:"db_timeout_ms"`
	// DBPool is the replica's --db-pool: the database connections it
	// keeps open (the model's workers, package predict); 0 from a
	// replica that predates it: unknown
	DBPool int32 `json:"db_pool,omitempty"`
}

// StrategyHeader chooses the strategy of one request, over the replica's
// own: a service whose mitigation a header selects, as a feature flag
// carried by the request would. The other knobs stay the replica's.
const StrategyHeader = "X-Herdbench-Strategy"

// DeadlineHeader carries the time the caller has left for a request, in
// whole milliseconds when it was sent, as Envoy's
// x-envoy-expected-rq-timeout-ms and gRPC's grpc-timeout do: deadline
// propagation. A replica does not start a load, or a load's retry, past
// it, and a query still running at it is canceled: nobody waits for the
// answer any more. The edge role sends it when its config has a deadline.
const DeadlineHeader = "X-Herdbench-Deadline-Ms"

// PriorityHeader marks a request that must be served: under shed_priority a
// request with "X-Priority: critical" is admitted before the rest, which
// are shed first. Any other value, or none, is a normal request.
const (
	PriorityHeader   = "X-Priority"
	PriorityCritical = "critical"
)

// WriteIDHeader names a write, so a client can tell which of its writes
// were applied; a write without one gets a random id.
const WriteIDHeader = "X-Herdbench-Write-Id"
