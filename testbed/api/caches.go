package api

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/herdbench/herdbench/testbed/replica"
)

// Cache is the store the replicas keep items in, shared by the fleet:
// Redis (cache_redis.go) or Memcached (cache_memcached.go), as
// replica.Options.Cache says. The read path and the sets (cache.go), the fill
// (fill.go), the claims of lock, lease and swr, and write_invalidate's
// delete use it and nothing else of the store. What only Redis has stays
// on Server.rdb: the pub/sub of broadcast invalidations (notify.go) and
// the stream of write_strategy queue (writes.go); replica.Options.CacheProblems
// refuses the configs that need them where there is none.
type Cache interface {
	// Get reads key; ok is false when it holds nothing.
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Set stores every entry for its TTL, in as few round trips as the
	// store allows: a miss's two keys, or a fill's batch.
	Set(ctx context.Context, entries ...CacheEntry) error
	// Add stores value under key for ttl unless key holds something: a
	// claim (a lock, a lease). ok: it was stored.
	Add(ctx context.Context, key, value string, ttl time.Duration) (ok bool, err error)
	// DeleteIfEqual deletes key if it still holds value, in one atomic
	// step: a holder releases its own claim, never the next holder's.
	DeleteIfEqual(ctx context.Context, key, value string) error
	// SetIfHeld stores entries only while c.Key holds c.Token: the
	// lease's compare-and-set. ok: they were stored.
	SetIfHeld(ctx context.Context, c Claim, entries ...CacheEntry) (ok bool, err error)
	// Delete removes keys; a key that holds nothing is no error.
	Delete(ctx context.Context, keys ...string) error
	// Flush empties the store: an experiment's start state before its
	// fill.
	Flush(ctx context.Context) error
	// Ping checks the store answers.
	Ping(ctx context.Context) error
	Close() error
}

// CacheEntry is one key to store, its value and how long it lives.
type CacheEntry struct {
	Key   string
	Value []byte
	TTL   time.Duration
}

// Claim is a lock's or a lease's key, the token its holder stored there
// with Add, and when the claim ends (Add's ttl from when it was taken).
type Claim struct {
	Key, Token string
	Expires    time.Time
}

// CacheOptions say which store to reach and how.
type CacheOptions struct {
	Kind    string        // CacheRedis or CacheMemcached
	Addr    string        // host:port
	Pool    int           // connections kept (Redis: its pool; Memcached: idle connections)
	Timeout time.Duration // dial, read and write timeout of one command
}

// NewCache is a client of the store o names, for callers beside the
// replicas that flush or read it (an experiment's fill, a test).
// Connections open lazily, so it succeeds while the store is down.
func NewCache(o CacheOptions) (Cache, error) {
	switch o.Kind {
	case replica.CacheRedis, "":
		return &redisCache{rdb: newRedisClient(o)}, nil
	case replica.CacheMemcached:
		return newMemcachedCache(o), nil
	}
	return nil, fmt.Errorf("cache %q (accepted: %s)", o.Kind, strings.Join(replica.Caches, ", "))
}
