// Package observe samples what the database and the cache saw, every 100 ms
// by default, so every figure herdbench reports traces to a source:
// pg_stat_statements calls of the statements under test and pg_stat_activity
// connections of the app's role in Postgres; or, in MySQL and MariaDB,
// COUNT_STAR of the selected statement digests in
// performance_schema.events_statements_summary_by_digest and the service
// user's connections in performance_schema.users; and INFO stats of Redis,
// or `stats` of Memcached.
//
// Samples hold cumulative counters; reports take deltas between them and
// never reset the sources. Every read is read-only.
package observe
