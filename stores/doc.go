// Package stores holds nothing but this rule, and a test that keeps it:
// each kind of store herdbench touches is one package under stores/, the
// only one that imports its driver (the testbed's API server excepted: it
// is the service under test and keeps its own data access).
//
//   - stores/redis: go-redis; the cache (INFO), the write queue's stream
//     (XINFO GROUPS), and what triggers do to it (UNLINK, PEXPIREAT,
//     FLUSHDB, PUBLISH, CLIENT PAUSE)
//   - stores/memcached: gomemcache and memcached's text protocol; `stats`,
//     delete, touch, flush_all
//   - stores/postgres: pgx; pg_stat_statements, pg_stat_activity and
//     pg_locks, pg_terminate_backend
//   - stores/mysql: go-sql-driver/mysql, for MySQL and MariaDB;
//     performance_schema's digests and users, KILL CONNECTION
//
// Each opens its store (for a target file, read-only where it only
// reads; for the testbed, as its owner), reads its counters into an
// observe.Sample (observe.DB, observe.Cache), acts on it as the triggers
// ask (triggers.Cache, Expirer, Broadcaster, Pauser, ConnKiller) and asks
// its version, which is how a starting server is seen to answer. The
// interfaces are the engine's; a store package implements them, and
// neither observe nor triggers names one.
package stores
