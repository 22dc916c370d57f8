// Package observe samples what the database and the cache saw, every 100
// ms by default, so every figure herdbench reports traces to a source: a
// Source's database (DB) and cache (Cache), each read by its store's
// package (stores/postgres: pg_stat_statements and pg_stat_activity;
// stores/mysql: performance_schema's digests and users; stores/redis:
// INFO; stores/memcached: `stats`), and a load balancer's stats page.
//
// Samples hold cumulative counters; reports take deltas between them and
// never reset the sources. Every read is read-only.
package observe
