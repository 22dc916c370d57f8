package replica

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herdbench/herdbench/herd"
)

// Options configure one replica at start. Config is its initial run-time
// configuration and the base that PUT /admin/config applies changes to.
type Options struct {
	Name string // replica name, reported in X-Replica and /healthz
	// Cache is the store of the items: CacheRedis (the default) or
	// CacheMemcached, at MemcachedAddr. Under Memcached, RedisAddr is
	// optional: the write queue's stream, when given.
	Cache         string
	RedisAddr     string // host:port
	MemcachedAddr string // host:port, with Cache memcached
	// DB is the database of the items: DBPostgres (the default, also
	// when empty) at PostgresDSN, or DBMariaDB at MySQLDSN.
	DB            string
	PostgresDSN   string        // the app role's DSN
	MySQLDSN      string        // with DB mariadb: the app user's go-sql-driver DSN, user:pw@tcp(host:port)/db
	DBPoolSize    int32         // database connections, kept open (pgxpool MaxConns and MinConns; database/sql's open and idle)
	RedisPoolSize int           // Redis connections; Memcached's idle connections too
	DBTimeout     time.Duration // bound on one item query, pool wait included
	RedisTimeout  time.Duration // dial, read and write timeout of Redis commands, and of Memcached's
	Seed          uint64        // seeds jitter, xfetch draws and lock tokens
	Config        Config
	// Mitigations are the strategies the replica accepts (nil:
	// DefaultMitigations); Config's knobs are read as theirs.
	Mitigations *Mitigations
}

// DefaultOptions are a replica's defaults; the addresses have none.
var DefaultOptions = Options{
	Name:          "api",
	Cache:         CacheRedis,
	DB:            DBPostgres,
	DBPoolSize:    10,
	RedisPoolSize: 20,
	DBTimeout:     5 * time.Second,
	RedisTimeout:  time.Second,
	Seed:          1,
	Config:        DefaultConfig,
}

// The caches Options.Cache accepts.
const (
	CacheRedis     = "redis"     // Redis: every mitigation, notify and every write strategy
	CacheMemcached = "memcached" // Memcached: every mitigation; no broadcast invalidation; queue only beside a Redis
)

// Caches is the one list of Options.Cache's values.
var Caches = []string{CacheRedis, CacheMemcached}

// MaxMemcachedTTL is the longest TTL whose exptime memcached takes as a
// relative time: 30 days, less the second expiry adds.
const MaxMemcachedTTL = 30*24*time.Hour - time.Second

// The databases Options.DB accepts.
const (
	DBPostgres = "postgres" // Postgres through pgxpool, at Options.PostgresDSN
	DBMariaDB  = "mariadb"  // MariaDB (or MySQL) through database/sql and go-sql-driver, at Options.MySQLDSN
)

// DBs is the one list of Options.DB's values.
var DBs = []string{DBPostgres, DBMariaDB}

// Problems are every problem with o at once, each a FieldError naming its
// field (db_pool for DBPoolSize, as the flags spell them): the start
// options, then the run-time config and what its cache cannot do. A zero
// pool or timeout is refused, not replaced: the drivers would read it as
// their own default, or as no time at all. The addresses are the
// caller's to require: a provider gives them to the replicas it starts.
func (o Options) Problems() herd.FieldErrors {
	var errs herd.FieldErrors
	if o.DBPoolSize < 1 || o.DBPoolSize > 1000 {
		errs.Add("db_pool", "%d out of range (accepted: 1 to 1000 connections per replica)", o.DBPoolSize)
	}
	if o.RedisPoolSize < 1 || o.RedisPoolSize > 10_000 {
		errs.Add("redis_pool", "%d out of range (accepted: 1 to 10000 connections per replica)", o.RedisPoolSize)
	}
	for _, d := range []struct {
		field string
		d     time.Duration
	}{{"db_timeout", o.DBTimeout}, {"redis_timeout", o.RedisTimeout}} {
		if d.d < time.Millisecond { // a bound below the clock's grain of a round trip fails everything
			errs.Add(d.field, "%s out of range (accepted: 1ms or more, such as 1s)", d.d)
		}
	}
	// the item query holds its connection query_cost: a bound no longer
	// than that times every load out
	if cost := time.Duration(o.Config.QueryCost); o.DBTimeout >= time.Millisecond && cost >= o.DBTimeout {
		errs = append(errs, &herd.FieldError{Field: "db_timeout",
			Msg: fmt.Sprintf("%s is not longer than query_cost, %s: every item query would time out (accepted: above %s, or a query_cost below %s)", o.DBTimeout, cost, cost, o.DBTimeout),
			Other: &herd.FieldError{Field: "query_cost",
				Msg: fmt.Sprintf("%s is not shorter than db_timeout, %s: every item query would time out (accepted: below %s, or a db_timeout above %s)", cost, o.DBTimeout, o.DBTimeout, cost)}})
	}
	if o.Cache != "" && !slices.Contains(Caches, o.Cache) {
		errs.Add("cache", "%q is not a cache (accepted: %s)", o.Cache, strings.Join(Caches, ", "))
	}
	errs = append(errs, o.DBProblems()...)
	errs = append(errs, o.Config.Problems()...)
	return append(errs, o.CacheProblems(o.Config)...)
}

// DBProblems are the problems with o's database: a kind that is not one
// of DBs, a MySQLDSN without DBMariaDB, and DBMariaDB without a MySQLDSN. The last is refused once o names any
// address (the options of a replica to start, as testbed serve's): a
// provider checks its replicas' options before it has started the
// database whose DSN it then gives them. The server refuses it always,
// and a DSN its driver cannot read (api.Problems).
func (o Options) DBProblems() herd.FieldErrors {
	var errs herd.FieldErrors
	switch {
	case o.DB != "" && !slices.Contains(DBs, o.DB):
		errs.Add("db", "%q is not a database (accepted: %s)", o.DB, strings.Join(DBs, ", "))
	case o.MySQLDSN != "" && o.DB != DBMariaDB:
		errs.Add("mysql", "a MySQL DSN is for db %s, and the db is %s (accepted: db %s with mysql, or no mysql)", DBMariaDB, o.dbKind(), DBMariaDB)
	case o.DB == DBMariaDB && o.MySQLDSN == "" && o.hasAddrs():
		errs.Add("mysql", "empty, and db %s needs the app user's DSN (accepted: a go-sql-driver DSN, such as app:pw@tcp(127.0.0.1:3306)/herdbench)", DBMariaDB)
	}
	return errs
}

// dbKind is o's database, the default when empty.
func (o Options) dbKind() string {
	if o.DB == "" {
		return DBPostgres
	}
	return o.DB
}

// hasAddrs says whether o names any of its servers.
func (o Options) hasAddrs() bool {
	return o.RedisAddr != "" || o.MemcachedAddr != "" || o.PostgresDSN != ""
}

// CacheProblems are the knobs of c that o's cache cannot honour, each
// naming why and what to use instead: none under Redis. Memcached has no
// pub/sub, so write_invalidate refresh (a broadcast every replica
// reloads from) has no channel; write_strategy queue keeps its writes in
// a Redis stream, which a replica on Memcached has only when RedisAddr
// names a Redis beside it (checked once the addresses are set: the local
// testbed gives its replicas the Redis it runs); and
// memcached reads a TTL over 30 days as a Unix time, so longer ones are
// refused rather than sent. The replicas check it at start and on every
// PUT /admin/config.
func (o Options) CacheProblems(c Config) herd.FieldErrors {
	var errs herd.FieldErrors
	if o.Cache != CacheMemcached {
		return nil
	}
	if c.WriteInvalidate == InvalidateRefresh {
		errs.Add("write_invalidate", "refresh broadcasts the written items on Redis pub/sub, which Memcached lacks (accepted with --cache memcached: %s, %s; or --cache redis)",
			InvalidateNone, InvalidateDelete)
	}
	if c.WriteStrategy == WriteQueue && o.MemcachedAddr != "" && o.RedisAddr == "" {
		errs.Add("write_strategy", "queue keeps the writes in a Redis stream, and this replica on Memcached has no Redis (accepted: %s, %s; or --redis beside --memcached for the stream)",
			WriteDirect, WriteCoalesce)
	}
	for _, t := range memcachedTTLs(c) {
		if t.ttl > MaxMemcachedTTL {
			errs.Add(t.field, "%s is too long for Memcached, which reads an expiry past 30 days as a Unix time (accepted with --cache memcached: up to %s, ttl with its ttl_jitter; shorter ones are rounded up to whole seconds)", t.ttl, MaxMemcachedTTL)
		}
	}
	return errs
}

// memcachedTTLs are the TTLs of c that reach Memcached as expiries, at
// their longest (ttl with the most ttl_jitter adds).
func memcachedTTLs(c Config) []struct {
	field string
	ttl   time.Duration
} {
	jitter := KnobsOf[TTLJitterKnobs](c).Fraction
	return []struct {
		field string
		ttl   time.Duration
	}{
		{"ttl", time.Duration(float64(c.TTL) * (1 + max(jitter, 0)))},
		{"stale_ttl", time.Duration(c.StaleTTL)},
		{"lock_ttl", time.Duration(KnobsOf[LockKnobs](c).TTL)},
		{"lease_interval", time.Duration(KnobsOf[LeaseKnobs](c).Interval)},
	}
}
