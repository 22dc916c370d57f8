// Package observe samples what the database and the cache saw, every 100 ms
// by default, so every figure herdbench reports traces to a source:
// pg_stat_statements calls of the statements under test and pg_stat_activity
// connections of the app's role in Postgres, and INFO stats of Redis.
//
// Samples hold cumulative counters; reports take deltas between them and
// never reset the sources.
package observe
