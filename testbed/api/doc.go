// Package api is the testbed's service under test: an HTTP API that serves
// items cache-aside, Redis or Memcached in front of Postgres or MariaDB
// (DB, db.go), with stampede mitigations that can be switched while it
// runs.
//
// GET /items/{id} reads the cache (Cache: Redis, or Memcached with
// replica.Options.Cache, caches.go); on a miss the item loader runs ItemQuery, an
// expensive query held open with pg_sleep (ItemQueryMariaDB, with SLEEP,
// on MariaDB), and caches the row with its TTL.
// The X-Cache response header says how the item was served (hit, miss, early,
// stale, coalesced, waited). PUT /admin/config switches the mitigation
// (replica.Strategies) and its knobs; POST /admin/reset clears in-process state and
// counters so every arm of an experiment starts equal. /metrics exports the
// herdbench_api_* series and /healthz checks both dependencies.
// What travels on the wire (the endpoints' paths and bodies, the headers,
// the X-Cache outcomes, the metric names) and the harness's client of it
// are package testbed/admin; the server answers by its names. What a
// replica is started with and switched to, the mitigations' names and
// knobs, are package testbed/replica's words; this package does what they
// say: each mitigation's hooks (mitigation.go), on a type of its own over
// the mitigation's knobs.
//
// Guarantees the harness relies on: herdbench_api_loads_total counts exactly
// the item queries that completed in Postgres, so it equals the delta of
// pg_stat_statements calls for ItemQuery (on MariaDB, of COUNT_STAR of the
// digest ItemDigestMariaDB selects, less the queries canceled after they
// were sent, which MariaDB runs to their end); randomness (TTL jitter, xfetch
// draws) comes from a source seeded with replica.Options.Seed and reseeded by reset;
// a config the cache cannot honour (replica.Options.CacheProblems) is refused at
// start and by PUT /admin/config, naming why and what to use.
package api
