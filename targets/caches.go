package targets

import (
	"strings"

	"github.com/herdbench/herdbench/stores/postgres"
	"github.com/herdbench/herdbench/stores/redis"
	"github.com/herdbench/herdbench/triggers"
)

// Caches are the target's caches as triggers act on them, in the order
// they act: its Redis (the keys its pattern lets them touch, all of it
// when herdbench started it) or its Memcached, then the HTTP cache in
// front of it. Before Connect their clients are nil: enough for a dry
// run's plan, which contacts nothing.
func (t *Target) Caches() []triggers.Cache {
	var caches []triggers.Cache
	if r := t.redisCache(); r != nil {
		caches = append(caches, r)
	}
	if m := t.memcachedItems(); m != nil {
		caches = append(caches, m)
	}
	if h := t.httpCache(); h != nil {
		caches = append(caches, h)
	}
	return caches
}

// redisCache is the target's Redis as triggers touch it, nil when it
// declares none: on a testbed that caches in Memcached, the Redis kept for
// the write queue has no key or channel a trigger touches, but flush
// empties it still, as herdbench started it.
func (t *Target) redisCache() *redis.Cache {
	declared := t.file != nil && t.file.Redis != nil
	if t.Redis == nil && !declared && t.RedisKey == "" && t.Pattern == "" && t.Channel == "" && !t.Grants.Caps.FlushDB {
		return nil
	}
	r := &redis.Cache{Client: t.Redis, Pattern: t.Pattern, FlushDB: t.Grants.Caps.FlushDB, Channel: t.Channel}
	if tmpl := t.RedisKey; tmpl != "" {
		r.Key = func(key string) string { return strings.ReplaceAll(tmpl, "{key}", key) }
	}
	return r
}

// Conns is the target's database as conndrop resets its connections
// without toxiproxy: its MySQL user's, else its Postgres role's; nil when
// it declares neither.
func (t *Target) Conns() triggers.ConnKiller {
	if m := t.mysqlConns(); m != nil {
		return m
	}
	if t.Role != "" {
		return &postgres.Conns{DB: t.DB, Role: t.Role}
	}
	return nil
}
